"""Writes of the Slack door: take a delivered event or a button press, decide at once, and
queue the slow part (an answer, a post to Slack) for the background lane, so the request is
acknowledged within Slack's three seconds."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from assistant.ask import intake, ratelimits
from assistant.errors import IntakeError
from assistant.models import Project, SlackEvent
from assistant.personal_data.projects import masked
from assistant.slack.blocks import ACTIONS
from assistant.slack.events import Question, question_in
from assistant.slack.tasks import slack_act, slack_answer, slack_tell
from assistant.wiring import background

logger = logging.getLogger(__name__)

Status = SlackEvent.Status

QUEUED = "queued"
RETRY = "retry"
IGNORED = "ignored"
LIMITED = "limited"


def slack_event_receive(*, project: Project, envelope: Mapping[str, Any]) -> str:
    """Take one `event_callback`: a question is stored (once per event id, so a retried
    delivery is never answered twice), counted against the workspace's and the member's
    limits, and queued for an answer. Returns what became of it: queued, retry, ignored or
    limited."""
    question = question_in(
        envelope,
        watched=frozenset(project.slack_channels or ()),
        answered_thread=lambda conversation: SlackEvent.objects.filter(
            project=project, conversation_id=conversation, status=Status.REPLIED
        ).exists(),
    )
    if question is None:
        return IGNORED
    try:
        # The same text rules as every other door (no NUL, valid Unicode, words); a long
        # message is asked by its beginning, as a text message is.
        text = intake.text_field(
            {"question": question.text[: settings.ASKDOCS_MAX_QUESTION_CHARS]},
            "question", max_chars=settings.ASKDOCS_MAX_QUESTION_CHARS, words=True,
        )  # fmt: skip
    except IntakeError as error:
        logger.info("Slack event %s is not a question: %s", question.event_id, error.message)
        return IGNORED
    event = _record(project=project, question=question, text=masked(project, text))
    if event is None:
        logger.info("Slack event %s was delivered again; it is answered once", question.event_id)
        return RETRY
    sender = f"slack:{question.team_id}:{question.user_id}"
    try:
        intake.limit("slack", client=f"slack:{question.team_id}", sender=sender, say_when=True)
    except IntakeError as error:
        logger.warning(
            "Slack question from %s in workspace %s is over the rate limit; not answered",
            question.user_id, question.team_id,
        )  # fmt: skip
        SlackEvent.objects.filter(pk=event.pk).update(status=Status.LIMITED)
        # The member alone is told when to ask again, once a minute at most: a flood gets no
        # flood of notes.
        if ratelimits.notice_due("slack", sender=sender):
            _queue_notice(event.pk, error.message)
        return LIMITED
    _queue_answer(event.pk)
    return QUEUED


def slack_action_receive(*, project: Project, payload: Mapping[str, Any]) -> str:
    """Take a button press (`block_actions`) on one of the app's messages and queue it: a vote
    is recorded, a handoff made, and the member told, in the background. Returns queued or
    ignored."""
    if payload.get("type") != "block_actions":
        return IGNORED
    actions = payload.get("actions") or []
    if not actions or not isinstance(actions[0], Mapping):
        return IGNORED
    if actions[0].get("action_id") not in ACTIONS:
        return IGNORED
    _queue_action(project.pk, _action_of(payload))
    return QUEUED


def _action_of(payload: Mapping[str, Any]) -> dict[str, str]:
    """What the background needs of a block_actions payload (it is JSON for Celery, and the
    whole payload, with the message's blocks, is not worth carrying)."""
    action = payload["actions"][0]
    message = payload.get("message") or {}
    container = payload.get("container") or {}
    return {
        "action": str(action.get("action_id") or ""),
        "value": str(action.get("value") or ""),
        "user": str((payload.get("user") or {}).get("id") or ""),
        "team": str((payload.get("team") or {}).get("id") or ""),
        "channel": str(
            (payload.get("channel") or {}).get("id") or container.get("channel_id") or ""
        ),
        "thread_ts": str(message.get("thread_ts") or message.get("ts") or ""),
    }


def _record(*, project: Project, question: Question, text: str) -> SlackEvent | None:
    """Store the question; None when this event id was seen before."""
    try:
        with transaction.atomic():
            return SlackEvent.objects.create(
                project=project, event_id=question.event_id[:64], team_id=question.team_id[:32],
                channel_id=question.channel_id[:32], user_id=question.user_id[:32],
                thread_ts=question.thread_ts[:32], text=text,
                conversation_id=question.conversation_id,
            )  # fmt: skip
    except IntegrityError:
        return None


def _queue_answer(event_id: int) -> None:
    """The one place a service queues the answer (the task calls replies, never this module)."""
    background.enqueue(slack_answer, event_id)


def _queue_notice(event_id: int, text: str) -> None:
    background.enqueue(slack_tell, event_id, text)


def _queue_action(project_id: int, action: dict[str, str]) -> None:
    background.enqueue(slack_act, project_id, action)


def slack_settings_save(
    *, project: Project, signing_secret: str, bot_token: str, channels: list[str], forget: bool
) -> Project:
    """Store a project's Slack settings: a secret left empty keeps the stored one; `forget`
    disconnects (both secrets dropped: every request is refused until new ones are saved)."""
    if forget:
        project.set_slack_signing_secret("")
        project.set_slack_bot_token("")
    if signing_secret:
        project.set_slack_signing_secret(signing_secret)
    if bot_token:
        project.set_slack_bot_token(bot_token)
    project.slack_channels = channels
    project.save(
        update_fields=[
            "slack_signing_secret_sealed", "slack_signing_secret_last4", "slack_bot_token_sealed",
            "slack_bot_token_last4", "slack_channels",
        ]
    )  # fmt: skip
    return project
