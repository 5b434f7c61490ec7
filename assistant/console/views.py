"""Console pages of the assistant app: the overview and the RAG sandbox."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from assistant.console.forms import SandboxForm
from assistant.console.sandbox import sandbox_run
from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required


@require_GET
@staff_required
def console_home(request: HttpRequest) -> HttpResponse:
    """A login lands here: on the overview of the project."""
    return redirect("console-overview")


@require_GET
@staff_required
def sandbox(request: HtmxHttpRequest) -> HttpResponse:
    """GET so that a blind spot can link straight to a filled-in sandbox; nothing is
    written (the run is not logged)."""
    context = console_context(request, "sandbox")
    project = context["project"]
    if "question" in request.GET:
        form = SandboxForm(request.GET)
        if form.is_valid() and project is not None:
            threshold = form.cleaned_data["threshold"]
            context["run"] = sandbox_run(
                project=project,
                question=form.cleaned_data["question"],
                topic=form.cleaned_data["topic"],
                threshold=project.threshold if threshold is None else threshold,
                # htmx means JavaScript: the answer streams in. Without it, it is written here.
                stream=bool(request.htmx),
                previous=form.cleaned_data["previous"],
            )
    else:
        initial = {"threshold": project.threshold} if project else {}
        form = SandboxForm(initial=initial)
    context["form"] = form
    template = "console/_sandbox_result.html" if request.htmx else "console/sandbox.html"
    return TemplateResponse(request, template, context)
