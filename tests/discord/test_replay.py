"""`evaluate`'s conversation sets asked through the Discord door give the answers REST gives: ten
two-turn conversations of the Ray docs set, each asked over REST (the conversation id carried)
and with two `/ask`s by one member in a channel of its own, answered by the real pipeline from
the same indexed passages and written through a fake Discord API on a loopback port.

Transactional: the Discord answers run on the background lane's thread, which sees only
committed rows."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from assistant.discord.messages import answer_messages, refusal_messages
from assistant.models import DiscordInteraction, Interaction
from tests.discord.conftest import (
    APPLICATION_ID,
    BOT_TOKEN,
    CHANNEL,
    PUBLIC_KEY,
    DiscordRequests,
    wait_until,
)
from tests.replay import RestAsker, conversations, needs_ray, ray_project, shown_urls

pytestmark = [
    pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo"), needs_ray,
]  # fmt: skip

_LINK = re.compile(r"\]\(<(https?://[^>]+)>\)")


def written(expected: dict) -> list[str]:
    """The messages Discord shows for a REST answer (its ids play no part in their text)."""
    ids = {"answer_id": expected["answer_id"], "conversation_id": "-", "handoff": False}
    if expected["refused"]:
        messages = refusal_messages(related=expected["related"], **ids)
    else:
        messages = answer_messages(answer=expected["answer"], sources=expected["sources"], **ids)
    return [message["content"] for message in messages]


def replied(count: int) -> None:
    wait_until(lambda: DiscordInteraction.objects.filter(status="replied").count() == count)


def test_ten_of_evaluates_conversations_get_the_same_answers_in_discord_as_over_rest(
    client, fake_discord
):
    replayed = conversations()
    project = ray_project("Ray docs (replayed in Discord)", replayed)
    project.discord_application_id = APPLICATION_ID
    project.discord_public_key = PUBLIC_KEY
    project.set_discord_bot_token(BOT_TOKEN)
    project.save()
    rest, discord = RestAsker(client, project), DiscordRequests(client, project, fake_discord)

    compared = 0
    for number, conversation in enumerate(replayed):
        over_rest = rest.conversation(conversation.turns)
        # A channel of its own: a member's questions in one channel are one conversation.
        channel = str(int(CHANNEL) + 1000 + number)
        turns = zip(conversation.turns, over_rest, strict=True)
        for turn, (question, expected) in enumerate(turns):
            where = f"{conversation.id}, turn {turn + 1}"
            before = len(fake_discord.sent())
            assert discord.ask(question, channel=channel).json() == {"type": 5}
            replied(2 * number + turn + 1)
            contents = [message["content"] for message in fake_discord.sent()[before:]]
            assert contents == written(expected), where
            urls = [unquote(url) for url in _LINK.findall("\n".join(contents))]
            assert list(dict.fromkeys(urls)) == shown_urls(expected), where

            row = DiscordInteraction.objects.get(kind="ask", text=question, channel_id=channel)
            logged = Interaction.objects.get(pk=row.interaction_id)
            over = Interaction.objects.get(answer_id=expected["answer_id"])
            assert logged.channel == "discord" and logged.conversation_id == row.conversation_id
            assert logged.retrieval_query == over.retrieval_query, where
            assert (logged.answer, logged.refused) == (expected["answer"], expected["refused"])
            compared += 1
        both = DiscordInteraction.objects.filter(channel_id=channel)
        assert len({row.conversation_id for row in both}) == 1
    assert compared == 2 * len(replayed) == 20
