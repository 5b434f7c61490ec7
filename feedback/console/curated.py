"""Console pages for curated answers: write one (from a transcript turn, a blind-spot cluster,
a thumbs-down or from scratch), list them with what they did, edit and retire them."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from feedback.curated import answer_to_write_from, curated_answers_of
from feedback.forms import CuratedAnswerForm
from ingestion.curated import CuratedAnswerInvalid, curated_answer_retire, curated_answer_save
from ingestion.models import CuratedAnswer


@require_GET
@staff_required
def curated_list(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "curated")
    project = context["project"]
    context["rows"] = curated_answers_of(project=project) if project else []
    return TemplateResponse(request, "console/curated.html", context)


@require_http_methods(["GET", "POST"])
@staff_required
def curated_write(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "curated")
    project = context["project"]
    if project is None:
        raise Http404("No project yet.")
    answer_id = request.GET.get("answer") or request.POST.get("from_answer") or ""
    origin = answer_to_write_from(project=project, answer_id=answer_id) if answer_id else None
    sections = origin["sections"] if origin else []
    if request.method == "POST":
        form = CuratedAnswerForm(request.POST, sections=sections)
        if form.is_valid():
            saved = _save(request, form, project=project, curated=None)
            if saved is not None:
                messages.success(request, "Saved: the assistant answers with it from now on.")
                return HttpResponseRedirect(f"{reverse('console-curated')}?project={project.pk}")
    else:
        asked = [q[:300] for q in request.GET.getlist("question")[:10]]
        question = origin["question"] if origin else "\n".join(asked)
        topic = origin["topic"] if origin else request.GET.get("topic", "")[:200]
        form = CuratedAnswerForm(
            initial={"phrasings": question, "topic": topic, "from_answer": answer_id},
            sections=sections,
        )
    context.update(form=form, origin=origin, curated=None)
    return TemplateResponse(request, "console/curated_form.html", context)


@require_http_methods(["GET", "POST"])
@staff_required
def curated_edit(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    curated = get_object_or_404(CuratedAnswer.objects.select_related("source__project"), pk=pk)
    project = curated.source.project
    context = console_context(request, "curated")
    context["project"] = project
    sections = list(curated.rests_on)
    if request.method == "POST":
        form = CuratedAnswerForm(request.POST, sections=sections)
        if form.is_valid() and _save(request, form, project=project, curated=curated):
            messages.success(request, "Saved.")
            return HttpResponseRedirect(f"{reverse('console-curated')}?project={project.pk}")
    else:
        form = CuratedAnswerForm(
            initial={
                "phrasings": "\n".join(curated.phrasings),
                "answer": curated.answer,
                "url": curated.url,
                "topic": curated.topic,
                "rests_on": [s["vector_id"] for s in sections],
            },
            sections=sections,
        )
    context.update(form=form, origin=None, curated=curated)
    return TemplateResponse(request, "console/curated_form.html", context)


@require_POST
@staff_required
def curated_retire(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    curated = get_object_or_404(CuratedAnswer.objects.select_related("source"), pk=pk)
    curated_answer_retire(curated=curated)
    messages.success(request, "Retired: the assistant no longer answers with it.")
    return HttpResponseRedirect(f"{reverse('console-curated')}?project={curated.source.project_id}")


def _save(
    request: HtmxHttpRequest, form: CuratedAnswerForm, *, project: Any, curated: Any
) -> CuratedAnswer | None:
    data = form.cleaned_data
    try:
        return curated_answer_save(
            project=project,
            phrasings=data["phrasings"],
            answer=data["answer"],
            url=data["url"],
            topic=data["topic"],
            rests_on=data["rests_on"],
            written_by=request.user,
            from_answer_id=data["from_answer"],
            curated=curated,
        )
    except CuratedAnswerInvalid as exc:
        form.add_error(None, str(exc))
        return None
