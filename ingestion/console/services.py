"""Writes behind the console's source pages: create, edit and delete a source of any kind."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from typing import Any

from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from assistant.models import Project
from assistant.wiring import runtime
from ingestion.connectors.files import source_folder
from ingestion.dispatch import sync_enqueue
from ingestion.models import Chunk, Source
from ingestion.support_answers import AnswerInput, support_answer_save
from ingestion.sync import runs_settle
from ingestion.uploads import source_file_add, source_file_remove

logger = logging.getLogger(__name__)


class SourceBusy(Exception):
    """The source is being synced; deleting it now would race the sync's writes."""


@transaction.atomic
def source_create(
    *,
    project: Project,
    kind: str,
    name: str,
    schedule: str,
    config: dict[str, Any],
    files: Sequence[UploadedFile] = (),
    answers: Sequence[AnswerInput] = (),
) -> Source:
    """A new source is synced at once (after the commit), whatever its schedule."""
    source = Source.objects.create(
        project=project, kind=kind, name=name, schedule=schedule, config=config
    )
    _store_inputs(source, files=files, answers=answers)
    sync_enqueue(source=source, trigger="created")
    return source


@transaction.atomic
def source_update(
    *,
    source: Source,
    name: str,
    schedule: str,
    config: dict[str, Any],
    files: Sequence[UploadedFile] = (),
    remove_files: Sequence[str] = (),
    answers: Sequence[AnswerInput] = (),
) -> bool:
    """Save the source; new or removed files, imported answers or other settings are synced
    at once (True), a new name or schedule needs no sync (False)."""
    resync = bool(files or remove_files or answers) or config != source.config
    source.name, source.schedule, source.config = name, schedule, config
    source.save(update_fields=["name", "schedule", "config"])
    for stored in remove_files:
        source_file_remove(source=source, name=stored)
    _store_inputs(source, files=files, answers=answers)
    if resync:
        sync_enqueue(source=source, trigger="edited")
    return resync


def _store_inputs(
    source: Source, *, files: Sequence[UploadedFile], answers: Sequence[AnswerInput]
) -> None:
    for upload in files:
        source_file_add(source=source, name=upload.name or "", data=upload.read())
    for answer in answers:
        support_answer_save(source=source, answer=answer)


def source_delete(*, source: Source) -> int:
    """Remove a source with its documents, chunks, runs and answers, then its vectors and
    uploaded files; returns the number of vectors removed.

    Rows go first, in one transaction, like `document_delete`: if the vector store fails
    afterwards, the leftover vectors have no rows, so retrieval skips them and `check_index`
    removes them. Vectors are found both through the rows and by the source id they were
    stored with, so vectors an interrupted sync left behind go too."""
    with transaction.atomic():
        locked = Source.objects.select_for_update().get(pk=source.pk)
        if runs_settle(source=locked):
            raise SourceBusy("A sync of this source is running; delete it when it has finished.")
        vector_ids = set(
            Chunk.objects.filter(document__source=locked).values_list("vector_id", flat=True)
        )
        source_pk = locked.pk
        folder = source_folder(locked)
        locked.delete()
    store = runtime.chunk_store()
    vector_ids |= store.ids({"source_id": source_pk})
    ordered = sorted(vector_ids)
    store.delete(ordered)
    if folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)
    logger.info("deleted source %s and %d vectors", source_pk, len(ordered))
    return len(ordered)
