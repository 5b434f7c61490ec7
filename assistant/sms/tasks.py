"""Celery tasks of the SMS channel: thin, idempotent, by id."""

from __future__ import annotations

from celery import shared_task

from assistant.sms import sending


@shared_task(name="sms.send_reply", ignore_result=True)
def sms_send_reply(message_id: int) -> None:
    sending.sms_send(message_id=message_id)
