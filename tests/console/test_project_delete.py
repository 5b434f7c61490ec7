"""Deleting a project in the console: a confirmation page that says what goes, then a POST
that removes its sources with their vectors, its log, votes and remembered facts."""

from __future__ import annotations

import pytest

from assistant.memory.models import UserFact
from assistant.models import Interaction, Project
from feedback.models import Feedback
from ingestion.models import Chunk, Source, SyncRun
from ingestion.sync import source_sync
from tests.ingestion.conftest import store  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def doomed(db, store):  # noqa: ANN001, ANN201, F811
    project = Project.objects.create(name="Doomed")
    source = Source.objects.create(
        project=project, kind="manual", name="FAQ",
        config={"title": "FAQ", "text": "Refunds take five days.\n\nShipping is free."},
    )  # fmt: skip
    source_sync(source=source)
    asked = Interaction.objects.create(
        project=project, channel="widget", question="How long?", retrieval_query="q"
    )
    Feedback.objects.create(interaction=asked, client_id="c-1", vote=1)
    UserFact.objects.create(project=project, user_key="visitor:1", text="I am on the Team plan")
    return project


def test_the_confirmation_page_says_what_goes_and_deletes_nothing(staff_client, doomed):
    html = staff_client.get(f"/admin/projects/{doomed.pk}/delete/").content.decode()
    assert "Delete Doomed?" in html
    assert "<strong>1 source</strong>" in html and "<strong>1 document</strong>" in html
    assert "<strong>1 logged question</strong>" in html and "1 remembered fact" in html
    assert Project.objects.filter(pk=doomed.pk).exists()


def test_posting_deletes_the_project_with_its_vectors_log_and_facts(staff_client, doomed, store):  # noqa: F811
    vectors = set(Chunk.objects.filter(document__source__project=doomed).values_list(
        "vector_id", flat=True))  # fmt: skip
    assert vectors and vectors <= store.ids({"project_id": doomed.pk})
    response = staff_client.post(f"/admin/projects/{doomed.pk}/delete/")
    assert response.status_code == 302 and response["Location"] == "/admin/projects/"
    assert not Project.objects.filter(pk=doomed.pk).exists()
    assert not Source.objects.filter(project_id=doomed.pk).exists()
    assert not Interaction.objects.filter(project_id=doomed.pk).exists()
    assert not Feedback.objects.exists() and not UserFact.objects.exists()
    assert not store.ids({"project_id": doomed.pk})
    page = staff_client.get("/admin/projects/").content.decode()
    assert "Deleted project Doomed" in page


def test_a_project_with_a_sync_running_is_kept(staff_client, doomed):
    source = doomed.sources.get()
    SyncRun.objects.create(source=source, status="running")  # reporting just now: alive
    response = staff_client.post(f"/admin/projects/{doomed.pk}/delete/", follow=True)
    assert "is syncing; delete the project when it has finished" in response.content.decode()
    assert Project.objects.filter(pk=doomed.pk).exists() and source.documents.exists()


def test_only_staff_may_delete_and_only_by_post(reader_client, doomed):
    assert reader_client.post(f"/admin/projects/{doomed.pk}/delete/").status_code == 403
    assert Project.objects.filter(pk=doomed.pk).exists()


def test_the_project_page_links_the_delete_page_the_django_admin_and_copy_buttons(
    staff_client, doomed
):
    html = staff_client.get(f"/admin/projects/{doomed.pk}/").content.decode()
    assert f'href="/admin/projects/{doomed.pk}/delete/"' in html
    assert "/django-admin/auth/user/" in html
    assert f"/django-admin/assistant/userfact/?project__id__exact={doomed.pk}" in html
    assert f"/django-admin/assistant/smsconversation/?project__id__exact={doomed.pk}" in html
    assert f'data-copy="{doomed.public_key}"' in html and 'data-copy-from="#snippet"' in html
    assert 'data-topic=""' not in html
