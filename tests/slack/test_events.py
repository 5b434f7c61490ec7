"""Questions asked in Slack, answered by the real pipeline from the demo project's documents
and posted in their thread through a fake Slack Web API on a loopback port.

Transactional: the answer runs on the background lane's thread, with its own database
connection, which sees only committed rows."""

from __future__ import annotations

import re

import pytest

from assistant.models import Interaction, SlackEvent
from assistant.rag.types import SORRY
from tests.fake_slack import BOT_USER_ID
from tests.slack.conftest import CHANNEL, MEMBER, SIGNING_SECRET, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

ROTATE = "How do I rotate an API key?"
TOLD = r"Too many questions at once: please ask again in \d+ seconds?\."


def section_texts(post: dict) -> str:
    return "\n".join(b["text"]["text"] for b in post["blocks"] if b["type"] == "section")


def buttons(post: dict) -> dict[str, str]:
    [row] = [b for b in post["blocks"] if b["type"] == "actions"]
    return {element["action_id"]: element["value"] for element in row["elements"]}


def test_a_mention_is_answered_in_its_thread_with_its_sources_as_links(slack, fake_slack):
    response = slack.mention(ROTATE, ts="1700000100.000100")
    assert (response.status_code, response.content) == (200, b"")

    [post] = fake_slack.wait_for("chat.postMessage", 1)
    assert post["channel"] == CHANNEL and post["thread_ts"] == "1700000100.000100"
    text = section_texts(post)
    assert "*Sources*" in text and "<https://help.acme.example/api-keys" in text
    event = SlackEvent.objects.get()
    assert event.text == ROTATE  # the mention taken out
    wait_until(lambda: SlackEvent.objects.get().status == "replied")
    event.refresh_from_db()
    logged = Interaction.objects.get(pk=event.interaction_id)
    assert logged.channel == "slack" and not logged.refused and logged.question == ROTATE
    assert logged.conversation_id == event.conversation_id
    assert buttons(post)["askdocs_vote_up"] == str(logged.answer_id)
    assert post["text"] and "<b>" not in post["text"]


def test_a_reply_in_the_thread_is_a_follow_up_of_the_same_conversation(
    slack, fake_slack, fake_ollama, settings
):
    from assistant.wiring import runtime
    from assistant.wiring.resilience import reset_circuits

    settings.OLLAMA_HOST = fake_ollama.url
    runtime.reset()
    reset_circuits()
    slack.project.generator = "ollama"
    slack.project.save()
    try:
        slack.mention(ROTATE, ts="1700000200.000100")
        fake_slack.wait_for("chat.postMessage", 1)
        wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == 1)
        # A reply in the thread, without a mention: the app has answered there, so it is a
        # follow-up, whether or not the channel is watched.
        slack.message(
            "And how often should I do it?", ts="1700000200.000300", thread_ts="1700000200.000100"
        )
        posts = fake_slack.wait_for("chat.postMessage", 2)
        wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == 2)
    finally:
        runtime.reset()
        reset_circuits()
    assert posts[1]["thread_ts"] == "1700000200.000100"
    first, second = Interaction.objects.order_by("created_at")
    assert first.conversation_id == second.conversation_id != ""
    prompts = [r.body["messages"] for r in fake_ollama.requests_to("/api/chat")]
    assert any(ROTATE in str(m) for m in prompts[-1])  # the first exchange is in the prompt


def test_a_retried_delivery_is_acknowledged_and_never_answered_twice(slack, fake_slack):
    first = slack.mention(ROTATE, ts="1700000300.000100", event_id="Ev0RETRY01")
    retry = slack.mention(
        ROTATE, ts="1700000300.000100", event_id="Ev0RETRY01",
        HTTP_X_SLACK_RETRY_NUM="1", HTTP_X_SLACK_RETRY_REASON="http_timeout",
    )  # fmt: skip
    assert first.status_code == retry.status_code == 200 and retry.content == b""
    # The lane answers in order: once the next question is answered, a second answer to the
    # first would already have been posted.
    slack.mention("Do you offer a student discount?", ts="1700000300.000500")
    posts = fake_slack.wait_for("chat.postMessage", 2)
    wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == 2)
    assert [p["thread_ts"] for p in posts] == ["1700000300.000100", "1700000300.000500"]
    assert SlackEvent.objects.filter(event_id="Ev0RETRY01").count() == 1


@pytest.mark.parametrize(
    "forgery",
    [
        {"timestamp": 1_600_000_000},  # a request recorded long ago, replayed
        {"secret": "another-signing-secret"},
        {"HTTP_X_SLACK_SIGNATURE": "v0=" + "0" * 64},
    ],
)
def test_a_replayed_or_badly_signed_request_is_refused_and_nothing_is_stored(
    slack, fake_slack, forgery
):
    response = slack.mention(ROTATE, ts="1700000400.000100", **forgery)
    assert response.status_code == 401
    assert not SlackEvent.objects.exists() and not Interaction.objects.exists()
    assert fake_slack.attempts == 0


