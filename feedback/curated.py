"""Reads for curated answers in the console: what each did since it was written (how often it
answered, its last thumbs), whether a section it rests on changed, and what a logged answer
offers to write one from."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from assistant.models import Interaction, Project
from feedback.models import Feedback
from ingestion.curated import indexed_title
from ingestion.models import Chunk, CuratedAnswer, Source

#: How many of the project's newest votes are read to find each answer's last thumbs.
VOTES_READ = 2000


@dataclass(slots=True)
class CuratedRow:
    curated: CuratedAnswer
    last_vote: int | None = None  # 1 / -1, None when nobody voted on an answer it gave
    last_comment: str = ""
    changed_sections: list[dict[str, str]] = field(default_factory=list)


def curated_answers_of(*, project: Project) -> list[CuratedRow]:
    """The project's curated answers, active first, each with its last thumbs and the sections
    it rests on whose text changed since it was written."""
    answers = list(
        CuratedAnswer.objects.filter(source__project=project, source__kind=Source.Kind.CURATED)
    )
    rows = {a.pk: CuratedRow(a) for a in answers}
    by_title = {indexed_title(a): a.pk for a in answers}
    resting = {s["vector_id"] for a in answers for s in a.rests_on}
    present = set(Chunk.objects.filter(vector_id__in=resting).values_list("vector_id", flat=True))
    for row in rows.values():
        row.changed_sections = [s for s in row.curated.rests_on if s["vector_id"] not in present]
    votes = (
        Feedback.objects.filter(interaction__project=project)
        .select_related("interaction")
        .order_by("-updated_at")[:VOTES_READ]
    )
    for vote in votes:
        for source in vote.interaction.sources:
            pk = by_title.get(source.get("title", "")) if source.get("curated") else None
            if pk is not None and rows[pk].last_vote is None:
                rows[pk].last_vote, rows[pk].last_comment = vote.vote, vote.comment
    return list(rows.values())


def answer_to_write_from(*, project: Project, answer_id: str) -> dict[str, Any] | None:
    """What a logged answer of the project suggests for a curated answer: its question as the
    first phrasing, its topic, and the passages it found (to pick the sections it rests on)."""
    try:
        key = uuid.UUID(answer_id)
    except ValueError:
        return None
    found = Interaction.objects.filter(project=project, answer_id=key).first()
    if found is None:
        return None
    comments = [v.comment for v in found.feedback.all() if v.comment]
    sections = [
        {"vector_id": c["chunk_id"], "title": c.get("title", ""), "url": c.get("url", "")}
        for c in found.candidates[:8]
        if c.get("chunk_id")
    ]
    return {
        "interaction": found,
        "question": found.question,
        "topic": found.topic,
        "sections": sections,
        "comments": comments,
    }


@dataclass(frozen=True, slots=True)
class LoopCounts:
    """What waits for the team, for the overview."""

    open_thumbs_down: int  # thumbs-downs no curated answer or check was written from
    failing_checks: int
    checks: int
    curated: int  # active curated answers
    curated_stale: int  # of which a section they rest on changed


def loop_counts(*, project: Project) -> LoopCounts:
    from feedback.models import AnswerCheck

    followed = [
        *CuratedAnswer.objects.filter(source__project=project).values_list(
            "from_answer_id", flat=True
        ),
        *AnswerCheck.objects.filter(project=project).values_list("from_answer_id", flat=True),
    ]
    followed_ids = []
    for value in followed:
        try:
            followed_ids.append(uuid.UUID(value))
        except ValueError:
            continue
    open_downs = (
        Feedback.objects.filter(interaction__project=project, vote=Feedback.Vote.DOWN)
        .exclude(interaction__answer_id__in=followed_ids)
        .count()
    )
    checks = list(AnswerCheck.objects.filter(project=project).only("last_result"))
    rows = curated_answers_of(project=project)
    return LoopCounts(
        open_thumbs_down=open_downs,
        failing_checks=sum(1 for c in checks if c.passed is False),
        checks=len(checks),
        curated=sum(1 for r in rows if r.curated.active),
        curated_stale=sum(1 for r in rows if r.curated.active and r.changed_sections),
    )
