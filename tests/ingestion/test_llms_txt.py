"""llms.txt and llms-full.txt of a project, generated from its indexed documents: the demo help
centre as indexed, its documents' Markdown put back together from their chunks."""

from __future__ import annotations

import pytest

from assistant.demo import DOCS_DIR
from assistant.rag.chunking.pieces import chunk_markdown
from ingestion.llms_txt import document_markdown
from ingestion.models import Document

pytestmark = pytest.mark.django_db

SECTION = "\n\n".join(
    f"Paragraph {n} says one thing. It then says a second thing about topic {n}." for n in range(12)
)
LONG = f"## Setup\n\n{SECTION}\n\n### On Linux\n\n{SECTION}\n\n## Usage\n\n{SECTION}"


def words(text: str) -> int:
    return len(text.split())


def test_a_documents_markdown_comes_back_whole_from_overlapping_chunks():
    pieces = chunk_markdown(LONG, count_tokens=words, max_tokens=60, overlap_tokens=20)
    assert len(pieces) > 6  # several pieces per section, each starting with an overlap
    assert sum(p.text.startswith("It then says") for p in pieces) > 3

    rebuilt = document_markdown((p.heading_path, p.text) for p in pieces)

    assert rebuilt == LONG  # heading levels by depth: the same as written here


def test_it_is_not_found_until_the_project_publishes_it(client, demo):
    assert client.get("/p/demo/llms.txt").status_code == 404
    assert client.get("/p/demo/llms-full.txt").status_code == 404

    demo.llms_txt_enabled = True
    demo.save()

    assert client.get("/p/demo/llms.txt").status_code == 200
    assert client.get(f"/p/{demo.public_key}/llms-full.txt").status_code == 200
    assert client.get("/p/no-such-project/llms.txt").status_code == 404
    assert client.post("/p/demo/llms.txt").status_code == 405


def test_llms_txt_lists_each_document_of_each_source_with_its_link(client, demo):
    demo.llms_txt_enabled = True
    demo.save()

    response = client.get("/p/demo/llms.txt")

    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Cache-Control"] == "public, max-age=300"
    lines = response.content.decode().splitlines()
    assert lines[0] == "# Demo" and lines[1] == ""
    assert lines[2].startswith("> The documentation of Demo that its Ask AI assistant answers")
    documents = Document.objects.filter(source__project=demo).count()
    assert f"{documents} documents in 1 source" in lines[2]
    assert lines[2].endswith("http://testserver/p/demo/llms-full.txt")
    assert lines[4] == "## Acme help centre"
    links = [line for line in lines if line.startswith("- [")]
    assert len(links) == len(list(DOCS_DIR.glob("*.md")))
    assert (
        "- [API keys](https://help.acme.example/api-keys): "
        "API keys authenticate your servers with the Acme API."
    ) in links


def test_llms_full_txt_holds_each_documents_markdown(client, demo):
    demo.llms_txt_enabled = True
    demo.save()

    full = client.get("/p/demo/llms-full.txt").content.decode()

    for path in sorted(DOCS_DIR.glob("*.md")):
        title, body = path.read_text(encoding="utf-8").split("\n", 1)
        expected = f"{title}\n\nSource: https://help.acme.example/{path.stem}\n\n{body.strip()}"
        assert expected in full, path.name


def test_llms_full_txt_is_built_once_per_index_version(client, project, store):  # noqa: ANN001
    """It was rebuilt from the chunk table on every request (~9 MB for 5,000 documents). A
    chunk row changed behind the index's back shows which copy is served: the cached one,
    until the index is written to."""
    from assistant.models import Project
    from ingestion.index import index_written
    from ingestion.models import Chunk, Source
    from ingestion.services import document_upsert

    Project.objects.filter(pk=project.pk).update(llms_txt_enabled=True)
    source = Source.objects.create(project=project, kind="manual", name="Notes")
    document_upsert(source=source, external_id="a", title="Refunds", text="Refunds take 5 days.")
    url = f"/p/{project.public_key}/llms-full.txt"

    first = client.get(url).content.decode()
    Chunk.objects.filter(document__source=source).update(text="Refunds take 9 days.")
    second = client.get(url).content.decode()
    index_written(project_id=project.pk)
    third = client.get(url).content.decode()

    assert "Refunds take 5 days." in first and second == first
    assert "Refunds take 9 days." in third


def test_it_counts_against_the_clients_retrieval_rate_limit(client, demo, settings):
    settings.ASKDOCS_RATE_RETRIEVE_PER_CLIENT = "2/h"  # per hour: a minute may roll over
    demo.llms_txt_enabled = True
    demo.save()

    statuses = [client.get(f"/p/demo/{name}").status_code for name in ("llms.txt",) * 2]
    refused = client.get("/p/demo/llms-full.txt")

    assert statuses == [200, 200]
    assert refused.status_code == 429 and b"Too many" in refused.content


def test_probing_for_published_projects_is_counted_too(client, demo, settings):
    settings.ASKDOCS_RATE_RETRIEVE_PER_CLIENT = "2/h"
    demo.llms_txt_enabled = True
    demo.save()

    probes = [client.get(f"/p/{name}/llms.txt").status_code for name in ("nope-1", "nope-2")]
    after = client.get("/p/demo/llms.txt")

    assert probes == [404, 404]
    assert after.status_code == 429
