"""The document and chunk browser: which documents a source became and which chunks each
document became, in order."""

from __future__ import annotations

import pytest

from assistant.models import Project
from ingestion.models import Chunk, Document, Source
from ingestion.services import document_upsert
from tests.ingestion.conftest import store  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

GUIDE = """# Billing

## Refunds

Ask for a refund within 30 days of the charge.

## Invoices

Invoices are under Billing > Invoices.
"""


@pytest.fixture
def source(db, store):  # noqa: ANN001, ANN201, F811
    project = Project.objects.create(name="Docs site")
    source = Source.objects.create(project=project, kind="manual", name="Guide")
    document_upsert(source=source, external_id="guide", title="Billing guide", text=GUIDE,
                    url="https://docs.example/billing")  # fmt: skip
    for n in range(30):
        Document.objects.create(
            source=source, external_id=f"page-{n:02}", title=f"Page {n:02}", content_hash="x"
        )
    return source


def test_documents_are_listed_with_their_chunk_counts_and_paginated(staff_client, source):
    html = staff_client.get(f"/admin/sources/{source.pk}/documents/").content.decode()
    assert "31 documents" in html and "Billing guide" in html
    assert "Page 1 of 2" in html
    second = staff_client.get(f"/admin/sources/{source.pk}/documents/", {"page": 2})
    assert "Page 29" in second.content.decode()


def test_the_document_filter_matches_titles_and_htmx_gets_the_table_only(staff_client, source):
    response = staff_client.get(
        f"/admin/sources/{source.pk}/documents/", {"q": "billing"}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert "<html" not in html and 'id="documents"' in html
    assert "1 document " in html and "Billing guide" in html and "Page 00" not in html


def test_a_document_shows_its_chunks_in_order_with_their_text(staff_client, source):
    document = Document.objects.get(source=source, external_id="guide")
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    assert len(chunks) >= 2
    html = staff_client.get(f"/admin/documents/{document.pk}/").content.decode()
    positions = [html.index(f'data-ordinal="{c.ordinal}"') for c in chunks]
    assert positions == sorted(positions)
    assert "Ask for a refund within 30 days of the charge." in html
    assert "Invoices are under Billing &gt; Invoices." in html


def test_the_browser_is_for_staff_only(client, reader_client, source):
    document = Document.objects.get(source=source, external_id="guide")
    for url in (f"/admin/sources/{source.pk}/documents/", f"/admin/documents/{document.pk}/"):
        assert reader_client.get(url).status_code == 403
    client.logout()
    response = client.get(f"/admin/documents/{document.pk}/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_htmx_paging_of_chunks_gets_the_chunk_list_only(staff_client, source):
    document = Document.objects.get(source=source, external_id="guide")
    response = staff_client.get(f"/admin/documents/{document.pk}/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html and html.lstrip().startswith('<section id="chunks"')