def test_a_body_changed_after_signing_is_refused(slack, fake_slack):
    import json
    import time

    from tests.slack.conftest import signature

    body = json.dumps(slack.envelope({"type": "app_mention", "user": MEMBER, "text": "hi",
                                      "ts": "1.1", "channel": CHANNEL}))  # fmt: skip
    stamp = str(int(time.time()))
    response = slack.client.post(
        f"/slack/{slack.project.public_key}/events", body.replace("hi", "ho"),
        content_type="application/json", HTTP_X_SLACK_REQUEST_TIMESTAMP=stamp,
        HTTP_X_SLACK_SIGNATURE=signature(SIGNING_SECRET, stamp, body),
    )  # fmt: skip
    assert response.status_code == 401 and not SlackEvent.objects.exists()


def test_it_answers_slacks_url_check(slack):
    response = slack.event({"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV2"})
    assert response.status_code == 200
    assert response.json() == {"challenge": "3eZbrw1aBm2rZgRNFdxV2"}


def test_a_project_without_a_slack_app_answers_no_events(slack):
    slack.project.set_slack_signing_secret("")
    slack.project.save()
    assert slack.event({"type": "url_verification", "challenge": "x"}).status_code == 404
    assert slack.client.get(f"/slack/{slack.project.public_key}/events").status_code == 405
    assert slack.client.post("/slack/pk_nope/events", "{}", "application/json").status_code == 404


def test_a_refusal_says_so_and_offers_the_related_pages(slack, fake_slack):
    slack.mention("Can I pay my invoice by cheque?", ts="1700000500.000100")
    [post] = fake_slack.wait_for("chat.postMessage", 1)
    wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == 1)
    text = section_texts(post)
    assert text.startswith(SORRY.replace("&", "&amp;"))
    assert "*These pages may help*" in text
    assert "<https://help.acme.example/plans#invoices-and-payment-methods|" in text
    assert "askdocs_vote_down" in buttons(post)


def test_direct_messages_and_watched_channels_are_questions_bots_and_edits_are_not(
    slack, fake_slack
):
    slack.message("How do I get my money back?", ts="1700000600.000100")  # not watched
    slack.message(ROTATE, ts="1700000600.000200", bot_id="B0OTHER01")
    slack.message(ROTATE, ts="1700000600.000300", subtype="message_changed")
    slack.message(ROTATE, ts="1700000600.000400", user=BOT_USER_ID)
    slack.message(f"<@{BOT_USER_ID}> {ROTATE}", ts="1700000600.000450")  # its app_mention asks
    assert not SlackEvent.objects.exists()

    slack.message("How do I get my money back?", ts="1700000600.000500", channel_type="im")
    slack.message(f"<@{BOT_USER_ID}> {ROTATE}", ts="1700000600.000550", channel_type="im")
    slack.project.slack_channels = [CHANNEL]
    slack.project.save()
    slack.message("How do I get my money back?", ts="1700000600.000600")
    posts = fake_slack.wait_for("chat.postMessage", 3)
    wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == 3)
    assert sorted(p["thread_ts"] for p in posts) == [
        "1700000600.000500", "1700000600.000550", "1700000600.000600",
    ]  # fmt: skip


def test_a_flood_from_one_workspace_is_rate_limited(slack, fake_slack, settings):
    settings.ASKDOCS_RATE_SLACK_PER_WORKSPACE = "3/m"
    for number in range(5):
        slack.message(
            "Do you offer a student discount?", ts=f"1700000700.00010{number}",
            channel_type="im", user=f"U0FLOOD0{number}",
        )  # fmt: skip
    statuses = list(SlackEvent.objects.order_by("pk").values_list("status", flat=True))
    assert statuses[3:] == ["limited", "limited"]
    # Each member left unanswered is told so, in a note only they see, with when to ask again.
    notes = fake_slack.wait_for("chat.postEphemeral", 2)
    assert sorted(note["user"] for note in notes) == ["U0FLOOD03", "U0FLOOD04"]
    for note in notes:
        assert re.fullmatch(TOLD, note["text"]), note["text"]
        assert 1 <= int(re.search(r"\d+", note["text"])[0]) <= 60
    fake_slack.wait_for("chat.postMessage", 3)
    wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == 3)
    assert len(fake_slack.made("chat.postMessage")) == 3


def test_a_member_over_their_own_limit_is_told_when_to_ask_again_once(slack, fake_slack, settings):
    settings.ASKDOCS_RATE_SLACK_PER_USER = "1/m"
    for n in range(4):
        slack.message(
            "Do you offer a student discount?", ts=f"1700000800.00010{n}", channel_type="im"
        )
    statuses = list(SlackEvent.objects.order_by("pk").values_list("status", flat=True))
    assert statuses[1:] == ["limited", "limited", "limited"]
    fake_slack.wait_for("chat.postEphemeral", 1)
    # The lane works in order: once another member's question is answered, a second note to
    # the first member would already have been posted.
    slack.message("How do I get my money back?", ts="1700000800.000200", channel_type="im",
                  user="U0MEMBER02")  # fmt: skip
    fake_slack.wait_for("chat.postMessage", 2)
    wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == 2)
    # Told once, in the thread of the first question left unanswered, however many follow.
    [note] = fake_slack.made("chat.postEphemeral")
    assert (note["user"], note["thread_ts"]) == (MEMBER, "1700000800.000101")
    assert re.fullmatch(TOLD, note["text"]), note["text"]
