"""Celery task of "Ask a person": thin, idempotent, by id, retried with backoff."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from assistant.handoff import sending
from assistant.handoff.delivery import DeliveryFailed
from assistant.wiring import background

#: Attempts after the first. With the default base of 30 s they come after 30 s, 1, 2, 4 and
#: 8 minutes: a support desk down for a quarter of an hour still gets the conversation.
RETRIES = 5


@shared_task(name="handoff.send", bind=True, max_retries=RETRIES, ignore_result=True)
def handoff_send(self: Any, handoff_id: int, attempt: int = 0) -> None:
    base = settings.ASKDOCS_HANDOFF_RETRY_SECONDS
    if self.request.is_eager:
        # No broker (the embedded default): the retry waits in this process's schedule, not
        # on the handoff lane, which the next handoff may use meanwhile.
        try:
            sending.handoff_deliver(handoff_id=handoff_id, last_attempt=attempt >= RETRIES)
        except DeliveryFailed:
            background.enqueue_later(base * 2**attempt, handoff_send, handoff_id, attempt + 1)
        return
    try:
        sending.handoff_deliver(handoff_id=handoff_id, last_attempt=self.request.retries >= RETRIES)
    except DeliveryFailed as exc:
        raise self.retry(exc=exc, countdown=base * 2**self.request.retries) from exc
