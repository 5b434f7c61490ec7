"""Console pages for projects: settings, the public key and the widget snippet."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from assistant.console.access import HtmxHttpRequest, console_context, staff_required
from assistant.console.project_forms import ProjectForm
from assistant.console.project_services import project_key_rotate
from assistant.models import Project


@require_GET
@staff_required
def project_list(request: HttpRequest) -> HttpResponse:
    context = console_context(request, "projects")
    return TemplateResponse(request, "console/projects.html", context)


@require_http_methods(["GET", "POST"])
@staff_required
def project_detail(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    context = console_context(request, "projects")
    context["project"] = project
    if request.method == "POST":
        form = ProjectForm(request.POST, instance=project)
        if form.is_valid():
            form.save()
            messages.success(request, "Project saved.")
            return redirect("console-project", pk=project.pk)
        # ModelForm validation wrote the bad values onto the instance; show the stored ones.
        project.refresh_from_db()
    else:
        form = ProjectForm(instance=project)
    context["form"] = form
    return TemplateResponse(request, "console/project.html", context)


@require_POST
@staff_required
def project_rotate(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    project_key_rotate(project=project)
    if request.htmx:
        return TemplateResponse(request, "console/_project_key.html", {"project": project})
    messages.success(request, "New public key issued. Update the snippet on your pages.")
    return redirect("console-project", pk=project.pk)
