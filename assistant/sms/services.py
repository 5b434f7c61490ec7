"""Writes of the SMS channel: take an inbound text, answer it, send a deferred reply."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from assistant import admission
from assistant.ask.intake import let_in
from assistant.ask.selectors import conversation_history
from assistant.ask.services import ask
from assistant.errors import UNAVAILABLE
from assistant.models import Interaction, Project, SmsMessage
from assistant.personal_data.projects import masked
from assistant.sms.conversations import HISTORY_EXCHANGES, conversation_reset, conversation_touch
from assistant.sms.deferral import run_within
from assistant.sms.tasks import sms_send_reply
from assistant.sms.text import (
    CLEARED,
    EMPTY_REPLY,
    Command,
    classify,
    help_text,
    refusal_reply,
    sms_reply,
)
from assistant.wiring import background

logger = logging.getLogger(__name__)

Status = SmsMessage.Status


@dataclass(frozen=True, slots=True)
class Inbound:
    """The parts of Twilio's incoming-message webhook that matter here."""

    message_sid: str
    from_number: str
    to_number: str
    body: str
    idempotency_token: str = ""


def sms_receive(
    *, project: Project, inbound: Inbound, now: datetime | None = None, started: float | None = None
) -> str | None:
    """Handle one inbound text. Return the reply for the webhook response, or None for an
    empty response: a retried delivery, an opt-out keyword (Twilio's business), or an answer
    that was not ready in time and will be sent through the REST API when it is.

    `started` is when the webhook began (time.monotonic()); the inline budget counts from it.
    """
    started = time.monotonic() if started is None else started
    now = now or timezone.now()
    # The text is kept, and answered, masked (the sender's number is what a reply goes to).
    inbound = replace(inbound, body=masked(project, inbound.body))
    command = classify(inbound.body)
    message = _record(project=project, inbound=inbound, kind=command.value, now=now)
    if message is None:
        logger.info("SMS %s was delivered again; it is answered once", inbound.message_sid)
        return None
    if command is Command.OPT_OUT:
        SmsMessage.objects.filter(pk=message.pk).update(status=Status.IGNORED)
        return None
    if command is Command.HELP:
        minutes = settings.SMS_CONVERSATION_IDLE_MINUTES
        return _replied(message, help_text(project_name=project.name, idle_minutes=minutes))
    if command is Command.EMPTY:
        return _replied(message, EMPTY_REPLY)
    if command is Command.RESET:
        conversation = conversation_reset(project=project, phone=inbound.from_number, now=now)
        message.conversation_id = conversation.conversation_id
        return _replied(message, CLEARED)

    conversation = conversation_touch(project=project, phone=inbound.from_number, now=now)
    message.conversation_id = conversation.conversation_id
    SmsMessage.objects.filter(pk=message.pk).update(conversation_id=conversation.conversation_id)
    reply = run_within(
        settings.SMS_INLINE_BUDGET - (time.monotonic() - started),
        answer=partial(sms_answer, message_id=message.pk),
        later=partial(sms_reply_later, message_id=message.pk),
        fallback=UNAVAILABLE,
    )
    if reply is not None:
        _replied(message, reply)
    return reply


def sms_answer(*, message_id: int) -> str:
    """Answer a question text with the last exchanges of its conversation; store the reply."""
    message = SmsMessage.objects.select_related("project").get(pk=message_id)
    project = message.project
    interaction = None
    try:
        history = conversation_history(
            project=project, conversation_id=message.conversation_id, exchanges=HISTORY_EXCHANGES
        )
        asked = let_in(
            project,
            question=message.body[: settings.ASKDOCS_MAX_QUESTION_CHARS],
            conversation_id=message.conversation_id,
            history=tuple(history),
            user_key=f"sms:{message.from_number}",
        )
        try:
            # Its turn among every door's questions, or told at once when the server is full.
            with admission.admit(project.public_key) as ticket:
                result = ask(asked, channel=Interaction.Channel.SMS, on_written=ticket.release)
        except admission.Overloaded as busy:
            SmsMessage.objects.filter(pk=message_id).update(
                reply=busy.message, status=Status.ANSWERED
            )
            return busy.message
        if result.error:
            reply = UNAVAILABLE
        elif result.refused or not result.answer.strip():
            related = [page["url"] for page in result.related if page["url"]]
            reply = refusal_reply(related_url=related[0] if related else "")
        else:
            top_url = result.sources[0]["url"] if result.sources else ""
            reply = sms_reply(result.answer, url=top_url)
        if result.answer_id:
            interaction = Interaction.objects.filter(answer_id=result.answer_id).first()
    except Exception:
        logger.exception("answering SMS %s failed", message.message_sid)
        reply = UNAVAILABLE
    SmsMessage.objects.filter(pk=message_id).update(
        reply=reply, interaction=interaction, status=Status.ANSWERED
    )
    return reply


def sms_reply_later(*, message_id: int) -> None:
    """The webhook has already answered Twilio: queue the ready reply for the REST API (the task
    sends it with sending.sms_send)."""
    with transaction.atomic():
        queued = SmsMessage.objects.filter(pk=message_id, status=Status.ANSWERED).update(
            delivery=SmsMessage.Delivery.REST, status=Status.QUEUED
        )
        if queued:
            background.enqueue(sms_send_reply, message_id)


def _record(*, project: Project, inbound: Inbound, kind: str, now: datetime) -> SmsMessage | None:
    """Store the text; None when this MessageSid (or idempotency token) was seen before."""
    try:
        with transaction.atomic():
            return SmsMessage.objects.create(
                project=project,
                message_sid=inbound.message_sid,
                idempotency_token=inbound.idempotency_token,
                from_number=inbound.from_number,
                to_number=inbound.to_number,
                body=inbound.body,
                kind=kind,
                received_at=now,
            )
    except IntegrityError:
        return None


def _replied(message: SmsMessage, reply: str) -> str:
    SmsMessage.objects.filter(pk=message.pk).update(
        reply=reply,
        conversation_id=message.conversation_id,
        delivery=SmsMessage.Delivery.TWIML,
        status=Status.REPLIED,
        replied_at=timezone.now(),
    )
    return reply
