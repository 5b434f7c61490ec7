"""Celery tasks of the Slack door: thin, idempotent, by id."""

from __future__ import annotations

from celery import shared_task

from assistant.slack import replies


@shared_task(name="slack.answer", ignore_result=True)
def slack_answer(event_id: int) -> None:
    replies.slack_answer_post(event_id=event_id)


@shared_task(name="slack.act", ignore_result=True)
def slack_act(project_id: int, action: dict[str, str]) -> None:
    replies.slack_action_take(project_id=project_id, action=action)


@shared_task(name="slack.tell", ignore_result=True)
def slack_tell(event_id: int, text: str) -> None:
    replies.slack_notice_post(event_id=event_id, text=text)
