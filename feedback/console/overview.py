"""The console's landing page: how a project is doing this week, at a glance, with the way
to each page that says more."""

from __future__ import annotations

from datetime import timedelta

from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from feedback import selectors
from feedback.conversations import conversation_list, conversation_rows
from feedback.curated import loop_counts
from ingestion.selectors import sources_overview

OVERVIEW_DAYS = 7
LATEST_CONVERSATIONS = 5


@require_GET
@staff_required
def overview(request: HtmxHttpRequest) -> HttpResponse:
    context = console_context(request, "overview")
    project = context["project"]
    if project is not None:
        since = timezone.now() - timedelta(days=OVERVIEW_DAYS)
        days = selectors.relevance_by_day(project=project, since=since)
        thumbs = selectors.thumbs_by_day(project=project, since=since)
        questions = sum(d.questions for d in days)
        votes = sum(t.total for t in thumbs)
        latest = list(conversation_list(project=project)[:LATEST_CONVERSATIONS])
        sources = sources_overview(project=project)
        context.update(
            days=OVERVIEW_DAYS,
            questions=questions,
            answered_share=sum(d.questions - d.refused for d in days) / questions
            if questions
            else None,
            refused=sum(d.refused for d in days),
            votes=votes,
            up_rate=sum(t.up for t in thumbs) / votes if votes else None,
            sources=sources,
            failed_sources=[s.name for s in sources if s.status == "failed"],
            conversations=conversation_rows(project=project, groups=latest),
            loop=loop_counts(project=project),
        )
    return TemplateResponse(request, "console/overview.html", context)
