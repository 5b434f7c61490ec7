"""Celery tasks of the Discord door: thin, idempotent, by id."""

from __future__ import annotations

from celery import shared_task

from assistant.discord import replies


@shared_task(name="discord.answer", ignore_result=True)
def discord_answer(row_id: int) -> None:
    replies.discord_answer_post(row_id=row_id)
