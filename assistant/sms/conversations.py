"""Conversation memory per (project, phone number): which conversation id a text belongs to.

The exchanges are read back from the interaction log by that id, so memory lives in the
database: it survives restarts and is shared by every web process and worker.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from assistant.models import Project, SmsConversation

#: Exchanges (question + answer) fed into the prompt and the retrieval query.
HISTORY_EXCHANGES = 10


def new_conversation_id() -> str:
    return f"sms-{uuid.uuid4().hex}"


def idle_limit() -> timedelta:
    return timedelta(minutes=settings.SMS_CONVERSATION_IDLE_MINUTES)


def conversation_touch(*, project: Project, phone: str, now: datetime) -> SmsConversation:
    """The conversation a new text from `phone` belongs to: the current one, or a fresh one
    after a quiet spell of SMS_CONVERSATION_IDLE_MINUTES (30) or more."""
    with transaction.atomic():
        conversation, created = SmsConversation.objects.select_for_update().get_or_create(
            project=project,
            phone=phone,
            defaults={"conversation_id": new_conversation_id(), "last_message_at": now},
        )
        if not created:
            if now - conversation.last_message_at >= idle_limit():
                conversation.conversation_id = new_conversation_id()
            conversation.last_message_at = max(now, conversation.last_message_at)
            conversation.save(update_fields=["conversation_id", "last_message_at"])
    return conversation


def conversation_reset(*, project: Project, phone: str, now: datetime) -> SmsConversation:
    """Forget the conversation: the next text starts one with no history."""
    conversation, _ = SmsConversation.objects.update_or_create(
        project=project,
        phone=phone,
        defaults={"conversation_id": new_conversation_id(), "last_message_at": now},
    )
    return conversation
