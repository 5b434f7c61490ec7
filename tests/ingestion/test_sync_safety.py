"""A sync never silently wipes a source: when its origin lists nothing (a folder that is gone,
an unreadable export) or far fewer documents than are indexed, it removes nothing and says so,
until someone confirms. The demo help centre can be synced again like any source."""

from __future__ import annotations

import shutil

import pytest
from django.core.management import CommandError, call_command

from ingestion.connectors.files import source_folder
from ingestion.models import Document, Source, SyncRun
from ingestion.sync import source_sync
from ingestion.uploads import source_file_add
from tests.ingestion.conftest import retrieved

pytestmark = pytest.mark.django_db

PAGES = {
    f"page-{n}.md": f"# Page {n}\n\nThe pigeon loft number {n} opens at {n} o'clock.\n"
    for n in range(1, 5)
}


@pytest.fixture
def files_source(project, store) -> Source:  # noqa: ANN001
    source = Source.objects.create(project=project, name="Loft pages", kind=Source.Kind.FILES)
    for name, text in PAGES.items():
        source_file_add(source=source, name=name, data=text.encode())
    assert source_sync(source=source).status == SyncRun.Status.SUCCEEDED
    assert source.documents.count() == len(PAGES)
    return source


def test_a_sync_that_cannot_see_its_folder_removes_nothing(files_source, project):
    shutil.rmtree(source_folder(files_source))  # e.g. a worker with another data folder
    run = source_sync(source=files_source)
    assert run.status == SyncRun.Status.FAILED and run.removals_held
    assert run.removed == 0 and "listed 0 document(s) where 4 are indexed" in run.message
    assert files_source.documents.count() == len(PAGES)
    assert any("loft number 3" in text for text in retrieved(project, "pigeon loft 3"))


def test_removing_most_of_a_source_needs_a_confirmation(files_source):
    folder = source_folder(files_source)
    for name in list(PAGES)[:3]:
        (folder / name).unlink()
    held = source_sync(source=files_source)
    assert held.removals_held and files_source.documents.count() == 4
    confirmed = source_sync(source=files_source, confirm_removals=True)
    assert confirmed.status == SyncRun.Status.SUCCEEDED and confirmed.removed == 3
    assert list(files_source.documents.values_list("external_id", flat=True)) == ["page-4.md"]


def test_removing_a_few_documents_needs_no_confirmation(files_source):
    (source_folder(files_source) / "page-2.md").unlink()
    run = source_sync(source=files_source)
    assert run.status == SyncRun.Status.SUCCEEDED and run.removed == 1
    assert not Document.objects.filter(source=files_source, external_id="page-2.md").exists()


def test_the_command_refuses_then_removes_with_confirm_removals(files_source):
    shutil.rmtree(source_folder(files_source))
    with pytest.raises(CommandError):
        call_command("sync_source", str(files_source.pk))
    assert files_source.documents.count() == len(PAGES)
    call_command("sync_source", str(files_source.pk), "--confirm-removals")
    assert files_source.documents.count() == 0


def test_the_demo_help_centre_can_be_synced_again(demo):  # noqa: ANN001
    source = Source.objects.get(project=demo, name="Acme help centre")
    before = set(source.documents.values_list("external_id", "title", "url"))
    run = source_sync(source=source, trigger="console")
    assert run.status == SyncRun.Status.SUCCEEDED
    assert (run.seen, run.removed, run.added) == (len(before), 0, 0)
    assert set(source.documents.values_list("external_id", "title", "url")) == before
