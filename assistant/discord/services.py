"""Writes of the Discord door: take a delivered interaction and decide at once, within
Discord's three seconds. An `/ask` is stored, counted and deferred ("… is thinking"), its
answer computed in the background lane; a button press (a vote, "Ask a person") is quick, so
it is done here and answered in the same response."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any

import httpx
from django.conf import settings
from django.db import IntegrityError, transaction

from assistant.ask import intake
from assistant.discord import web_api
from assistant.discord.commands import ask_command
from assistant.discord.interactions import (
    APPLICATION_COMMAND,
    MESSAGE_COMPONENT,
    Asked,
    Pressed,
    asked_in,
    pressed_in,
    server_of,
)
from assistant.discord.messages import HANDOFF, VOTE_UP, action_of, notice_message
from assistant.discord.tasks import discord_answer
from assistant.errors import IntakeError
from assistant.handoff.services import handoff_create
from assistant.models import DiscordInteraction, Handoff, Interaction, Project
from assistant.personal_data.projects import masked
from assistant.sealing import seal
from assistant.wiring import background
from feedback.services import feedback_record

logger = logging.getLogger(__name__)

Kind = DiscordInteraction.Kind
Status = DiscordInteraction.Status

#: Discord's interaction response types.
MESSAGE = 4
DEFERRED_MESSAGE = 5
DEFERRED_UPDATE = 6

NOT_A_QUESTION = "Ask with /ask and your question, e.g. /ask question: How do I rotate a key?"
THANKS = "Thanks for your feedback."
NO_PERSON = "This server's assistant has no person to hand questions to."
SUPPORT_PAGE = "Our support team takes questions on its support page:"
HANDED_OFF = (
    "Thanks! This conversation was sent to our support team; a person will follow up with you "
    "here in Discord."
)
UNKNOWN_ANSWER = "This answer is not one the assistant gave here."
UNKNOWN_CONVERSATION = "This conversation is not one the assistant answered."


def discord_interaction_receive(*, project: Project, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Discord's response to an `/ask` or a button press (PING is answered by the view)."""
    kind = payload.get("type")
    if kind == APPLICATION_COMMAND:
        return discord_ask_receive(project=project, payload=payload)
    if kind == MESSAGE_COMPONENT:
        return discord_press_receive(project=project, payload=payload)
    return _tell(NOT_A_QUESTION)


