"""Adding, editing and deleting sources of every kind in the console."""

from __future__ import annotations

import io
import json

import pytest

from assistant.models import Project
from assistant.wiring import runtime
from ingestion.models import Chunk, Document, Source, SupportAnswer, SyncRun
from ingestion.services import document_upsert
from ingestion.uploads import source_files
from tests.ingestion.conftest import store  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(db):  # noqa: ANN001, ANN201
    return Project.objects.create(name="Docs site")


@pytest.fixture
def uploads(settings, tmp_path):  # noqa: ANN001, ANN201
    settings.DATA_DIR = tmp_path
    return tmp_path


def _field_block(html: str, field: str) -> str:
    return html.split(f'for="id_{field}"', 1)[1].split('<div class="field', 1)[0]


def test_adding_a_website_source_stores_its_config(staff_client, project, allow_loopback):
    response = staff_client.post(
        f"/admin/sources/new/website/?project={project.pk}",
        {"name": "Docs", "start_url": "http://127.0.0.1:9/docs/", "schedule": "weekly",
         "max_pages": "50"},
    )  # fmt: skip
    source = Source.objects.get(project=project, name="Docs")
    assert response["Location"] == f"/admin/sources/{source.pk}/?after=0"  # its sync is queued
    assert (source.kind, source.schedule) == ("website", "weekly")
    assert source.config == {"start_url": "http://127.0.0.1:9/docs/", "max_pages": 50,
                             "include": [], "exclude": []}  # fmt: skip


def test_a_website_source_keeps_its_path_patterns(staff_client, project, allow_loopback):
    page = staff_client.get(f"/admin/sources/new/website/?project={project.pk}").content.decode()
    assert "*/genindex*\n*/search.html" in page  # the defaults, prefilled
    staff_client.post(
        f"/admin/sources/new/website/?project={project.pk}",
        {"name": "Docs", "start_url": "http://127.0.0.1:9/docs/", "schedule": "off",
         "max_pages": "50", "include": "/docs/guide/*\n\n  /docs/faq.html ",
         "exclude": "*/genindex*"},
    )  # fmt: skip
    source = Source.objects.get(project=project, name="Docs")
    assert source.config["include"] == ["/docs/guide/*", "/docs/faq.html"]
    assert source.config["exclude"] == ["*/genindex*"]
    edit = staff_client.get(f"/admin/sources/{source.pk}/edit/").content.decode()
    assert "/docs/guide/*\n/docs/faq.html</textarea>" in edit


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"name": "FAQ"}, "name", "already has a source with that name"),
        ({"name": "   "}, "name", "This field is required."),
        ({"start_url": "ftp://x.example/"}, "start_url", "Enter an http or https URL."),
        ({"start_url": ""}, "start_url", "This field is required."),
        ({"max_pages": "0"}, "max_pages", "greater than or equal to 1"),
        ({"schedule": "yearly"}, "schedule", "Select a valid choice."),
    ],
)
def test_a_bad_website_source_shows_the_error_next_to_the_field_and_adds_nothing(
    staff_client, project, changes, field, message
):
    Source.objects.create(project=project, kind="manual", name="FAQ", config={"text": "Hi"})
    data = {"name": "Docs", "start_url": "https://docs.example/", "schedule": "off",
            "max_pages": "10", **changes}  # fmt: skip
    response = staff_client.post(f"/admin/sources/new/website/?project={project.pk}", data)
    assert response.status_code == 200
    assert message in _field_block(response.content.decode(), field)
    assert Source.objects.filter(project=project).count() == 1


INTERNAL_URLS = [
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://10.0.0.1/docs/",
    "http://[::1]:8000/docs/",
    "http://0.0.0.0:8000/docs/",
    "http://127.0.0.1:5432/",  # PostgreSQL
    "http://localhost:6379/",  # Redis
    "http://[::]:8000/docs/",
    "http://[::ffff:127.0.0.1]:8000/docs/",  # IPv4-mapped
    "http://[64:ff9b::7f00:1]/docs/",  # NAT64 of 127.0.0.1
    "http://[2002:7f00:1::]/docs/",  # 6to4 of 127.0.0.1
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",  # Teredo, client 127.0.0.1
]


@pytest.mark.parametrize("url", INTERNAL_URLS)
def test_a_start_url_at_an_internal_address_is_refused_with_a_clear_error(
    staff_client, project, url
):
    data = {"name": "Docs", "start_url": url, "schedule": "off", "max_pages": "10"}
    response = staff_client.post(f"/admin/sources/new/website/?project={project.pk}", data)
    assert response.status_code == 200
    error = _field_block(response.content.decode(), "start_url")
    assert "not reachable from the server" in error and "non-public address" in error
    assert "ASKDOCS_ALLOWED_PRIVATE_HOSTS" in error
    assert not Source.objects.filter(project=project).exists()


