"""Export and erasure of one person's data (services): the same holdings (holdings.py), listed
as JSON or deleted everywhere they live: the database, the memory vectors in the vector store,
cached question vectors, the retrieval cache, the outbox files. Each run leaves an audit record
with counts only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from assistant.handoff.models import Handoff
from assistant.memory.models import UserFact
from assistant.memory.services import memory_erase_user
from assistant.models import (
    DiscordInteraction,
    Interaction,
    Project,
    SlackEvent,
    SmsConversation,
    SmsMessage,
)
from assistant.personal_data.models import PrivacyAudit
from assistant.privacy.holdings import Person, holdings_of
from assistant.wiring.retrieval_cache import index_changed
from feedback.models import AnswerCheck, BlindSpotMark, Feedback, QuestionVector
from feedback.question_vectors import _key, normalised


def privacy_export(*, person: Person, projects: QuerySet[Project], actor: str) -> dict[str, Any]:
    """Everything held about the person, as JSON-ready data."""
    held = holdings_of(person, projects=projects)
    exported = {
        "identifier_kind": person.kind,
        "memory_facts": _rows(UserFact.objects.filter(pk__in=held.facts), FACT_FIELDS),
        "interactions": _rows(Interaction.objects.filter(pk__in=held.interactions), LOG_FIELDS),
        "feedback": _rows(Feedback.objects.filter(pk__in=held.feedback), FEEDBACK_FIELDS),
        "sms_messages": _rows(SmsMessage.objects.filter(pk__in=held.sms_messages), SMS_FIELDS),
        "sms_conversations": _rows(
            SmsConversation.objects.filter(pk__in=held.sms_conversations), SMS_CONV_FIELDS
        ),
        "handoffs": _rows(Handoff.objects.filter(pk__in=held.handoffs), HANDOFF_FIELDS),
        "slack_events": _rows(SlackEvent.objects.filter(pk__in=held.slack_events), SLACK_FIELDS),
        "discord_interactions": _rows(
            DiscordInteraction.objects.filter(pk__in=held.discord_interactions), DISCORD_FIELDS
        ),
        "answer_checks": _rows(AnswerCheck.objects.filter(pk__in=held.answer_checks), CHECK_FIELDS),
        "outbox_files": [path.name for path in held.outbox_files],
    }
    _audit(PrivacyAudit.Action.EXPORT, person, projects, actor, held.counts())
    return exported


def privacy_erase(*, person: Person, projects: QuerySet[Project], actor: str) -> dict[str, int]:
    """Delete everything held about the person; return how many of each were deleted."""
    held = holdings_of(person, projects=projects)
    counts = held.counts()
    # Vectors and files first: if the database write then fails, a second run finds the rows.
    facts = UserFact.objects.filter(pk__in=held.facts)
    for project_id, user_key in set(facts.values_list("project_id", "user_key")):
        memory_erase_user(project=Project.objects.get(pk=project_id), user_key=user_key)
    for path in held.outbox_files:
        path.unlink(missing_ok=True)
    logged = Interaction.objects.filter(pk__in=held.interactions)
    texts = {normalised(q) for q in logged.values_list("question", flat=True)}
    touched = set(logged.values_list("project_id", flat=True))
    with transaction.atomic():
        # Answer checks staff made from their questions copy the question: they go too.
        AnswerCheck.objects.filter(pk__in=held.answer_checks).delete()
        Handoff.objects.filter(pk__in=held.handoffs).delete()
        SmsMessage.objects.filter(pk__in=held.sms_messages).delete()
        SmsConversation.objects.filter(pk__in=held.sms_conversations).delete()
        SlackEvent.objects.filter(pk__in=held.slack_events).delete()
        DiscordInteraction.objects.filter(pk__in=held.discord_interactions).delete()
        Feedback.objects.filter(pk__in=held.feedback).delete()
        logged.delete()
        counts["question_vectors"] = forget_texts(texts)
        counts["blind_spot_marks"] = unmark(texts, project_ids=touched)
    for project_id in touched:  # cached retrievals of their questions
        index_changed(project_id=project_id)
    _audit(PrivacyAudit.Action.ERASE, person, projects, actor, counts)
    return counts


def forget_texts(texts: Iterable[str]) -> int:
    """Delete the cached vectors of these normalised question texts that no logged question
    still asks (the cache is shared by identical questions)."""
    texts = set(texts)
    if not texts:
        return 0
    still = {normalised(q) for q in _spellings(texts)}
    gone = texts - still
    embedders = QuestionVector.objects.values_list("embedder_id", flat=True).distinct()
    keys = [_key(embedder, text) for embedder in embedders for text in gone]
    deleted, _ = QuestionVector.objects.filter(key__in=keys).delete()
    return deleted


def _spellings(texts: set[str]) -> list[str]:
    """Logged questions that read as one of these texts (case aside). A spelling with other
    spacing is missed: its vector is then deleted and embedded again when next needed."""
    found: list[str] = []
    ordered = sorted(texts)
    for start in range(0, len(ordered), 200):
        match = Q()
        for text in ordered[start : start + 200]:
            match |= Q(question__iexact=text)
        found += Interaction.objects.filter(match).values_list("question", flat=True)
    return found


def unmark(texts: set[str], *, project_ids: set[int]) -> int:
    """Blind-spot marks keep the normalised texts of the cluster they marked: theirs go."""
    changed = 0
    for mark in BlindSpotMark.objects.filter(project_id__in=project_ids):
        kept = [text for text in mark.texts if text not in texts]
        if normalised(mark.question) in texts or (mark.texts and not kept):
            mark.delete()
            changed += 1
        elif len(kept) != len(mark.texts):
            BlindSpotMark.objects.filter(pk=mark.pk).update(texts=kept)
            changed += 1
    return changed


def _audit(
    action: str, person: Person, projects: QuerySet[Project], actor: str, counts: dict[str, int]
) -> None:
    only = list(projects[:2])
    PrivacyAudit.objects.create(
        action=action, identifier_kind=person.kind, actor=actor[:40], counts=counts,
        project=only[0] if len(only) == 1 else None,
    )  # fmt: skip


FACT_FIELDS = ("project__name", "user_key", "text", "created_at", "updated_at")
LOG_FIELDS = (
    "project__name", "channel", "conversation_id", "question", "topic", "answer", "refused",
    "sources", "created_at",
)  # fmt: skip
FEEDBACK_FIELDS = ("interaction__answer_id", "client_id", "vote", "comment", "created_at")
SMS_FIELDS = ("project__name", "from_number", "to_number", "body", "reply", "received_at")
SMS_CONV_FIELDS = ("project__name", "phone", "conversation_id", "last_message_at")
HANDOFF_FIELDS = (
    "project__name", "conversation_id", "email", "page_url", "message", "exchanges",
    "status", "created_at",
)  # fmt: skip
SLACK_FIELDS = (
    "project__name", "team_id", "channel_id", "user_id", "thread_ts", "text", "status",
    "received_at",
)  # fmt: skip
DISCORD_FIELDS = (
    "project__name", "kind", "guild_id", "channel_id", "user_id", "text", "status", "received_at",
)  # fmt: skip
CHECK_FIELDS = ("project__name", "question", "from_answer_id", "created_at")


def _rows(queryset: QuerySet[Any], fields: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {name: _plain(value) for name, value in row.items()}
        for row in queryset.order_by("pk").values(*fields)
    ]


def _plain(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, (str, int, float, bool, list, dict)) or value is None:
        return value
    return str(value)
