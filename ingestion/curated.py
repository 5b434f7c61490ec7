"""Curated answers: answers the team writes in the console for questions the documents did not
answer well. Each active one is a document of its project's "Curated answers" source, indexed by
the same path as any document (ingestion/services.py), so retrieval, the gate, the answerability
check, citations and the generators treat it as a passage. Its phrasings are the document's
title, which the embedder and the cross-encoder read with the text (reading.scoring.passage_text):
a visitor's paraphrase finds it, and the answer, not the question, is what gets quoted.

Writes are synchronous (one small document to embed): an answer saved in the console is served
by the next question, without a sync."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from assistant.links import UnsafeUrl, http_url
from assistant.models import Project
from ingestion.models import Chunk, CuratedAnswer, Document, Source
from ingestion.services import document_delete, document_upsert

SOURCE_NAME = "Curated answers"
MAX_PHRASINGS = 10
MAX_PHRASING_CHARS = 300
MAX_ANSWER_CHARS = 8000
#: Between phrasings in the indexed title: the cross-encoder reads them as one lead line.
PHRASING_SEPARATOR = " · "


class CuratedAnswerInvalid(ValueError):
    """What the lead typed cannot be stored; the message says why (shown next to the form)."""


def curated_source(*, project: Project) -> Source:
    """The project's curated-answers source, created on first use."""
    found = Source.objects.filter(project=project, kind=Source.Kind.CURATED).first()
    if found is not None:
        return found
    name = SOURCE_NAME
    if Source.objects.filter(project=project, name=name).exists():
        name = f"{SOURCE_NAME} (team)"
    return Source.objects.create(
        project=project, kind=Source.Kind.CURATED, name=name, status=Source.Status.READY
    )


def clean_phrasings(raw: Sequence[str] | str) -> list[str]:
    """One phrasing a line (or a list), stripped, without repeats, in order."""
    lines = raw.splitlines() if isinstance(raw, str) else list(raw)
    seen: set[str] = set()
    phrasings: list[str] = []
    for line in lines:
        text = " ".join(str(line).split())
        if text and text.lower() not in seen:
            seen.add(text.lower())
            phrasings.append(text)
    if not phrasings:
        raise CuratedAnswerInvalid("Give at least one phrasing of the question.")
    if len(phrasings) > MAX_PHRASINGS:
        raise CuratedAnswerInvalid(f"At most {MAX_PHRASINGS} phrasings.")
    if any(len(p) > MAX_PHRASING_CHARS for p in phrasings):
        raise CuratedAnswerInvalid(f"A phrasing is at most {MAX_PHRASING_CHARS} characters.")
    return phrasings


def _link(url: str) -> str:
    """The link a lead typed, as visitors will be shown it: http(s), a real host, no spaces."""
    try:
        link = http_url(url)
    except UnsafeUrl as exc:
        raise CuratedAnswerInvalid(f"Link: {exc}.") from None
    if any(c.isspace() or not c.isprintable() for c in link):
        raise CuratedAnswerInvalid("Link: a link holds no spaces (write %20 for one in a path).")
    return link


def sections_of(*, project: Project, vector_ids: Sequence[str]) -> list[dict[str, str]]:
    """The passages of the project's documents (never another project's) an answer rests on."""
    rows = (
        Chunk.objects.filter(vector_id__in=list(vector_ids)[:20], document__source__project=project)
        .exclude(document__source__kind=Source.Kind.CURATED)
        .select_related("document")
    )
    found = {row.vector_id: row for row in rows}
    return [
        {"vector_id": vid, "title": found[vid].title, "url": found[vid].url}
        for vid in dict.fromkeys(vector_ids)
        if vid in found
    ]


def curated_answer_save(
    *,
    project: Project,
    phrasings: Sequence[str] | str,
    answer: str,
    url: str = "",
    rests_on: Sequence[str] = (),
    topic: str = "",
    written_by: Any = None,
    from_answer_id: str = "",
    curated: CuratedAnswer | None = None,
) -> CuratedAnswer:
    """Write a new curated answer (or edit `curated`) and index it at once. A retired one that
    is edited stays retired."""
    cleaned = clean_phrasings(phrasings)
    text = answer.strip()
    if not text:
        raise CuratedAnswerInvalid("Write the answer.")
    if len(text) > MAX_ANSWER_CHARS:
        raise CuratedAnswerInvalid(f"The answer is at most {MAX_ANSWER_CHARS} characters.")
    link = _link(url)
    source = curated_source(project=project)
    if curated is not None and curated.source_id != source.pk:
        raise CuratedAnswerInvalid("That curated answer belongs to another project.")
    sections = sections_of(project=project, vector_ids=rests_on)
    with transaction.atomic():
        if curated is None:
            curated = CuratedAnswer(source=source, written_by=written_by)
        curated.phrasings, curated.answer, curated.url = cleaned, text, link
        curated.rests_on, curated.topic = sections, " ".join(topic.split())[:200]
        curated.from_answer_id = from_answer_id[:64] or curated.from_answer_id
        curated.save()
    if curated.active:
        _index(curated)
    return curated


def curated_answer_retire(*, curated: CuratedAnswer) -> None:
    """Take it out of the index at once; the row stays, inactive, for the record."""
    CuratedAnswer.objects.filter(pk=curated.pk).update(active=False, retired_at=timezone.now())
    curated.active = False
    document = Document.objects.filter(
        source_id=curated.source_id, external_id=curated.external_id
    ).first()
    if document is not None:
        document_delete(document=document)


def curated_answers_used(*, vector_ids: Sequence[str]) -> None:
    """Count an answer that cited these curated passages (one count per curated answer)."""
    external_ids = set(
        Chunk.objects.filter(
            vector_id__in=list(vector_ids), document__source__kind=Source.Kind.CURATED
        ).values_list("document__external_id", flat=True)
    )
    pks = [int(e.removeprefix("curated-")) for e in external_ids if e.startswith("curated-")]
    if pks:
        CuratedAnswer.objects.filter(pk__in=pks).update(
            answered_count=F("answered_count") + 1, last_answered_at=timezone.now()
        )


def indexed_title(curated: CuratedAnswer) -> str:
    """What the document is titled: its phrasings, which retrieval reads with the answer."""
    return PHRASING_SEPARATOR.join(curated.phrasings)[:500]


def _index(curated: CuratedAnswer) -> None:
    document_upsert(
        source=curated.source,
        external_id=curated.external_id,
        title=indexed_title(curated),
        text=curated.answer,
        url=curated.url,
    )