@pytest.mark.parametrize(
    ("url", "already", "value"),
    [
        ("http://localhost:8000/docs/", [], "127.0.0.1,localhost"),
        ("http://127.0.0.1:8000/", ["wiki.internal"], "wiki.internal,127.0.0.1,localhost"),
        ("http://10.1.2.3/docs/", [], "10.1.2.3"),
    ],
)
def test_a_refused_local_site_says_the_setting_and_value_that_admit_it(
    staff_client, project, settings, url, already, value
):
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = already
    data = {"name": "Docs", "start_url": url, "schedule": "off", "max_pages": "10"}
    response = staff_client.post(f"/admin/sources/new/website/?project={project.pk}", data)
    error = _field_block(response.content.decode(), "start_url")
    assert f"<code>ASKDOCS_ALLOWED_PRIVATE_HOSTS={value}</code>" in error
    assert "restart" in error and "(allow it with" not in error
    assert 'href="/docs/sources/#docs-on-this-machine-or-inside-your-network"' in error


def test_the_rules_limits_are_said_before_submitting_and_after(staff_client, project):
    form = staff_client.get(f"/admin/sources/new/website/?project={project.pk}").content.decode()
    for field in ("include", "exclude"):
        assert "At most 50 patterns of 200 characters." in _field_block(form, field)
    data = {"name": "Docs", "start_url": "https://docs.example.com/", "schedule": "off",
            "max_pages": "10", "include": "\n".join(f"/p{n}/*" for n in range(51))}  # fmt: skip
    response = staff_client.post(f"/admin/sources/new/website/?project={project.pk}", data)
    error = _field_block(response.content.decode(), "include")
    assert "This list has 51, the longest of 6." in error


def test_an_unknown_kind_is_404(staff_client, project):
    assert staff_client.get(f"/admin/sources/new/ftp/?project={project.pk}").status_code == 404


def test_a_manual_source_is_created_and_its_text_edited(staff_client, project):
    staff_client.post(
        f"/admin/sources/new/manual/?project={project.pk}",
        {"name": "Notes", "schedule": "off", "title": "Opening hours", "text": "# Hours\n9-5"},
    )
    source = Source.objects.get(project=project, name="Notes")
    assert source.config == {"title": "Opening hours", "text": "# Hours\n9-5"}
    form = staff_client.get(f"/admin/sources/{source.pk}/edit/").content.decode()
    assert "9-5</textarea>" in form
    response = staff_client.post(
        f"/admin/sources/{source.pk}/edit/",
        {"name": "Notes", "schedule": "daily", "title": "Opening hours", "text": "# Hours\n8-6"},
    )
    assert response.status_code == 302
    source.refresh_from_db()
    assert (source.schedule, source.config["text"]) == ("daily", "# Hours\n8-6")


