"""`evaluate`'s conversation sets asked through the Slack door give the answers REST gives: ten
two-turn conversations of the Ray docs set, each asked over REST (the conversation id carried)
and in a Slack thread (a mention, then a reply in the thread), answered by the real pipeline
from the same indexed passages and posted through a fake Slack Web API on a loopback port.

Transactional: the Slack answers run on the background lane's thread, which sees only
committed rows."""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

import pytest

from assistant.models import Interaction, SlackEvent
from assistant.rag.types import SORRY
from assistant.slack.blocks import FALLBACK_LIMIT
from assistant.slack.text import escape, mrkdwn
from tests.replay import RestAsker, conversations, needs_ray, ray_project, shown_urls
from tests.slack.conftest import BOT_TOKEN, SIGNING_SECRET, SlackRequests, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo"), needs_ray,
]  # fmt: skip

_LINK = re.compile(r"<(https?://[^|>]+)\|")


def linked_urls(post: dict) -> list[str]:
    """The pages a posted answer links to, as plain URLs, in order."""
    sections = "\n".join(b["text"]["text"] for b in post["blocks"] if b["type"] == "section")
    return [unquote(html.unescape(url)) for url in _LINK.findall(sections)]


def replied(count: int) -> None:
    wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == count)


def test_ten_of_evaluates_conversations_get_the_same_answers_in_slack_as_over_rest(
    client, fake_slack
):
    replayed = conversations()
    project = ray_project("Ray docs (replayed in Slack)", replayed)
    project.set_slack_signing_secret(SIGNING_SECRET)
    project.set_slack_bot_token(BOT_TOKEN)
    project.save()
    rest, slack = RestAsker(client, project), SlackRequests(client, project)

    compared = answered = 0
    for number, conversation in enumerate(replayed):
        over_rest = rest.conversation(conversation.turns)

        thread = f"17000{number:05d}.000100"
        slack.mention(conversation.turns[0], ts=thread)
        fake_slack.wait_for("chat.postMessage", 2 * number + 1)
        # The reply is a follow-up once the app has answered in the thread.
        replied(2 * number + 1)
        slack.message(conversation.turns[1], ts=f"17000{number:05d}.000200", thread_ts=thread)
        posts = fake_slack.wait_for("chat.postMessage", 2 * number + 2)[-2:]
        replied(2 * number + 2)

        events = SlackEvent.objects.filter(thread_ts=thread).order_by("received_at", "pk")
        for turn, (event, post, expected) in enumerate(zip(events, posts, over_rest, strict=True)):
            where = f"{conversation.id}, turn {turn + 1}"
            assert post["thread_ts"] == thread, where
            logged = Interaction.objects.get(pk=event.interaction_id)
            assert logged.channel == "slack" and logged.conversation_id == event.conversation_id
            over = Interaction.objects.get(answer_id=expected["answer_id"])
            assert logged.retrieval_query == over.retrieval_query, where
            assert logged.answer == expected["answer"], where
            assert logged.refused == expected["refused"], where
            if expected["refused"]:
                assert post["text"] == escape(SORRY), where
            else:
                assert post["text"] == mrkdwn(expected["answer"])[:FALLBACK_LIMIT], where
                answered += 1
            assert linked_urls(post) == shown_urls(expected), where
            compared += 1
        # Both turns of each door are one conversation (the second saw the first as history).
        assert len({e.conversation_id for e in events}) == 1
    assert compared == 2 * len(replayed) == 20
    # Not a set of refusals compared with refusals: most turns are answered from the passages.
    assert answered >= 5
