"""Sources in the console: status, "Sync now", progress and run history."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import Project
from ingestion.connectors.registry import console_cards
from ingestion.models import Source, SyncRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def docs(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Docs site")
    source = Source.objects.create(
        project=project, kind="manual", name="FAQ", schedule="daily", status="ready",
        config={"title": "FAQ", "text": "Hello"}, last_synced_at=timezone.now(),
    )  # fmt: skip
    SyncRun.objects.create(
        source=source, status="partial", seen=3, added=2, failed=1,
        errors=[{"url": "https://docs.example/broken", "error": "HTTP 500"}],
        finished_at=timezone.now(),
    )  # fmt: skip
    return source


def test_the_list_shows_status_and_the_next_scheduled_sync(staff_client, docs):
    html = staff_client.get("/admin/sources/", {"project": docs.project_id}).content.decode()
    assert "FAQ" in html and "Ready" in html
    run = docs.runs.get()
    assert (run.started_at + timedelta(days=1)).strftime("%b %-d") in html


def test_the_source_page_shows_runs_with_their_errors(staff_client, docs):
    html = staff_client.get(f"/admin/sources/{docs.pk}/").content.decode()
    assert "Finished with errors" in html
    assert "https://docs.example/broken" in html and "HTTP 500" in html
    assert 'hx-trigger="every 1s"' not in html  # nothing running: no polling


def test_a_running_sync_polls_its_progress_and_htmx_gets_the_partial(staff_client, docs):
    SyncRun.objects.create(source=docs, status="running", done=3, total=12, shown_percent=25)
    html = staff_client.get(f"/admin/sources/{docs.pk}/").content.decode()
    assert 'hx-trigger="every 1s"' in html and 'aria-valuenow="25"' in html
    partial = staff_client.get(f"/admin/sources/{docs.pk}/", HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content and b'aria-valuenow="25"' in partial.content


def test_sync_now_queues_one_sync_after_commit(
    staff_client, docs, django_capture_on_commit_callbacks
):
    known = docs.runs.get()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = staff_client.post(f"/admin/sources/{docs.pk}/sync/")
    assert response.status_code == 302
    assert response["Location"] == f"/admin/sources/{docs.pk}/?after={known.pk}"
    assert len(callbacks) == 1
    # Until the worker creates the new run, the page says so and keeps polling.
    html = staff_client.get(response["Location"]).content.decode()
    assert "Sync queued, waiting for a worker" in html and 'hx-trigger="every 1s"' in html
    SyncRun.objects.create(source=docs, status="succeeded", finished_at=timezone.now())
    html = staff_client.get(response["Location"]).content.decode()
    assert "Sync queued" not in html and 'hx-trigger="every 1s"' not in html


def test_sync_now_is_refused_on_get(staff_client, docs):
    assert staff_client.get(f"/admin/sources/{docs.pk}/sync/").status_code == 405


def test_sync_now_is_refused_to_non_staff(reader_client, docs, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert reader_client.post(f"/admin/sources/{docs.pk}/sync/").status_code == 403
    assert callbacks == []


def test_the_list_shows_document_and_chunk_counts_and_links_to_add_each_kind(staff_client, docs):
    html = staff_client.get("/admin/sources/", {"project": docs.project_id}).content.decode()
    for kind in ("website", "files", "support", "manual"):
        assert f"/admin/sources/new/{kind}/?project={docs.project_id}" in html
    assert "<title>Sources · Ask AI</title>" in html


def test_the_add_grid_has_one_card_a_kind_in_the_tables_order(staff_client, docs):
    html = staff_client.get("/admin/sources/", {"project": docs.project_id}).content.decode()
    cards = re.findall(r'class="kind-card" href="/admin/sources/new/(\w+)/', html)
    assert cards == [row.kind for row in console_cards()]
    assert cards[:4] == ["website", "files", "support", "manual"]  # as before the table
    for row in console_cards():
        assert f'<strong>{row.label}</strong><span class="small muted">{row.card}</span>' in html
    new_curated = f"/admin/sources/new/curated/?project={docs.project_id}"
    assert staff_client.get(new_curated).status_code == 404  # made on the curated pages only


def test_each_source_says_when_it_will_be_synced_next(staff_client, docs):
    Source.objects.create(project=docs.project, kind="manual", name="New daily", schedule="daily",
                          config={"title": "T", "text": "x"})  # fmt: skip
    Source.objects.create(project=docs.project, kind="manual", name="By hand", schedule="off",
                          config={"title": "T", "text": "x"})  # fmt: skip
    html = staff_client.get("/admin/sources/", {"project": docs.project_id}).content.decode()
    cells = dict(re.findall(r'data-source="([^"]+)".*?data-next-sync>([^<]*)<', html, re.S))
    run = docs.runs.get()
    assert cells["New daily"] == "Within a minute, then daily"  # the scheduler's rule: due now
    assert cells["By hand"] == "Manual only: press Sync now"
    due = timezone.localtime(run.started_at + timedelta(days=1))
    assert cells["FAQ"] == f"In 23\xa0hours ({due:%b %-d, %H:%M}, daily)"
    # Overdue (the scheduler has not run for a while): within a minute again.
    SyncRun.objects.filter(pk=run.pk).update(started_at=timezone.now() - timedelta(days=2))
    html = staff_client.get(f"/admin/sources/{docs.pk}/").content.decode()
    assert re.search(r"data-next-sync>Within a minute, then daily<", html)


@pytest.mark.django_db(transaction=True)
def test_a_new_source_is_synced_at_once_and_its_page_follows_the_run(
    staff_client, docs, tasks_here
):
    response = staff_client.post(
        f"/admin/sources/new/manual/?project={docs.project_id}",
        {"name": "Hours", "schedule": "weekly", "title": "Opening hours", "text": "9 to 5."},
        follow=True,
    )
    html = response.content.decode()
    assert "Added “Hours”. Its first sync is under way." in html
    source = Source.objects.get(name="Hours")
    # The page polls its runs section until the run shows up and while it runs.
    assert response.redirect_chain[-1][0] == f"/admin/sources/{source.pk}/?after=0"
    assert 'hx-trigger="every 1s"' in html
    deadline = time.monotonic() + 60  # the sync runs on the background thread, not by schedule
    while time.monotonic() < deadline and not source.runs.filter(status="succeeded").exists():
        time.sleep(0.2)
    run = source.runs.get()
    assert (run.status, run.trigger, run.added) == ("succeeded", "created", 1)
    polled = staff_client.get(
        f"/admin/sources/{source.pk}/?after=0", headers={"HX-Request": "true"}
    ).content.decode()
    assert 'data-run-status="succeeded"' in polled and "every 1s" not in polled
    assert "Opening hours" in polled  # the run report names the document it added


@pytest.mark.django_db(transaction=True)
def test_a_changed_source_is_synced_at_once_and_a_rename_is_not(staff_client, docs, tasks_here):
    source = Source.objects.create(
        project=docs.project, kind="manual", name="Hours",
        config={"title": "Opening hours", "text": "9 to 5."},
    )  # fmt: skip
    staff_client.post(f"/admin/sources/{source.pk}/edit/",
                      {"name": "Hours and days", "schedule": "off", "title": "Opening hours",
                       "text": "9 to 5."})  # fmt: skip
    time.sleep(1)
    assert not source.runs.exists()
    staff_client.post(f"/admin/sources/{source.pk}/edit/",
                      {"name": "Hours and days", "schedule": "off", "title": "Opening hours",
                       "text": "9 to 6 on weekdays."})  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not source.runs.filter(status="succeeded").exists():
        time.sleep(0.2)
    assert source.runs.get().trigger == "edited"


def test_the_console_issues_a_token_only_for_an_import_source(staff_client, docs) -> None:  # noqa: ANN001
    discord = Source.objects.create(
        project=docs.project, kind=Source.Kind.SUPPORT, name="d", config={"provider": "discord"}
    )
    staff_client.post(f"/admin/sources/{discord.pk}/webhook-token/")
    discord.refresh_from_db()
    assert "webhook_token_sha256" not in discord.config
    assert b"Webhook token" not in staff_client.get(f"/admin/sources/{discord.pk}/").content


def test_the_bar_never_goes_back_when_a_crawl_finds_more_pages_and_sync_now_waits(
    staff_client, docs
):
    from ingestion.sync import _save_progress

    run = SyncRun.objects.create(source=docs, status="running", done=6, total=10)
    run.at_most = 100  # a crawl that may find up to 100 pages: 6 of them is 6%, not 60%
    _save_progress(run)
    html = staff_client.get(f"/admin/sources/{docs.pk}/").content.decode()
    assert 'aria-valuenow="6"' in html
    assert re.search(r'<button type="submit" disabled[^>]*>Syncing…</button>', html)
    run.total, run.at_most = 40, None  # the crawl's last level: 40 pages in all
    run.done = 30
    _save_progress(run)
    partial = staff_client.get(f"/admin/sources/{docs.pk}/", HTTP_HX_REQUEST="true")
    assert b'aria-valuenow="75"' in partial.content
    run.total = 50  # a whole that grew after all (a zip's entries): the bar holds, not 60
    _save_progress(run)
    assert SyncRun.objects.get(pk=run.pk).percent == 75
    assert b'id="sync-now"' in partial.content and b'hx-swap-oob="true"' in partial.content
    run.done = 50
    _save_progress(run)
    assert SyncRun.objects.get(pk=run.pk).percent == 99  # all known done, not finished

    SyncRun.objects.filter(pk=run.pk).update(status="succeeded")
    done = staff_client.get(f"/admin/sources/{docs.pk}/", HTTP_HX_REQUEST="true").content
    assert b">Sync now</button>" in done and b"disabled" not in done
    assert b'aria-valuenow="100"' in done