def test_a_bad_edit_shows_the_error_and_changes_nothing(staff_client, project):
    source = Source.objects.create(
        project=project, kind="manual", name="Notes", config={"title": "", "text": "Hello"}
    )
    Source.objects.create(project=project, kind="manual", name="Taken", config={"text": "x"})
    response = staff_client.post(
        f"/admin/sources/{source.pk}/edit/",
        {"name": "Taken", "schedule": "off", "title": "", "text": "Changed"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "already has a source with that name" in _field_block(html, "name")
    assert "<h1>Edit Notes</h1>" in html  # the stored name, not the rejected one
    source.refresh_from_db()
    assert (source.name, source.config["text"]) == ("Notes", "Hello")


def test_a_files_source_stores_uploads_and_can_remove_them(staff_client, project, uploads):
    first, second = io.BytesIO(b"# A\ntext"), io.BytesIO(b"plain")
    first.name, second.name = "guide.md", "notes.txt"
    response = staff_client.post(
        f"/admin/sources/new/files/?project={project.pk}",
        {"name": "Manuals", "schedule": "off", "files": [first, second]},
    )
    source = Source.objects.get(project=project, name="Manuals")
    assert response.status_code == 302
    assert source_files(source=source) == ["guide.md", "notes.txt"]
    response = staff_client.post(
        f"/admin/sources/{source.pk}/edit/",
        {"name": "Manuals", "schedule": "off", "remove": ["notes.txt"]},
    )
    assert response.status_code == 302
    assert source_files(source=source) == ["guide.md"]


def test_a_files_source_rejects_an_unsupported_file_and_stores_nothing(
    staff_client, project, uploads
):
    bad = io.BytesIO(b"MZ...")
    bad.name = "setup.exe"
    response = staff_client.post(
        f"/admin/sources/new/files/?project={project.pk}",
        {"name": "Manuals", "schedule": "off", "files": [bad]},
    )
    assert "unsupported file type" in _field_block(response.content.decode(), "files")
    assert not Source.objects.filter(project=project).exists()
    assert not (uploads / "uploads").exists()


def test_a_support_source_imports_answers_from_a_file(staff_client, project):
    answers = io.BytesIO(
        json.dumps([{"id": "a1", "question": "Can I pay by invoice?", "answer": "Yes."}]).encode()
    )
    answers.name = "answers.json"
    response = staff_client.post(
        f"/admin/sources/new/support/?project={project.pk}",
        {"name": "Support", "schedule": "off", "provider": "import", "answers_file": answers},
    )
    assert response.status_code == 302
    source = Source.objects.get(project=project, name="Support")
    assert source.config["provider"] == "import"
    assert SupportAnswer.objects.filter(source=source).count() == 1


def test_a_bad_answers_file_rejects_the_whole_source(staff_client, project):
    answers = io.BytesIO(b'[{"id": "a1", "question": "Q?"}]')
    answers.name = "answers.json"
    response = staff_client.post(
        f"/admin/sources/new/support/?project={project.pk}",
        {"name": "Support", "schedule": "off", "provider": "import", "answers_file": answers},
    )
    assert "row 1: missing answer" in _field_block(response.content.decode(), "answers_file")
    assert not Source.objects.filter(project=project).exists()


def test_a_discord_source_needs_a_token_and_keeps_it_secret(staff_client, project):
    data = {"name": "Discord", "schedule": "hourly", "provider": "discord", "channel_id": "42"}
    response = staff_client.post(f"/admin/sources/new/support/?project={project.pk}", data)
    assert "This provider needs a token." in _field_block(response.content.decode(), "token")
    assert not Source.objects.filter(project=project).exists()
    staff_client.post(
        f"/admin/sources/new/support/?project={project.pk}", {**data, "token": "bot-secret"}
    )
    source = Source.objects.get(name="Discord")
    assert source.config["token"] == "bot-secret"
    form = staff_client.get(f"/admin/sources/{source.pk}/edit/").content.decode()
    assert "bot-secret" not in form
    # An empty token on edit keeps the stored one.
    staff_client.post(f"/admin/sources/{source.pk}/edit/", {**data, "channel_id": "43"})
    source.refresh_from_db()
    assert source.config == {
        "provider": "discord", "channel_id": "43", "approved_reaction": "", "tag": "",
        "token": "bot-secret",
    }  # fmt: skip


def test_deleting_a_source_removes_its_documents_chunks_and_vectors(
    staff_client,
    project,
    store,  # noqa: F811
):
    source = Source.objects.create(project=project, kind="manual", name="Notes")
    document_upsert(
        source=source, external_id="manual", title="Hours", text="# Hours\nWe open at nine."
    )
    other = Source.objects.create(project=project, kind="manual", name="Other")
    document_upsert(source=other, external_id="manual", title="Kept", text="Stays indexed.")
    ids = set(Chunk.objects.filter(document__source=source).values_list("vector_id", flat=True))
    kept = set(Chunk.objects.filter(document__source=other).values_list("vector_id", flat=True))
    assert ids and ids <= runtime.chunk_store().ids()
    # A vector an interrupted sync left without a row goes too.
    store.upsert(["orphan-1"], [[0.1] * 384], [{"project_id": project.pk, "source_id": source.pk}])

    confirm = staff_client.get(f"/admin/sources/{source.pk}/delete/").content.decode()
    assert "1 document</strong>" in confirm
    response = staff_client.post(f"/admin/sources/{source.pk}/delete/")
    assert response["Location"] == f"/admin/sources/?project={project.pk}"
    assert not Source.objects.filter(pk=source.pk).exists()
    assert not Document.objects.filter(source_id=source.pk).exists()
    left = runtime.chunk_store().ids()
    assert not (ids | {"orphan-1"}) & left
    assert kept <= left


def test_a_source_being_synced_is_not_deleted(staff_client, project):
    source = Source.objects.create(project=project, kind="manual", name="Notes")
    SyncRun.objects.create(source=source, status="running")
    response = staff_client.post(f"/admin/sources/{source.pk}/delete/", follow=True)
    assert "A sync of this source is running" in response.content.decode()
    assert Source.objects.filter(pk=source.pk).exists()


def test_delete_is_refused_to_non_staff(reader_client, project):
    source = Source.objects.create(project=project, kind="manual", name="Notes")
    assert reader_client.post(f"/admin/sources/{source.pk}/delete/").status_code == 403
    assert Source.objects.filter(pk=source.pk).exists()
