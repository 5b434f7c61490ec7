"""Delivering a handoff: one attempt by id, what the Celery task calls (it never calls
services.py, which queues it)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from assistant.handoff.delivery import DeliveryFailed, deliver
from assistant.handoff.models import Handoff

logger = logging.getLogger(__name__)
Status = Handoff.Status


def handoff_deliver(*, handoff_id: int, last_attempt: bool) -> None:
    """One delivery attempt. Raises DeliveryFailed when another attempt should follow;
    records the failure for good on the last attempt or when the receiver refused."""
    claimed = Handoff.objects.filter(pk=handoff_id, status=Status.QUEUED).update(
        status=Status.SENDING
    )
    if not claimed:
        logger.info("handoff %s is not waiting to be sent; nothing to do", handoff_id)
        return
    handoff = Handoff.objects.select_related("project").get(pk=handoff_id)
    attempts = handoff.attempts + 1
    try:
        deliver(handoff)
    except DeliveryFailed as exc:
        final = last_attempt or not exc.retry
        logger.warning("handoff %s not delivered (attempt %s): %s", handoff_id, attempts, exc)
        Handoff.objects.filter(pk=handoff_id).update(
            status=Status.FAILED if final else Status.QUEUED, attempts=attempts,
            error=str(exc)[:200],
        )  # fmt: skip
        if not final:
            raise
        return
    written = handoff.via == Handoff.Via.EMAIL and mail_goes_to_outbox()
    Handoff.objects.filter(pk=handoff_id).update(
        status=Status.WRITTEN if written else Status.SENT, attempts=attempts, error="",
        delivered_at=timezone.now(),
    )  # fmt: skip


def mail_goes_to_outbox() -> bool:
    """No mail server is configured: the outbox backend writes each message into a file of
    its own in EMAIL_FILE_PATH (DATA_DIR/outbox/) and nobody receives it."""
    return settings.EMAIL_BACKEND == "assistant.handoff.outbox.OutboxBackend"
