"""What the background lane does for the Discord door (the task calls this, never
services.py): answer a deferred `/ask` and write the answer in place of "… is thinking", at
most once; the rest of a long answer follows in more messages."""

from __future__ import annotations

import logging
from typing import Any

import httpx
from django.utils import timezone

from assistant import admission
from assistant.ask import intake
from assistant.ask.selectors import conversation_history
from assistant.ask.services import ask
from assistant.discord import web_api
from assistant.discord.interactions import member_key, server_of
from assistant.discord.messages import answer_messages, notice_message, refusal_messages
from assistant.errors import UNAVAILABLE
from assistant.models import DiscordInteraction, Interaction
from assistant.sealing import unseal

logger = logging.getLogger(__name__)

Status = DiscordInteraction.Status
#: Exchanges (question + answer) of the conversation fed into the prompt and the retrieval query.
HISTORY_EXCHANGES = 10


def discord_answer_post(*, row_id: int) -> None:
    """Answer a deferred question with its conversation's last exchanges and write it.
    Claimed first, so a task run twice (a redelivered Celery message) writes once."""
    claimed = DiscordInteraction.objects.filter(pk=row_id, status=Status.QUEUED).update(
        status=Status.ANSWERING
    )
    if not claimed:
        logger.info("Discord question %s is not waiting for an answer; nothing to do", row_id)
        return
    row = DiscordInteraction.objects.select_related("project").get(pk=row_id)
    messages, interaction = _answer(row)
    try:
        token = unseal(row.token_sealed)
        message_id = web_api.edit_original(
            application_id=row.application_id, token=token, message=messages[0]
        )
        for message in messages[1:]:
            web_api.follow_up(application_id=row.application_id, token=token, message=message)
    except (web_api.DiscordError, httpx.HTTPError, ValueError) as error:
        cause = str(error) if isinstance(error, web_api.DiscordError) else type(error).__name__
        logger.warning("Discord answer to %s was not written: %s", row.discord_id, cause)
        DiscordInteraction.objects.filter(pk=row_id).update(
            status=Status.FAILED, error=cause[:200], interaction=interaction, token_sealed=""
        )
        return
    DiscordInteraction.objects.filter(pk=row_id).update(
        status=Status.REPLIED, message_id=message_id, interaction=interaction,
        replied_at=timezone.now(), token_sealed="",
    )  # fmt: skip


def _answer(row: DiscordInteraction) -> tuple[list[dict[str, Any]], Interaction | None]:
    project = row.project
    handoff = bool(project.contact_support)
    try:
        history = conversation_history(
            project=project, conversation_id=row.conversation_id, exchanges=HISTORY_EXCHANGES
        )
        # The member's own memory ("remember …"), as a signed-in widget user has theirs.
        asked = intake.let_in(
            project, question=row.text, conversation_id=row.conversation_id,
            history=tuple(history), user_key=member_key(row.user_id),
            client=f"discord:{server_of(guild_id=row.guild_id, user_id=row.user_id)}:{row.user_id}",
        )  # fmt: skip
        try:
            # Its turn among every door's questions, or told at once when the server is full.
            with admission.admit(project.public_key) as ticket:
                result = ask(asked, channel=Interaction.Channel.DISCORD, on_written=ticket.release)
        except admission.Overloaded as busy:
            return [notice_message(busy.message)], None
    except Exception:
        logger.exception("answering Discord question %s failed", row.discord_id)
        return [notice_message(UNAVAILABLE)], None
    interaction = (
        Interaction.objects.filter(answer_id=result.answer_id).first() if result.answer_id else None
    )
    if result.error:
        return [notice_message(UNAVAILABLE)], interaction
    ids = {"answer_id": result.answer_id, "conversation_id": row.conversation_id}
    if result.refused or not result.answer.strip():
        return refusal_messages(related=result.related, handoff=handoff, **ids), interaction
    messages = answer_messages(answer=result.answer, sources=result.sources, handoff=handoff, **ids)
    return messages, interaction
