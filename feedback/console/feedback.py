"""Console pages over readers' votes: rates, the filterable list, the CSV export."""

from __future__ import annotations

import csv
from datetime import timedelta

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from assistant.served_streams import served_iterator
from feedback import selectors
from feedback.charts import bar_chart
from feedback.conversations import sources_seen
from feedback.forms import FeedbackFilterForm

PAGE_SIZE = 25
RATE_DAYS = 30


class _Echo:
    def write(self, value: str) -> str:
        return value


@require_GET
@staff_required
def feedback_page(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "feedback")
    project = context["project"]
    form = FeedbackFilterForm(request.GET or None)
    context["form"] = form
    if project is not None and (not form.is_bound or form.is_valid()):
        filters = form.filters() if form.is_bound else {}
        rows = selectors.feedback_list(project=project, **filters)
        page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
        since = timezone.now() - timedelta(days=RATE_DAYS)
        by_day = selectors.thumbs_by_day(project=project, since=since)
        votes = sum(t.total for t in by_day)
        query = request.GET.copy()
        query.pop("page", None)
        context.update(
            page=page,
            rows=[
                (
                    vote,
                    sources_seen(
                        answer=vote.interaction.answer,
                        sources=vote.interaction.sources,
                        refused=vote.interaction.refused,
                    ),
                )
                for vote in page
            ],  # fmt: skip
            query=query.urlencode(),
            by_topic=selectors.thumbs_by_topic(project=project, since=since)[:20],
            rate_chart=bar_chart([(t.key, t.up_rate) for t in by_day], top=1, percent=True),
            votes=votes,
            up_rate=sum(t.up for t in by_day) / votes if votes else 0.0,
            rate_days=RATE_DAYS,
        )
    template = "console/_feedback_body.html" if request.htmx else "console/feedback.html"
    return TemplateResponse(request, template, context)


@require_GET
@staff_required
def feedback_export(request: HttpRequest) -> HttpResponseBase:
    context = console_context(request, "feedback")
    project = context["project"]
    form = FeedbackFilterForm(request.GET or None)
    if project is None or (form.is_bound and not form.is_valid()):
        context["form"] = form
        return TemplateResponse(request, "console/feedback.html", context, status=400)
    rows = selectors.feedback_list(project=project, **(form.filters() if form.is_bound else {}))
    writer = csv.writer(_Echo())
    lines = (writer.writerow(line) for line in selectors.feedback_csv_rows(rows))
    response = StreamingHttpResponse(
        served_iterator(request, lines),
        content_type="text/csv; charset=utf-8",
    )
    stamp = timezone.localdate().isoformat()
    response["Content-Disposition"] = f'attachment; filename="feedback-{project.pk}-{stamp}.csv"'
    return response
