"""Console pages for projects: creation, settings, the keys and the widget snippet."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.templatetags.static import static
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from assistant.console.generator_notes import generator_notes
from assistant.console.privacy_summary import privacy_summary
from assistant.console.project_forms import ProjectCreateForm, ProjectForm, WidgetPreviewForm
from assistant.console.project_services import (
    project_counts,
    project_create,
    project_delete,
    project_key_rotate,
    project_secret_rotate,
    secret_shown_once,
    secret_to_show_once,
)
from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from assistant.models import Project
from ingestion.console.services import SourceBusy


def _projects_page(request: HttpRequest, form: ProjectCreateForm) -> TemplateResponse:
    context = console_context(request, "projects")
    context["new_form"] = form
    return TemplateResponse(request, "console/projects.html", context)


@require_GET
@staff_required
def project_list(request: HttpRequest) -> HttpResponse:
    return _projects_page(request, ProjectCreateForm())


@require_http_methods(["GET", "POST"])
@staff_required
def project_new(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":  # a bookmarked or typed address: the form is on the list
        return redirect(reverse("console-projects") + "#new-project")
    form = ProjectCreateForm(request.POST)
    if not form.is_valid():
        return _projects_page(request, form)
    project, secret = project_create(
        name=form.cleaned_data["name"], allowed_origins=form.cleaned_data["allowed_origins"]
    )
    secret_to_show_once(session=request.session, project=project, secret=secret)
    messages.success(request, f"Project {project.name} created.")
    return redirect("console-project", pk=project.pk)


def _secret_context(request: HttpRequest, project: Project) -> dict[str, Any]:
    return {
        "project": project,
        "secret_key": secret_shown_once(session=request.session, project=project),
    }


@require_http_methods(["GET", "POST"])
@sensitive_post_parameters("openai_api_key")
@staff_required
def project_detail(request: HttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    context = console_context(request, "projects")
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
    context.update(_secret_context(request, project))
    context["form"] = form
    context["generator_notes"] = generator_notes(project)
    context["privacy"] = privacy_summary(project=project)
    # A project without documents refuses every question: its page says what to do first.
    context["has_sources"] = project.sources.exists()
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


@require_POST
@staff_required
def project_rotate_secret(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=pk)
    secret = project_secret_rotate(project=project)
    secret_to_show_once(session=request.session, project=project, secret=secret)
    if request.htmx:
        return TemplateResponse(
            request, "console/_project_secret.html", _secret_context(request, project)
        )
    messages.success(request, "New secret key issued. Update it on your servers.")
    return redirect("console-project", pk=project.pk)


@require_http_methods(["GET", "POST"])
@staff_required
def project_remove(request: HttpRequest, pk: int) -> HttpResponse:
    """GET asks for confirmation (what will go); POST deletes."""
    project = get_object_or_404(Project, pk=pk)
    if request.method == "POST":
        name = project.name
        try:
            project_delete(project=project)
        except SourceBusy as error:
            messages.error(request, str(error))
            return redirect("console-project", pk=pk)
        messages.success(request, f"Deleted project {name} and everything it held.")
        return redirect(reverse("console-projects"))
    context = console_context(request, "projects")
    context.update(project=project, counts=project_counts(project=project))
    return TemplateResponse(request, "console/project_delete.html", context)


@require_GET
@staff_required
def project_preview(request: HttpRequest, pk: int) -> HttpResponse:
    """The widget on this page with the chosen look, and the script tag that makes it."""
    project = get_object_or_404(Project, pk=pk)
    form = WidgetPreviewForm(request.GET or WidgetPreviewForm.DEFAULTS)
    attributes = form.attributes() if form.is_valid() else []
    here = f"{request.scheme}://{request.get_host()}"
    context = console_context(request, "projects")
    context.update(
        project=project,
        form=form,
        attributes=attributes,
        widget_url=here + static("widget/widget.js"),
        snippet=format_html(
            '<script src="{}" data-project="{}"{} async></script>',
            here + static("widget/widget.js"),
            project.public_key,
            format_html_join("", ' {}="{}"', attributes),
        ),
        origin_allowed=project.allows_origin(here),
        here=here,
    )
    return TemplateResponse(request, "console/project_preview.html", context)
