"""What the background lane does for the Slack door (the tasks call this, never services.py):
answer a queued question and post the answer in its thread, at most once; act on a button.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.utils import timezone
from slack_sdk.errors import SlackApiError, SlackClientError

from assistant import admission
from assistant.ask import intake
from assistant.ask.selectors import conversation_history
from assistant.ask.services import ask
from assistant.errors import UNAVAILABLE, IntakeError
from assistant.handoff.services import handoff_create
from assistant.models import Handoff, Interaction, Project, SlackEvent
from assistant.slack import web_api
from assistant.slack.blocks import (
    HANDOFF,
    VOTE_UP,
    answer_message,
    notice_message,
    refusal_message,
    writing_message,
)
from assistant.slack.events import member_key
from feedback.services import feedback_record

logger = logging.getLogger(__name__)

Status = SlackEvent.Status
#: Exchanges (question + answer) of the thread fed into the prompt and the retrieval query.
HISTORY_EXCHANGES = 10
THANKS = "Thanks for your feedback."
NO_PERSON = "This workspace's assistant has no person to hand questions to."
SUPPORT_PAGE = "Our support team takes questions on its support page:"
UNKNOWN_THREAD = "This thread is not one the assistant answered."


def slack_answer_post(*, event_id: int) -> None:
    """Answer a queued question with its thread's last exchanges and post the answer in the
    thread. Claimed first, so a task run twice (a redelivered Celery message) posts once."""
    claimed = SlackEvent.objects.filter(pk=event_id, status=Status.QUEUED).update(
        status=Status.ANSWERING
    )
    if not claimed:
        logger.info("Slack question %s is not waiting for an answer; nothing to do", event_id)
        return
    event = SlackEvent.objects.select_related("project").get(pk=event_id)
    token = event.project.slack_bot_token()
    quoted = _QuotePost(event, token)
    message, interaction = _answer(event, on_quote=quoted)
    try:
        if quoted.ts:  # the quote is in the thread already: the answer takes its place
            web_api.update_message(
                token=token, channel=event.channel_id, ts=quoted.ts, message=message
            )
            ts = quoted.ts
        else:
            ts = web_api.post_message(
                token=token, channel=event.channel_id, thread_ts=event.thread_ts, message=message
            )
    except (SlackApiError, SlackClientError, OSError) as error:
        cause = _cause(error)
        logger.warning("Slack answer to %s was not posted: %s", event.event_id, cause)
        SlackEvent.objects.filter(pk=event_id).update(
            status=Status.FAILED, error=cause[:200], interaction=interaction
        )
        return
    SlackEvent.objects.filter(pk=event_id).update(
        status=Status.REPLIED, reply_ts=ts, interaction=interaction, replied_at=timezone.now()
    )


class _QuotePost:
    """Posts the quote in the thread the moment it is done, while a model writes the answer
    (`ask`'s on_quote), and keeps the message's ts for the answer to replace it."""

    def __init__(self, event: SlackEvent, token: str) -> None:
        self.event, self.token, self.ts = event, token, ""

    def __call__(self, quote: str, sources: list[dict[str, Any]]) -> None:
        event = self.event
        try:
            self.ts = web_api.post_message(
                token=self.token, channel=event.channel_id, thread_ts=event.thread_ts,
                message=writing_message(quote=quote, sources=sources),
            )  # fmt: skip
        except (SlackApiError, SlackClientError, OSError) as error:
            # The answer is posted whole when it is done, as without a model that writes.
            logger.warning("Slack quote for %s was not posted: %s", event.event_id, _cause(error))


def _answer(
    event: SlackEvent, *, on_quote: _QuotePost | None = None
) -> tuple[dict[str, Any], Interaction | None]:
    project = event.project
    handoff = bool(project.contact_support)
    try:
        history = conversation_history(
            project=project, conversation_id=event.conversation_id, exchanges=HISTORY_EXCHANGES
        )
        member = member_key(event.team_id, event.user_id)
        # The member's own memory ("remember …"), as a signed-in widget user has theirs.
        asked = intake.let_in(
            project, question=event.text, conversation_id=event.conversation_id,
            history=tuple(history), user_key=member, client=member,
        )  # fmt: skip
        try:
            # Its turn among every door's questions, or told at once when the server is full.
            with admission.admit(project.public_key) as ticket:
                result = ask(
                    asked, channel=Interaction.Channel.SLACK, on_written=ticket.release,
                    on_quote=on_quote,
                )  # fmt: skip
        except admission.Overloaded as busy:
            return notice_message(busy.message), None
    except Exception:
        logger.exception("answering Slack question %s failed", event.event_id)
        return notice_message(UNAVAILABLE), None
    interaction = (
        Interaction.objects.filter(answer_id=result.answer_id).first() if result.answer_id else None
    )
    if result.error:
        return notice_message(UNAVAILABLE), interaction
    ids = {"answer_id": result.answer_id, "conversation_id": event.conversation_id}
    if result.refused or not result.answer.strip():
        return refusal_message(related=result.related, handoff=handoff, **ids), interaction
    message = answer_message(answer=result.answer, sources=result.sources, handoff=handoff, **ids)
    return message, interaction


def slack_notice_post(*, event_id: int, text: str) -> None:
    """Tell the member who asked `event_id` (and them alone) something about their question:
    that it is over a rate limit, and when to ask again."""
    event = SlackEvent.objects.select_related("project").get(pk=event_id)
    try:
        web_api.post_ephemeral(
            token=event.project.slack_bot_token(), channel=event.channel_id,
            user=event.user_id, thread_ts=event.thread_ts, text=text,
        )  # fmt: skip
    except (SlackApiError, SlackClientError, OSError) as error:
        logger.warning("Slack member of %s could not be told: %s", event.event_id, _cause(error))


def slack_action_take(*, project_id: int, action: dict[str, str]) -> None:
    """A vote on an answer, or "Ask a person" for its thread; the member is told what
    happened (a vote by a note only they see, a handoff in the thread)."""
    project = Project.objects.get(pk=project_id)
    asker = member_key(action["team"], action["user"])
    if action["action"] == HANDOFF:
        note, in_thread = _hand_off(project, action, asker=asker)
    else:
        note, in_thread = _vote(project, action, asker=asker), False
    support_page = project.contact_support_target if note == SUPPORT_PAGE else ""
    token = project.slack_bot_token()
    try:
        if in_thread:
            web_api.post_message(
                token=token, channel=action["channel"], thread_ts=action["thread_ts"],
                message=notice_message(note, url=support_page),
            )  # fmt: skip
        else:
            web_api.post_ephemeral(
                token=token, channel=action["channel"], user=action["user"],
                thread_ts=action["thread_ts"], text=note,
            )  # fmt: skip
    except (SlackApiError, SlackClientError, OSError) as error:
        logger.warning("Slack could not be told of a %s: %s", action["action"], _cause(error))


def _vote(project: Project, action: dict[str, str], *, asker: str) -> str:
    interaction = Interaction.objects.filter(project=project, answer_id=_uuid(action["value"]))
    answered = interaction.first()
    if answered is None:
        return UNKNOWN_THREAD
    try:
        intake.limit("feedback", client=asker)
    except IntakeError as error:
        return error.message
    # The member's id, never their name: a vote is one per member and answer, as in the widget.
    feedback_record(
        interaction=answered, client_id=asker[:64], vote=1 if action["action"] == VOTE_UP else -1
    )
    return THANKS


def _hand_off(project: Project, action: dict[str, str], *, asker: str) -> tuple[str, bool]:
    conversation = action["value"]
    known = SlackEvent.objects.filter(project=project, conversation_id=conversation).exists()
    if not known:
        return UNKNOWN_THREAD, False
    if not project.contact_support:
        return NO_PERSON, False
    try:
        intake.limit("handoff", client=asker, conversation_id=conversation)
    except IntakeError as error:
        return error.message, False
    handoff = handoff_create(
        project=project, conversation_id=conversation,
        message=(
            f"Asked from Slack: member {action['user']} in channel {action['channel']} of "
            f"workspace {action['team']} (thread {action['thread_ts']}). Reply to them there."
        ),
    )  # fmt: skip
    if handoff.via == Handoff.Via.LINK:
        return SUPPORT_PAGE, True
    return (
        "Thanks! This thread was sent to our support team; a person will follow up with you "
        "here in Slack.",
        True,
    )


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return "00000000-0000-0000-0000-000000000000"


def _cause(error: BaseException) -> str:
    if isinstance(error, SlackApiError):
        return f"Slack said {error.response.get('error') or error.response.status_code}"
    return f"{type(error).__name__}: {error}"
