"""`source_sync`: read a source through its connector and make the index match it.

A run is idempotent and restartable: documents are written in batches by
`documents_upsert` (vectors first, then rows, then stale vectors), and documents are removed
only once the connector has read the whole source. A run killed at any point leaves the
index consistent enough for the next run to finish the job; `check_index` repairs the rest.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from ingestion.connectors import connector_for
from ingestion.connectors.base import (
    ConnectorError,
    Cut,
    Failed,
    Fetched,
    Gone,
    Skipped,
    Total,
    Unchanged,
)
from ingestion.index import index_written
from ingestion.models import Document, Source, SyncRun
from ingestion.services import IncomingDocument, document_delete, documents_upsert

logger = logging.getLogger(__name__)

BATCH_SIZE = 16
# A slow crawl also writes what it has every so often, so its progress bar moves.
FLUSH_EVERY_SECONDS = 1.0
MAX_RECORDED_ERRORS = 200
#: Documents listed per kind of change in a run's report (the counts are always whole).
MAX_RECORDED_CHANGES = 100
# A run that has not reported for this long is taken for dead (worker killed).
STALE_AFTER = timedelta(minutes=10)

ProgressCallback = Callable[[SyncRun], None]


#: A sync may remove at most this share of a source's documents without a confirmation.
REMOVAL_SHARE_WITHOUT_CONFIRMATION = 0.5
REMOVALS_HELD = "Nothing was removed"


class RemovalsHeld(ConnectorError):
    """The origin lists far fewer documents than are indexed: most likely it could not be read
    (a missing folder, a site that is down, an empty export), so nothing is removed until
    someone confirms."""

    def __init__(self, *, removing: int, indexed: int, seen: int) -> None:
        super().__init__(
            f"{REMOVALS_HELD}: the source listed {seen} document(s) where {indexed} are "
            f"indexed, so this sync would remove {removing}. Check that the source can be read "
            "(its folder, site or export); if those documents really are gone, sync again and "
            "confirm the removals."
        )


class SyncAlreadyRunning(Exception):
    pass


INTERRUPTED_MESSAGE = "The worker stopped before this run finished."


def sync_run_start(*, source: Source, trigger: str) -> SyncRun:
    """Open a run, unless a live one exists for this source (a duplicate task delivery)."""
    with transaction.atomic():
        Source.objects.select_for_update().filter(pk=source.pk).first()
        if _settle(source):
            raise SyncAlreadyRunning(f"{source} is already being synced")
        run = SyncRun.objects.create(source=source, trigger=trigger, worker=_worker())
        Source.objects.filter(pk=source.pk).update(status=Source.Status.SYNCING)
    return run


def runs_settle(*, source: Source) -> bool:
    """Mark the source's runs whose worker is gone as interrupted (the one definition of a
    dead run, used by the sync itself, the console and deleting a source); True while a live
    run remains."""
    with transaction.atomic():
        Source.objects.select_for_update().filter(pk=source.pk).first()
        return _settle(source)


def _settle(source: Source) -> bool:
    now = timezone.now()
    running = list(SyncRun.objects.filter(source=source, status=SyncRun.Status.RUNNING))
    dead = [run.pk for run in running if not _alive(run, now)]
    if dead:
        SyncRun.objects.filter(pk__in=dead).update(
            status=SyncRun.Status.INTERRUPTED, finished_at=now, message=INTERRUPTED_MESSAGE
        )
        if len(dead) == len(running):
            Source.objects.filter(pk=source.pk, status=Source.Status.SYNCING).update(
                status=Source.Status.FAILED, last_error=INTERRUPTED_MESSAGE
            )
        # A killed run may have changed chunks after its last cache invalidation.
        index_written(project_id=source.project_id)
    return len(dead) < len(running)


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(run: SyncRun, now: datetime) -> bool:
    """A run is alive while it reports, unless its process is known to be gone."""
    if run.heartbeat_at < now - STALE_AFTER:
        return False
    host, _, pid = run.worker.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    return True


def source_sync(
    *,
    source: Source,
    trigger: str = "manual",
    on_progress: ProgressCallback | None = None,
    confirm_removals: bool = False,
) -> SyncRun:
    """Sync a source from its origin. Documents the origin no longer lists are removed, but a
    sync that would remove every document, or more than half of them, stops with nothing
    removed (RemovalsHeld) unless `confirm_removals`."""
    run = sync_run_start(source=source, trigger=trigger)
    try:
        _sync(source, run, on_progress or (lambda _run: None), confirm_removals)
    except ConnectorError as error:
        _finish(run, SyncRun.Status.FAILED, str(error))
    except Exception as error:
        logger.exception("Sync of source %s failed", source.pk)
        _finish(run, SyncRun.Status.FAILED, f"{type(error).__name__}: {error}")
    else:
        status = SyncRun.Status.PARTIAL if run.failed else SyncRun.Status.SUCCEEDED
        message = f"{run.failed} item(s) could not be read; see errors." if run.failed else ""
        if (run.seen or run.skipped) and not Document.objects.filter(source=source).exists():
            status, message = SyncRun.Status.FAILED, _nothing_indexed(run)
        _finish(run, status, message)
    if on_progress:
        on_progress(run)
    return run


def _nothing_indexed(run: SyncRun) -> str:
    """Why a run that read its source left it empty: not a success, whatever it saw."""
    said = [f"{run.skipped} skipped"] if run.skipped else []
    said += [f"{run.failed} could not be read"] if run.failed else []
    said += [f"{run.removed} removed"] if run.removed else []
    first = next(iter(run.changes.get("skipped") or run.errors or []), None)
    why = ""
    if first is not None:
        reason = first.get("reason") or first.get("error") or ""
        why = f" First: {first.get('url') or 'the source'}, {reason}."
        if "pattern" in reason:
            why += " Edit the source's paths to read or skip."
    return (
        f"Nothing was indexed: the source holds no document ({', '.join(said) or 'none read'})."
        + why
    )


def _sync(
    source: Source, run: SyncRun, on_progress: ProgressCallback, confirm_removals: bool
) -> None:
    keep: set[str] = set()
    cut = False
    batch: list[IncomingDocument] = []
    last_flush = time.monotonic()

    def flush() -> None:
        nonlocal last_flush
        last_flush = time.monotonic()
        if not batch:
            return
        for result in documents_upsert(source=source, documents=batch):
            setattr(run, result.status, getattr(run, result.status) + 1)
            if result.status != "unchanged":
                _record(run, result.status, result.document.title, result.document.url)
            run.chunks_embedded += result.embedded
            run.chunks_removed += result.removed
        run.done += len(batch)
        batch.clear()
        _save_progress(run)
        on_progress(run)

    for item in connector_for(source).read():
        if isinstance(item, Total):
            run.at_most = item.at_most
            if item.count > run.total:
                run.total = item.count
                _save_progress(run)  # a crawl's next level: the bar must not stand at 100%
            continue
        if isinstance(item, Cut):
            cut = True
            run.failed += 1
            run.errors.append({"url": "", "error": item.reason})
            continue
        if isinstance(item, Skipped):
            run.skipped += 1
            _record(run, "skipped", "", item.external_id, reason=item.reason)
            continue
        if isinstance(item, Fetched):
            run.seen += 1
            keep.add(item.document.external_id)
            batch.append(item.document)
            if len(batch) >= BATCH_SIZE or time.monotonic() - last_flush >= FLUSH_EVERY_SECONDS:
                flush()
            continue
        run.seen += 1
        run.done += 1
        if isinstance(item, Unchanged):
            keep.add(item.external_id)
            run.unchanged += 1
        elif isinstance(item, Gone):
            if not _remove(source, run, [item.external_id]) and item.reason:
                # Never indexed: a broken link, listed so that the pages seen add up.
                _record(run, "not found", "", item.external_id, reason=item.reason)
        elif isinstance(item, Failed):
            keep.add(item.external_id)
            run.failed += 1
            if len(run.errors) < MAX_RECORDED_ERRORS:
                run.errors.append({"url": item.external_id, "error": item.error})
    flush()
    run.total = max(run.total, run.done)
    if not cut:
        _remove_vanished(source, run, keep=keep, confirm_removals=confirm_removals)


def _remove_vanished(
    source: Source, run: SyncRun, *, keep: set[str], confirm_removals: bool
) -> None:
    """Everything not seen this time has disappeared from the source, unless the origin could
    not really be read (the caller then does not call this): removing would wipe answers that
    are still true. Removing most of a source, or all of it, waits for a confirmation."""
    vanished = list(
        Document.objects.filter(source=source)
        .exclude(external_id__in=keep)
        .values_list("external_id", flat=True)
    )
    indexed = Document.objects.filter(source=source).count()
    if (
        vanished
        and not confirm_removals
        and (not keep or len(vanished) > indexed * REMOVAL_SHARE_WITHOUT_CONFIRMATION)
    ):
        raise RemovalsHeld(removing=len(vanished), indexed=indexed, seen=len(keep))
    _remove(source, run, vanished)


def _remove(source: Source, run: SyncRun, external_ids: list[str]) -> int:
    """Removes the indexed documents of these ids; how many there were."""
    removed = 0
    for document in Document.objects.filter(source=source, external_id__in=external_ids):
        _record(run, "removed", document.title, document.url or document.external_id)
        run.chunks_removed += document_delete(document=document)
        run.removed += 1
        removed += 1
    return removed


def _record(run: SyncRun, change: str, title: str, url: str, **extra: str) -> None:
    listed = run.changes.setdefault(change, [])
    if len(listed) < MAX_RECORDED_CHANGES:
        listed.append({"title": title, "url": url, **extra} if title else {"url": url, **extra})


def _advance_bar(run: SyncRun) -> None:
    """The share done of the most there can be: of the total while it is the whole, of the
    connector's `at_most` while more may be found (a crawl, level by level, up to its page
    limit). So the bar never runs ahead of the work (17 of 195 pages found is not 70%), never
    goes back when a crawl finds more, and never says 100% before the run has finished."""
    whole = max(run.total, run.done, run.at_most or 0)
    share = int(100 * run.done / whole) if whole else 0
    run.shown_percent = min(99, max(run.shown_percent, share))


def _save_progress(run: SyncRun) -> None:
    run.heartbeat_at = timezone.now()
    _advance_bar(run)
    SyncRun.objects.filter(pk=run.pk).update(
        **{name: getattr(run, name) for name in _COUNTERS}, heartbeat_at=run.heartbeat_at
    )


_COUNTERS = (
    "seen",
    "added",
    "changed",
    "unchanged",
    "removed",
    "failed",
    "chunks_embedded",
    "chunks_removed",
    "done",
    "total",
    "errors",
    "skipped",
    "changes",
    "shown_percent",
)


def _finish(run: SyncRun, status: str, message: str) -> None:
    now = timezone.now()
    run.status, run.message, run.finished_at = status, message, now
    _save_progress(run)
    SyncRun.objects.filter(pk=run.pk).update(status=status, message=message, finished_at=now)
    source_status = Source.Status.FAILED if status == SyncRun.Status.FAILED else Source.Status.READY
    updates: dict[str, object] = {"status": source_status, "last_error": message}
    if status != SyncRun.Status.FAILED:
        updates["last_synced_at"] = now
    Source.objects.filter(pk=run.source_id).update(**updates)
