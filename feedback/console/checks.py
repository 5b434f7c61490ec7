"""Console pages for conversations kept as checks: keep one from a transcript turn, list a
project's checks, run them all with live progress (htmx polls the run), and show which checks
a threshold under consideration would break (the tuner and the project settings load it)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from assistant.models import Project
from assistant.wiring import background
from feedback.checks import CheckInvalid, check_create, check_from_answer, checks_broken_by
from feedback.forms import AnswerCheckForm
from feedback.models import AnswerCheck, CheckRun
from feedback.tasks import check_run_task


@require_GET
@staff_required
def checks_page(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "checks")
    project = context["project"]
    if project is not None:
        context.update(_body(project))
    template = "console/_checks_body.html" if request.htmx else "console/checks.html"
    return TemplateResponse(request, template, context)


def _body(project: Project) -> dict[str, object]:
    checks = list(AnswerCheck.objects.filter(project=project))
    return {
        "checks": checks,
        "run": CheckRun.objects.filter(project=project).first(),
        "failing": sum(1 for c in checks if c.passed is False),
    }


@require_POST
@staff_required
def checks_run(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "checks")
    project = context["project"]
    if project is None:
        raise Http404("No project yet.")
    running = CheckRun.objects.filter(project=project, finished_at__isnull=True).first()
    if running is None:
        run = CheckRun.objects.create(project=project, started_by=_staff(request))
        background.enqueue(check_run_task, run.pk)
    return HttpResponseRedirect(f"{reverse('console-checks')}?project={project.pk}")


@require_http_methods(["GET", "POST"])
@staff_required
def check_new(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "checks")
    project = context["project"]
    if project is None:
        raise Http404("No project yet.")
    answer_id = request.GET.get("answer") or request.POST.get("from_answer") or ""
    origin = check_from_answer(project=project, answer_id=answer_id) if answer_id else None
    if request.method == "POST":
        form = AnswerCheckForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                check_create(
                    project=project, question=data["question"], topic=data["topic"],
                    history=data["history"], expect=data["expect"], cites=data["cites"],
                    facts=data["facts"], from_answer_id=data["from_answer"],
                    created_by=request.user,
                )  # fmt: skip
            except CheckInvalid as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, "Kept as a check.")
                return HttpResponseRedirect(f"{reverse('console-checks')}?project={project.pk}")
    else:
        initial = {"from_answer": answer_id}
        if origin:
            initial.update({k: origin[k] for k in ("question", "topic", "expect", "cites")})
            initial["history"] = origin["history"]
        form = AnswerCheckForm(initial=initial)
    context.update(form=form, origin=origin)
    return TemplateResponse(request, "console/check_form.html", context)


@require_POST
@staff_required
def check_delete(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    check = get_object_or_404(AnswerCheck, pk=pk)
    check.delete()
    messages.success(request, "Check removed.")
    return HttpResponseRedirect(f"{reverse('console-checks')}?project={check.project_id}")


@require_GET
@staff_required
def checks_threshold(request: HtmxHttpRequest) -> HttpResponse:
    """The checks a threshold would break: a partial for the tuner and the project settings."""
    context = console_context(request, "checks")
    project = context["project"]
    try:
        threshold = float(request.GET.get("threshold", ""))
    except ValueError:
        threshold = -1.0
    if project is None or not 0.0 <= threshold <= 1.0:
        return HttpResponse(status=204)
    context.update(
        threshold=threshold,
        count=AnswerCheck.objects.filter(project=project).count(),
        broken=checks_broken_by(project=project, threshold=threshold),
    )
    return TemplateResponse(request, "console/_checks_threshold.html", context)


def _staff(request: HtmxHttpRequest) -> Any:
    return request.user if request.user.is_authenticated else None
