"""Only http and https links get into the database, and every page renders links through one
filter that drops any other scheme (a row written before the check, or by hand, stays inert)."""

from __future__ import annotations

import json

import pytest

from assistant.links import UnsafeUrl, http_url, safe_url
from ingestion.models import Document, Source, SupportAnswer
from ingestion.services import document_upsert
from ingestion.support_answers import ImportRejected, support_answers_import
from ingestion.sync import source_sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(db):  # noqa: ANN001, ANN201
    """A project of its own: vectors are not rolled back with the test (see tests/conftest)."""
    from assistant.models import Project

    return Project.objects.create(name="Links")


BAD = ["javascript:alert(1)", "JavaScript:alert(1)", " data:text/html,<script>x</script>",
       "vbscript:msgbox", "//evil.example/x", "https:no-host", "http://exa mple.com/",
       "http://exa\tmple.com/", "http://exa\nmple.com/", "https://docs.example:80x/",
       "http://bad!host.example/", "http://a..b.example/", "http://-a.example/",
       "http://[zz]/", "http://exa\x00mple.com/"]  # fmt: skip


@pytest.mark.parametrize("url", BAD)
def test_only_http_links_with_a_host_are_accepted(url):
    with pytest.raises(UnsafeUrl):
        http_url(url)
    assert safe_url(url) == ""


def test_http_links_and_no_link_pass():
    assert http_url(" https://docs.example/a#b ") == "https://docs.example/a#b"
    for url in [
        "http://[::1]:8000/",
        "http://localhost:8000/docs/",
        "https://bücher.example/",
        "http://wiki/page",
        "http://my_host.internal/",
        "https://docs.example./x",
        "https://docs.example/a page.html",
    ]:  # a crawled path may hold a space
        assert http_url(url) == url
    assert http_url("") == "" and safe_url(None) == ""


def test_an_import_with_a_javascript_link_is_refused_naming_the_row(project):
    source = Source.objects.create(project=project, name="Imported", kind=Source.Kind.SUPPORT)
    rows = [
        {
            "id": "1",
            "question": "Refunds?",
            "answer": "Within 30 days.",
            "url": "https://a.example",
        },
        {"id": "2", "question": "Hi?", "answer": "Hello.", "url": "javascript:alert(1)"},
    ]
    with pytest.raises(ImportRejected, match="row 2: only http and https"):
        support_answers_import(source=source, data=json.dumps(rows).encode(), filename="a.json")
    assert not SupportAnswer.objects.filter(source=source).exists()  # nothing half-imported


def test_a_jsonl_line_with_a_data_link_is_reported_and_the_others_indexed(project, tmp_path):
    export = tmp_path / "corpus.jsonl"
    export.write_text(
        json.dumps({"id": "ok", "title": "Ok", "text": "Fine text.", "url": "https://x.example"})
        + "\n"
        + json.dumps({"id": "bad", "title": "Bad", "text": "Trap.", "url": "data:text/html,x"})
        + "\n"
    )
    source = Source.objects.create(
        project=project, name="Corpus", kind=Source.Kind.FILES, config={"jsonl": str(export)}
    )
    run = source_sync(source=source)
    assert run.failed == 1 and "only http and https" in run.errors[0]["error"]
    assert list(source.documents.values_list("external_id", flat=True)) == ["ok"]


def test_a_document_with_a_javascript_link_is_never_stored(project):
    source = Source.objects.create(project=project, name="Direct", kind=Source.Kind.FILES)
    with pytest.raises(UnsafeUrl):
        document_upsert(source=source, external_id="x", title="X", text="Text.", url="javascript:x")
    assert not source.documents.exists()


def test_pages_render_a_stored_javascript_link_inert(project, client, django_user_model):
    source = Source.objects.create(project=project, name="Legacy", kind=Source.Kind.FILES)
    document_upsert(source=source, external_id="l", title="Legacy", text="Old text here.")
    Document.objects.filter(source=source).update(url="javascript:alert(1)")
    document = Document.objects.get(source=source)
    client.force_login(django_user_model.objects.create_user("ada", is_staff=True))
    for path in (f"/admin/documents/{document.pk}/", f"/admin/sources/{source.pk}/documents/"):
        html = client.get(path).content.decode()
        assert "javascript:" not in html.replace("Legacy", ""), path
