"""Console pages over the interaction log: relevance metrics, blind spots, the threshold
tuner."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from assistant.console_shell.access import (
    HtmxHttpRequest,
    chosen_project,
    console_context,
    staff_required,
)
from assistant.models import Project
from feedback import selectors, services
from feedback.blind_spots import blind_spots as blind_spots_report
from feedback.charts import bar_chart
from feedback.content_similarity import OFF_TOPIC_SIMILARITY
from feedback.forms import BlindSpotForm, BlindSpotMarkForm, PeriodForm
from feedback.tuner import MIN_VOTES, advised_threshold, threshold_replay


def _with_default_period(request: HtmxHttpRequest) -> QueryDict:
    """The filters as sent, with the 30-day period when none is (so the select shows it)."""
    data = request.GET.copy()
    data.setdefault("days", "30")
    return data


DAYS_PER_PAGE = 31
TOPICS_PER_PAGE = 15


def _query_without(request: HtmxHttpRequest, name: str) -> str:
    query = request.GET.copy()
    query.pop(name, None)
    return query.urlencode()


def _page(request: HtmxHttpRequest, full: str, partial: str, context: dict) -> HttpResponse:
    return TemplateResponse(request, partial if request.htmx else full, context)


@require_GET
@staff_required
def metrics(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "metrics")
    project = context["project"]
    form = PeriodForm(_with_default_period(request))
    context["form"] = form
    if project is not None and form.is_valid():
        data = form.cleaned_data
        days, topic = data["days"], data["topic"] or None
        since = timezone.now() - timedelta(days=days)
        by_day = selectors.relevance_by_day(project=project, since=since, topic=topic)
        histogram, unscored = selectors.best_relevance_histogram(
            project=project, since=since, topic=topic
        )
        total = sum(d.questions for d in by_day)
        by_topic = selectors.relevance_by_topic(project=project, since=since)
        context.update(
            day_page=Paginator(by_day[::-1], DAYS_PER_PAGE).get_page(request.GET.get("day_page")),
            day_query=_query_without(request, "day_page"),
            topic_page=Paginator(by_topic, TOPICS_PER_PAGE).get_page(request.GET.get("topic_page")),
            topic_query=_query_without(request, "topic_page"),
            days=days,
            topic=topic,
            by_day=by_day,
            total=total,
            found_share=sum(d.found for d in by_day) / total if total else 0,
            refusal_rate=sum(d.refused for d in by_day) / total if total else 0,
            unscored=unscored,
            found_chart=bar_chart(
                [(d.day.strftime("%b %d"), d.found_share) for d in by_day], top=1, percent=True
            ),
            refused_chart=bar_chart(
                [(d.day.strftime("%b %d"), d.refusal_rate) for d in by_day], top=1, percent=True
            ),
            latency_chart=bar_chart([(d.day.strftime("%b %d"), d.avg_ms or 0) for d in by_day]),
            histogram_chart=bar_chart(
                [(f"{i / 10:.1f}", n) for i, n in enumerate(histogram)], max_labels=10
            ),
        )
    return _page(request, "console/metrics.html", "console/_metrics_body.html", context)


@require_GET
@staff_required
def blind_spots(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "blind-spots")
    project = context["project"]
    form = BlindSpotForm(_with_default_period(request))
    context["form"] = form
    if project is not None and form.is_valid():
        data = form.cleaned_data
        below = project.threshold if data["below"] is None else data["below"]
        since = timezone.now() - timedelta(days=data["days"])
        context.update(
            below=below,
            days=data["days"],
            report=blind_spots_report(project=project, since=since, below=below),
            disliked=selectors.disliked_answers(project=project, since=since),
            back=request.get_full_path(),
            off_topic_similarity=OFF_TOPIC_SIMILARITY,
        )
    return _page(request, "console/blind_spots.html", "console/_blind_spots_body.html", context)


@require_POST
@staff_required
def blind_spot_mark(request: HtmxHttpRequest) -> HttpResponse:
    """Dismiss or resolve a cluster; back to the page it was marked on."""
    project = chosen_project(request)
    form = BlindSpotMarkForm(request.POST)
    if project is None or not form.is_valid():
        return HttpResponseBadRequest("This blind spot could not be marked: reload the page.")
    data = form.cleaned_data
    mark = services.blind_spot_mark(
        project=project, topic=data["topic"], question=data["question"], texts=data["text"],
        state=data["state"], user_id=request.user.pk,
    )  # fmt: skip
    messages.success(request, f"“{mark.question}” {mark.get_state_display().lower()}.")
    return _back(request, project)


@require_POST
@staff_required
def blind_spot_unmark(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    project = chosen_project(request)
    if project is None or not services.blind_spot_unmark(project=project, mark_id=pk):
        raise Http404("No such mark.")
    messages.success(request, "The blind spot is listed again.")
    return _back(request, project)


def _back(request: HtmxHttpRequest, project: Project) -> HttpResponse:
    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        return redirect(back)
    return redirect(f"{reverse('console-blind-spots')}?project={project.pk}")


@require_GET
@staff_required
def tuner(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "tuner")
    project = context["project"]
    form = PeriodForm(_with_default_period(request))
    context["form"] = form
    if project is not None and form.is_valid():
        data = form.cleaned_data
        replays = threshold_replay(
            project=project,
            since=timezone.now() - timedelta(days=data["days"]),
            topic=data["topic"] or None,
        )
        context.update(
            replays=replays,
            advice=advised_threshold(replays, current=project.threshold),
            min_votes=MIN_VOTES,
            days=data["days"],
            answered_chart=bar_chart(
                [(f"{r.threshold:.1f}", r.answered_share) for r in replays], top=1, percent=True
            ),
            agreement_chart=bar_chart(
                [(f"{r.threshold:.1f}", r.agreement or 0) for r in replays if r.enough_votes],
                top=1,
                percent=True,
            ),
        )
    return _page(request, "console/tuner.html", "console/_tuner_body.html", context)
