"""Console pages for sources: the list with status and counts, a source's page with "Sync now",
live progress and run history. Forms are in console_source_views, the document browser in
console_document_views."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assistant.console_shell.access import HtmxHttpRequest, console_context, staff_required
from ingestion.connectors.registry import console_cards
from ingestion.console.webhooks import webhook_context
from ingestion.dispatch import sync_enqueue
from ingestion.models import Source, SyncRun
from ingestion.selectors import next_sync_text, source_counts, sources_overview
from ingestion.sync import runs_settle

RUNS_SHOWN = 10


@require_GET
@staff_required
def source_list(request: HttpRequest) -> HttpResponse:
    context = console_context(request, "sources")
    project = context["project"]
    context["sources"] = sources_overview(project=project) if project else []
    context["kinds"] = console_cards()
    return TemplateResponse(request, "console/sources.html", context)


@require_GET
@staff_required
def source_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source.objects.select_related("project"), pk=pk)
    context = console_context(request, "sources")
    runs_settle(source=source)  # a run whose worker died shows as interrupted, not running
    source.refresh_from_db()
    runs = list(source.runs.all()[:RUNS_SHOWN])
    # After "Sync now" the run row appears only once a worker picks the sync up: keep polling
    # until a run newer than the one we knew of shows up, then while it runs.
    after = request.GET.get("after", "")
    queued = after.isdigit() and (not runs or runs[0].pk <= int(after))
    running = bool(runs) and runs[0].status == SyncRun.Status.RUNNING
    context.update(
        source=source, project=source.project, runs=runs, queued=queued,
        polling=queued or running, after=after, counts=source_counts(source=source),
        next_sync=next_sync_text(source=source, last_run=runs[0].started_at if runs else None),
    )  # fmt: skip
    if not request.htmx:
        context["webhook"] = webhook_context(session=request.session, source=source)
    template = "console/_source_runs.html" if request.htmx else "console/source.html"
    return TemplateResponse(request, template, context)


@require_POST
@staff_required
def source_sync_now(request: HttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source, pk=pk)
    latest = source.runs.order_by("-id").values_list("id", flat=True).first() or 0
    confirm = request.POST.get("confirm_removals") == "1"
    sync_enqueue(source=source, trigger="console", confirm_removals=confirm)
    queued = "Sync (removals confirmed)" if confirm else "Sync"
    messages.success(request, f"{queued} of “{source.name}” queued.")
    return redirect(f"{reverse('console-source', args=[source.pk])}?after={latest}")
