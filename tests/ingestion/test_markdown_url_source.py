"""Markdown-file sources: one file at an address, read as one document split at its headings;
a file that cannot be read stops the sync with nothing removed."""

from __future__ import annotations

import pytest

from assistant.models import Project
from ingestion.connectors.markdown_url import MarkdownUrlSourceForm
from ingestion.models import Document, Source, SyncRun
from ingestion.sync import source_sync
from tests.ingestion.conftest import retrieved

pytestmark = pytest.mark.django_db

LLMS_FULL = """# Acme Docs

## Refunds

Annual plans are refunded pro rata within 30 days of renewal.

## Exports

Exports are CSV files, at most 50,000 rows each.
"""


@pytest.fixture
def markdown(site, project) -> Source:  # noqa: ANN001
    site.write("/llms-full.txt", LLMS_FULL)
    return Source.objects.create(
        project=project, kind="markdown", name="Acme file",
        config={"url": f"{site.url}/llms-full.txt"},
    )  # fmt: skip


def test_it_indexes_the_file_as_one_document_named_by_its_top_heading(markdown, store, project):  # noqa: ANN001
    run = source_sync(source=markdown)
    assert (run.status, run.added) == (SyncRun.Status.SUCCEEDED, 1)
    document = Document.objects.get(source=markdown)
    assert (document.title, document.url) == ("Acme Docs", markdown.config["url"])
    assert document.chunks.count() >= 2  # split at its headings
    assert "pro rata" in retrieved(project, "How are annual plans refunded?")[0]


def test_a_missing_file_or_a_web_page_stops_the_sync_and_keeps_what_was_indexed(
    markdown,
    store,
    site,  # noqa: ANN001
):
    source_sync(source=markdown)
    site.remove("/llms-full.txt")
    run = source_sync(source=markdown)
    assert run.status == SyncRun.Status.FAILED and "HTTP 404" in run.message
    assert Document.objects.filter(source=markdown).count() == 1
    markdown.config["url"] = f"{site.url}/docs/billing.html"
    markdown.save()
    run = source_sync(source=markdown)
    assert run.status == SyncRun.Status.FAILED and "is a web page" in run.message


def test_the_form_stores_the_address_and_refuses_one_the_server_may_not_reach(project):  # noqa: ANN001
    form = MarkdownUrlSourceForm(
        {"name": "Acme", "schedule": "daily", "url": "https://docs.example/llms-full.txt"},
        project=project,
    )
    assert form.is_valid(), form.errors
    assert form.config() == {"url": "https://docs.example/llms-full.txt", "title": ""}
    inside = MarkdownUrlSourceForm(
        {"name": "Acme", "schedule": "daily", "url": "http://127.0.0.1:9/llms-full.txt"},
        project=Project.objects.create(name="Other"),
    )
    assert not inside.is_valid() and "not reachable" in inside.errors["url"][0]
