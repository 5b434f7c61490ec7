"""Sending a queued SMS reply through Twilio's REST API, at most once: what the Celery task
calls (it never calls services.py, which queues it)."""

from __future__ import annotations

import logging

from django.utils import timezone

from assistant.models import SmsMessage
from assistant.sms import twilio_rest
from assistant.wiring.resilience import describe

logger = logging.getLogger(__name__)
Status = SmsMessage.Status


def sms_send(*, message_id: int) -> None:
    """Send a queued reply through Twilio's REST API, at most once."""
    claimed = SmsMessage.objects.filter(pk=message_id, status=Status.QUEUED).update(
        status=Status.SENDING
    )
    if not claimed:
        logger.info("SMS reply %s is not waiting to be sent; nothing to do", message_id)
        return
    message = SmsMessage.objects.get(pk=message_id)
    try:
        sid = twilio_rest.send_sms(
            to=message.from_number, from_=message.to_number, body=message.reply
        )
    except Exception as exc:
        cause = describe(exc)
        logger.warning("SMS reply to %s was not sent: %s", message.message_sid, cause)
        SmsMessage.objects.filter(pk=message_id).update(status=Status.FAILED, error=cause[:200])
        return
    SmsMessage.objects.filter(pk=message_id).update(
        status=Status.REPLIED, reply_sid=sid, replied_at=timezone.now()
    )
