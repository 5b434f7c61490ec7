"""Console pages for sources: status, adding a website, "Sync now", live progress and run
history. Other kinds, editing and deleting stay in Django admin (/django-admin/) for now."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from assistant.console.access import console_context, staff_required
from ingestion.console_forms import WebsiteSourceForm
from ingestion.console_services import website_source_create
from ingestion.dispatch import sync_enqueue
from ingestion.models import Source, SyncRun
from ingestion.selectors import SCHEDULE_INTERVALS

RUNS_SHOWN = 10


def _with_next_sync(source: Source) -> Source:
    interval = SCHEDULE_INTERVALS.get(Source.Schedule(source.schedule))
    source.next_sync = (  # type: ignore[attr-defined]
        source.last_run + interval if interval and source.last_run else None
    )
    return source


@require_http_methods(["GET", "POST"])
@staff_required
def source_list(request: HttpRequest) -> HttpResponse:
    context = console_context(request, "sources")
    project = context["project"]
    form = WebsiteSourceForm(request.POST or None, project=project)
    if request.method == "POST" and project is not None and form.is_valid():
        source = website_source_create(project=project, **form.cleaned_data)
        messages.success(request, f"Added “{source.name}”. Sync it to read its pages.")
        return redirect("console-source", pk=source.pk)
    context["form"] = form
    rows = (
        Source.objects.filter(project=project)
        .annotate(
            documents_count=Count("documents", distinct=True), last_run=Max("runs__started_at")
        )
        .order_by("name")
        if project
        else Source.objects.none()
    )
    context["sources"] = [_with_next_sync(s) for s in rows]
    return TemplateResponse(request, "console/sources.html", context)


@require_GET
@staff_required
def source_detail(request: HttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source.objects.select_related("project"), pk=pk)
    context = console_context(request, "sources")
    runs = list(source.runs.all()[:RUNS_SHOWN])
    # After "Sync now" the run row appears only once a worker picks the sync up: keep polling
    # until a run newer than the one we knew of shows up, then while it runs.
    after = request.GET.get("after", "")
    queued = after.isdigit() and (not runs or runs[0].pk <= int(after))
    running = bool(runs) and runs[0].status == SyncRun.Status.RUNNING
    context.update(
        source=source, project=source.project, runs=runs, queued=queued,
        polling=queued or running, after=after,
    )  # fmt: skip
    template = "console/_source_runs.html" if request.htmx else "console/source.html"
    return TemplateResponse(request, template, context)


@require_POST
@staff_required
def source_sync_now(request: HttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source, pk=pk)
    latest = source.runs.order_by("-id").values_list("id", flat=True).first() or 0
    sync_enqueue(source=source, trigger="console")
    messages.success(request, f"Sync of “{source.name}” queued.")
    return redirect(f"{reverse('console-source', args=[source.pk])}?after={latest}")
