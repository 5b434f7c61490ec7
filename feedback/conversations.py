"""Reads for the conversations page: the interaction log grouped into conversations (a list
to filter and page through) and one conversation's transcript.

A conversation is every interaction sharing a `conversation_id`; a question asked without
one (the HTTP API without a conversation, the command line) is a conversation of its own,
keyed by its answer id. The list is one grouped query per page plus one for the first
question of the conversations shown."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.db.models import (
    CharField,
    Count,
    Max,
    Q,
    QuerySet,
    Value,
)
from django.db.models.functions import Cast, Coalesce, NullIf

from assistant.handoff.models import Handoff
from assistant.models import Interaction, Project
from feedback.models import Feedback

_CITED = re.compile(r"\[(\d+)\]")
_DOWN = Q(feedback__vote=Feedback.Vote.DOWN)
_UP = Q(feedback__vote=Feedback.Vote.UP)


#: A conversation's key: its id, or the answer id of a question asked outside any.
_KEY = Coalesce(NullIf("conversation_id", Value("")), Cast("answer_id", output_field=CharField()))


def _keys_of(rows: QuerySet[Interaction]) -> QuerySet[Any, Any]:
    return rows.annotate(conversation_key=_KEY).values("conversation_key")


def conversation_list(
    *,
    project: Project,
    channel: str = "",
    refused: bool = False,
    voted_down: bool = False,
    handed_over: bool = False,
    search: str = "",
) -> QuerySet[Any, Any]:
    """The project's conversations as dicts (conversation_key, last), the latest active
    first: one grouped query without joins, for the paginator. `search` matches a question
    or an answer of the conversation; `refused` / `voted_down` keep conversations with at
    least one such answer, `handed_over` those the visitor handed to a person.
    `conversation_rows` fills in the page's rows."""
    # A question past the project's retention period keeps its numbers, not its text: it is
    # no longer a conversation to read (assistant/privacy/retention.py).
    mine = Interaction.objects.filter(project=project).exclude(question="")
    rows = mine.filter(channel=channel) if channel else mine
    wanted = []
    if search:
        wanted.append(mine.filter(Q(question__icontains=search) | Q(answer__icontains=search)))
    if refused:
        wanted.append(mine.filter(refused=True))
    if voted_down:
        wanted.append(mine.filter(feedback__vote=Feedback.Vote.DOWN))
    keyed = rows.annotate(conversation_key=_KEY)
    for some in wanted:
        keyed = keyed.filter(conversation_key__in=_keys_of(some))
    if handed_over:
        handoffs = Handoff.objects.filter(project=project).values("conversation_id")
        keyed = keyed.filter(conversation_key__in=handoffs)
    return (
        keyed.order_by()
        .values("conversation_key")
        .annotate(last=Max("created_at"))
        .order_by("-last", "conversation_key")
    )


@dataclass(frozen=True, slots=True)
class ConversationRow:
    key: str
    started: datetime
    last: datetime
    turns: int
    refused: int
    errors: int
    voted_down: int
    voted_up: int
    handed_over: bool  # the visitor asked a person ("Ask a person")
    channel: str  # as shown ("Widget")
    topic: str
    first_question: str


def conversation_rows(
    *, project: Project, groups: Sequence[dict[str, Any]]
) -> list[ConversationRow]:
    """The rows of a page of `conversation_list`: every turn of those conversations read
    through the indexes (conversation id, answer id), with their votes counted."""
    keys = [g["conversation_key"] for g in groups]
    answer_ids = []
    for key in keys:
        try:
            answer_ids.append(uuid.UUID(key))
        except ValueError:
            pass
    turns = (
        Interaction.objects.filter(project=project)
        .filter(Q(conversation_id__in=keys) | Q(conversation_id="", answer_id__in=answer_ids))
        .annotate(
            conversation_key=_KEY,
            down_votes=Count("feedback", filter=_DOWN),
            up_votes=Count("feedback", filter=_UP),
        )
        .only("question", "topic", "channel", "created_at", "refused", "error")
        .order_by("created_at", "id")
    )
    handed_over = set(
        Handoff.objects.filter(project=project, conversation_id__in=keys).values_list(
            "conversation_id", flat=True
        )
    )
    by_key: dict[str, list[Any]] = {}
    for turn in turns:
        by_key.setdefault(turn.conversation_key, []).append(turn)
    rows = []
    for key in keys:
        found = by_key.get(key)
        if not found:
            continue
        first = found[0]
        rows.append(
            ConversationRow(
                key=key,
                started=first.created_at,
                last=found[-1].created_at,
                turns=len(found),
                refused=sum(t.refused for t in found),
                errors=sum(bool(t.error) for t in found),
                voted_down=sum(t.down_votes for t in found),
                voted_up=sum(t.up_votes for t in found),
                handed_over=key in handed_over,
                channel=first.get_channel_display(),
                topic=first.topic,
                first_question=first.question,
            )
        )
    return rows


def sources_seen(*, answer: str, sources: Sequence[dict[str, Any]], refused: bool) -> list[dict]:
    """The sources the reader was shown, by the widget's rule: none under a refusal; those the
    answer cites with `[n]`; all of them when it cites none (an LLM that wrote no markers)."""
    if refused:
        return []
    cited = set(_CITED.findall(answer))
    shown = [s for s in sources if str(s.get("n")) in cited]
    return shown or list(sources)


@dataclass(slots=True)
class TranscriptTurn:
    interaction: Interaction
    sources: list[dict]  # the ones the reader saw
    votes: list[Feedback] = field(default_factory=list)
    earlier_questions: list[str] = field(default_factory=list)

    @property
    def voted_down(self) -> bool:
        return any(v.vote == Feedback.Vote.DOWN for v in self.votes)

    @property
    def voted_up(self) -> bool:
        return any(v.vote == Feedback.Vote.UP for v in self.votes)

    @property
    def sandbox_query(self) -> str:
        """The sandbox's query string that replays this turn after the earlier questions."""
        asked = self.interaction
        return urlencode(
            {
                "project": asked.project_id,
                "question": asked.question,
                "topic": asked.topic,
                "previous": "\n".join(self.earlier_questions),
            }
        )


#: How many earlier questions "Open in sandbox" replays (the pipeline reads the last few).
SANDBOX_HISTORY = 5


def conversation_transcript(*, project: Project, key: str) -> list[TranscriptTurn]:
    """Every turn of one conversation, oldest first, with its votes; [] when `key` names
    none of this project's conversations."""
    turns = list(
        Interaction.objects.filter(project=project, conversation_id=key)
        .prefetch_related("feedback")
        .order_by("created_at", "id")
        if key
        else []
    )
    if not turns:
        try:
            answer_id = uuid.UUID(key)
        except ValueError:
            return []
        turns = list(
            Interaction.objects.filter(project=project, answer_id=answer_id, conversation_id="")
            .prefetch_related("feedback")
        )  # fmt: skip
    transcript = []
    for index, turn in enumerate(turns):
        earlier = [t.question for t in turns[:index] if t.generator != "memory"]
        transcript.append(
            TranscriptTurn(
                interaction=turn,
                sources=sources_seen(
                    answer=turn.answer, sources=turn.sources, refused=turn.refused
                ),
                votes=list(turn.feedback.all()),
                earlier_questions=earlier[-SANDBOX_HISTORY:],
            )
        )
    return transcript
