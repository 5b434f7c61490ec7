"""Retention: each project keeps what it learns about people for the days it set, and the
nightly run deletes what is older (a service; the task in tasks.py only calls it).

* Conversations: a logged question older than the period loses its text (question, query,
  answer, conversation id, asker hash, memory log) but keeps its numbers (channel, topic,
  relevance, refused, latency, sources), so the console's charts and the threshold tuner still
  count it; its cached question vector goes with the text; its SMS text and conversation go.
* Feedback comments: the comment goes, the vote stays.
* Handoffs: the transcript, the message and the address go (the row stays, counted), and
  the copy in the outbox when mail had no server.
* Memory facts: deleted, vectors first, when not changed for their own period.

Every run leaves one audit record per project with what it deleted (counts only).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from assistant.handoff.models import Handoff
from assistant.memory.models import UserFact
from assistant.models import (
    DiscordInteraction,
    Interaction,
    Project,
    SlackEvent,
    SmsConversation,
    SmsMessage,
)
from assistant.personal_data.models import PrivacyAudit
from assistant.privacy.erasure import forget_texts, unmark
from assistant.privacy.holdings import outbox_files_of
from assistant.wiring import runtime
from feedback.models import Feedback
from feedback.question_vectors import normalised

#: Rows stripped per query, so one run never holds a long transaction.
BATCH = 500
RETENTION_FIELDS = (
    "keep_conversations_days", "keep_feedback_comments_days", "keep_handoffs_days",
    "keep_memory_days",
)  # fmt: skip


def retention_run(*, actor: str = "schedule", now: datetime | None = None) -> dict[str, dict]:
    """Apply every project's periods; {project name: {what: how many}} of those that keep
    anything for a limited time."""
    now = now or timezone.now()
    limited = Q()
    for name in RETENTION_FIELDS:
        limited |= Q(**{f"{name}__gt": 0})
    report: dict[str, dict] = {}
    for project in Project.objects.filter(limited):
        counts = project_retention(project=project, now=now)
        PrivacyAudit.objects.create(
            action=PrivacyAudit.Action.RETENTION, project=project, actor=actor[:40], counts=counts
        )
        report[project.name] = counts
    return report


def project_retention(*, project: Project, now: datetime) -> dict[str, int]:
    counts = {
        "interactions": 0, "question_vectors": 0, "sms_messages": 0, "sms_conversations": 0,
        "slack_events": 0, "discord_interactions": 0, "feedback_comments": 0, "handoffs": 0,
        "outbox_files": 0, "memory_facts": 0,
    }  # fmt: skip
    if project.keep_conversations_days:
        counts.update(
            _conversations(project, now - timedelta(days=project.keep_conversations_days))
        )
    if project.keep_feedback_comments_days:
        before = now - timedelta(days=project.keep_feedback_comments_days)
        counts["feedback_comments"] = (
            Feedback.objects.filter(interaction__project=project, created_at__lt=before)
            .exclude(comment="")
            .update(comment="")
        )
    if project.keep_handoffs_days:
        counts.update(_handoffs(project, now - timedelta(days=project.keep_handoffs_days)))
    if project.keep_memory_days:
        counts["memory_facts"] = _facts(project, now - timedelta(days=project.keep_memory_days))
    return counts


def _conversations(project: Project, before: datetime) -> dict[str, int]:
    old = Interaction.objects.filter(project=project, created_at__lt=before).exclude(question="")
    stripped = vectors = 0
    while batch := list(old.values_list("pk", "question")[:BATCH]):
        with transaction.atomic():
            stripped += Interaction.objects.filter(pk__in=[pk for pk, _ in batch]).update(
                question="", retrieval_query="", answer="", conversation_id="", asker="",
                memory=[],
            )  # fmt: skip
            texts = {normalised(question) for _, question in batch}
            vectors += forget_texts(texts)
            unmark(texts, project_ids={project.pk})
    texts_gone, _ = SmsMessage.objects.filter(project=project, received_at__lt=before).delete()
    quiet, _ = SmsConversation.objects.filter(project=project, last_message_at__lt=before).delete()
    slack_gone, _ = SlackEvent.objects.filter(project=project, received_at__lt=before).delete()
    discord_gone, _ = DiscordInteraction.objects.filter(
        project=project, received_at__lt=before
    ).delete()
    return {
        "interactions": stripped, "question_vectors": vectors, "sms_messages": texts_gone,
        "sms_conversations": quiet, "slack_events": slack_gone,
        "discord_interactions": discord_gone,
    }  # fmt: skip


def _handoffs(project: Project, before: datetime) -> dict[str, int]:
    old = Handoff.objects.filter(project=project, created_at__lt=before).exclude(
        exchanges=[], message="", email=""
    )
    files = outbox_files_of(old.values_list("pk", "conversation_id"))
    for path in files:
        path.unlink(missing_ok=True)
    stripped = old.update(exchanges=[], message="", email="", page_url="", conversation_id="")
    return {"handoffs": stripped, "outbox_files": len(files)}


def _facts(project: Project, before: datetime) -> int:
    old = list(UserFact.objects.filter(project=project, updated_at__lt=before))
    if not old:
        return 0
    # Vectors first: a failure leaves the rows, and the next run tries again.
    runtime.memory_store().delete([fact.vector_id for fact in old])
    deleted, _ = UserFact.objects.filter(pk__in=[fact.pk for fact in old]).delete()
    return deleted