def discord_ask_receive(*, project: Project, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Take an `/ask`: stored once per interaction id (a delivery seen again is not answered
    again), counted against the server's and the member's limits, and deferred while the
    background lane answers. Anything that stops it is told to the member alone."""
    asked = asked_in(payload)
    if asked is None:
        return _tell(NOT_A_QUESTION)
    try:
        # The same text rules as every other door (no NUL, valid Unicode, words).
        text = intake.text_field(
            {"question": asked.text}, "question",
            max_chars=settings.ASKDOCS_MAX_QUESTION_CHARS, words=True,
        )  # fmt: skip
    except IntakeError as error:
        return _tell(error.message)
    row = _record_ask(project=project, asked=asked, text=masked(project, text))
    if row is None:
        logger.info(
            "Discord interaction %s was delivered again; it is answered once", asked.discord_id
        )
        return {"type": DEFERRED_MESSAGE}
    try:
        intake.limit(
            "discord", client=f"discord:{_server(asked)}",
            sender=f"discord:{_server(asked)}:{asked.user_id}", say_when=True,
        )  # fmt: skip
    except IntakeError as error:
        logger.warning(
            "Discord question from %s in server %s is over the rate limit; not answered",
            asked.user_id, asked.guild_id or "(direct message)",
        )  # fmt: skip
        DiscordInteraction.objects.filter(pk=row.pk).update(status=Status.LIMITED, token_sealed="")
        return _tell(error.message)
    _queue_answer(row.pk)
    return {"type": DEFERRED_MESSAGE}


def discord_press_receive(*, project: Project, payload: Mapping[str, Any]) -> dict[str, Any]:
    """A press of one of the app's buttons: a vote recorded (the member alone is thanked), or
    the conversation handed to a person (said in the channel). Another button, or a press
    seen before, is acknowledged and nothing changes."""
    pressed = pressed_in(payload)
    action = action_of(pressed.custom_id) if pressed is not None else None
    if pressed is None or action is None or not _record_press(project=project, pressed=pressed):
        return {"type": DEFERRED_UPDATE}
    button, value = action
    asker = f"discord:{_server(pressed)}:{pressed.user_id}"
    if button == HANDOFF:
        note, public = _hand_off(project, pressed, conversation=value, asker=asker)
    else:
        note, public = _vote(project, answer_id=value, up=button == VOTE_UP, asker=asker), False
    url = project.contact_support_target if note == SUPPORT_PAGE else ""
    return {"type": MESSAGE, "data": notice_message(note, url=url, ephemeral=not public)}


def _vote(project: Project, *, answer_id: str, up: bool, asker: str) -> str:
    answered = Interaction.objects.filter(project=project, answer_id=_uuid(answer_id)).first()
    if answered is None:
        return UNKNOWN_ANSWER
    try:
        intake.limit("feedback", client=asker)
    except IntakeError as error:
        return error.message
    # The member's id, never their name: a vote is one per member and answer, as in the widget.
    feedback_record(interaction=answered, client_id=asker[:64], vote=1 if up else -1)
    return THANKS


def _hand_off(
    project: Project, pressed: Pressed, *, conversation: str, asker: str
) -> tuple[str, bool]:
    known = DiscordInteraction.objects.filter(
        project=project, kind=Kind.ASK, conversation_id=conversation
    ).exists()
    if not known:
        return UNKNOWN_CONVERSATION, False
    if not project.contact_support:
        return NO_PERSON, False
    try:
        intake.limit("handoff", client=asker, conversation_id=conversation)
    except IntakeError as error:
        return error.message, False
    where = f"server {pressed.guild_id}" if pressed.guild_id else "a direct message"
    handoff = handoff_create(
        project=project, conversation_id=conversation,
        message=(
            f"Asked from Discord: member {pressed.user_id} in channel {pressed.channel_id} of "
            f"{where}. Reply to them there."
        ),
    )  # fmt: skip
    if handoff.via == Handoff.Via.LINK:
        return SUPPORT_PAGE, False
    return HANDED_OFF, True


def _record_ask(*, project: Project, asked: Asked, text: str) -> DiscordInteraction | None:
    """Store the question; None when this interaction id was seen before."""
    try:
        with transaction.atomic():
            return DiscordInteraction.objects.create(
                project=project, discord_id=asked.discord_id[:32], kind=Kind.ASK,
                application_id=asked.application_id[:32], guild_id=asked.guild_id[:32],
                channel_id=asked.channel_id[:32], user_id=asked.user_id[:32],
                token_sealed=seal(asked.token), text=text,
                conversation_id=asked.conversation_id,
            )  # fmt: skip
    except IntegrityError:
        return None


def _record_press(*, project: Project, pressed: Pressed) -> bool:
    """Store the press; False when this interaction id was seen before."""
    try:
        with transaction.atomic():
            DiscordInteraction.objects.create(
                project=project, discord_id=pressed.discord_id[:32], kind=Kind.PRESS,
                guild_id=pressed.guild_id[:32], channel_id=pressed.channel_id[:32],
                user_id=pressed.user_id[:32], text=pressed.custom_id[:100],
                status=Status.REPLIED,
            )  # fmt: skip
    except IntegrityError:
        return False
    return True


def _server(asked: Asked | Pressed) -> str:
    return server_of(guild_id=asked.guild_id, user_id=asked.user_id)


def _tell(text: str) -> dict[str, Any]:
    """A response only the member sees."""
    return {"type": MESSAGE, "data": notice_message(text, ephemeral=True)}


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return "00000000-0000-0000-0000-000000000000"


def _queue_answer(row_id: int) -> None:
    """The one place a service queues the answer (the task calls replies, never this module)."""
    background.enqueue(discord_answer, row_id)


def discord_settings_save(
    *, project: Project, application_id: str, public_key: str, bot_token: str, forget: bool
) -> Project:
    """Store a project's Discord settings: a bot token left empty keeps the stored one;
    `forget` disconnects (every request refused until an application is saved again)."""
    if forget:
        application_id = public_key = ""
        project.set_discord_bot_token("")
    if bot_token:
        project.set_discord_bot_token(bot_token)
    project.discord_application_id = application_id
    project.discord_public_key = public_key
    project.save(
        update_fields=[
            "discord_application_id", "discord_public_key", "discord_bot_token_sealed",
            "discord_bot_token_last4",
        ]
    )  # fmt: skip
    return project


def discord_commands_register(*, project: Project) -> str:
    """Register `/ask` for the project's application with its bot token; what went wrong in
    plain words, or "" when Discord took it."""
    token = project.discord_bot_token()
    if not (project.discord_application_id and token):
        return "Save the application id and the bot token first."
    command = ask_command(name=project.name, max_chars=settings.ASKDOCS_MAX_QUESTION_CHARS)
    try:
        web_api.register_commands(
            application_id=project.discord_application_id, bot_token=token, commands=[command]
        )
    except web_api.DiscordError as error:
        if error.status == 401:
            return "Discord does not accept the saved bot token."
        if error.status in (403, 404):
            return (
                "Discord refused: the bot token is not this application's, or the application "
                f"id is wrong ({error.message})."
            )
        return f"Discord refused the command: {error.message} ({error.status})."
    except httpx.HTTPError as error:
        return f"Discord could not be reached from this server: {type(error).__name__}."
    return ""
