"""Celery task of "Ask a person": thin, idempotent, by id, retried with backoff."""

from __future__ import annotations

import time
from typing import Any

from celery import shared_task
from django.conf import settings

from assistant.handoff import sending
from assistant.handoff.delivery import DeliveryFailed

#: Attempts after the first. With the default base of 30 s they come after 30 s, 1, 2, 4 and
#: 8 minutes: a support desk down for a quarter of an hour still gets the conversation.
RETRIES = 5
#: Without a broker the pauses are spent on the background thread, which syncs also use.
MAX_INLINE_PAUSE_SECONDS = 10.0


@shared_task(name="handoff.send", bind=True, max_retries=RETRIES, ignore_result=True)
def handoff_send(self: Any, handoff_id: int) -> None:
    base = settings.ASKDOCS_HANDOFF_RETRY_SECONDS
    if self.request.is_eager:
        # No broker (the embedded default): nobody would run a scheduled retry, so retry here.
        for attempt in range(RETRIES + 1):
            try:
                sending.handoff_deliver(handoff_id=handoff_id, last_attempt=attempt == RETRIES)
                return
            except DeliveryFailed:
                time.sleep(min(base * 2**attempt, MAX_INLINE_PAUSE_SECONDS))
        return
    try:
        sending.handoff_deliver(handoff_id=handoff_id, last_attempt=self.request.retries >= RETRIES)
    except DeliveryFailed as exc:
        raise self.retry(exc=exc, countdown=base * 2**self.request.retries) from exc
