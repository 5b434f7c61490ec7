"""The buttons under an answer, pressed in Slack: thumbs up/down record feedback on that
answer, "Ask a person" hands the thread's conversation to the project's handoff."""

from __future__ import annotations

import pytest

from assistant.models import Handoff, Interaction, SlackEvent
from feedback.models import Feedback
from tests.fake_slack import TEAM_ID
from tests.slack.conftest import CHANNEL, MEMBER, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

THREAD = "1700001000.000100"


def answered(slack, fake_slack) -> tuple[SlackEvent, dict[str, str]]:  # noqa: ANN001
    slack.mention("How do I rotate an API key?", ts=THREAD)
    [post] = fake_slack.wait_for("chat.postMessage", 1)
    wait_until(lambda: SlackEvent.objects.filter(status="replied").exists())
    [row] = [b for b in post["blocks"] if b["type"] == "actions"]
    return SlackEvent.objects.get(), {e["action_id"]: e["value"] for e in row["elements"]}


def test_thumbs_record_feedback_on_that_answer_once_per_member(slack, fake_slack):
    event, values = answered(slack, fake_slack)
    assert "askdocs_handoff" not in values  # the demo project has no person to hand to

    response = slack.press("askdocs_vote_up", values["askdocs_vote_up"], thread_ts=THREAD)
    assert (response.status_code, response.content) == (200, b"")
    [thanks] = fake_slack.wait_for("chat.postEphemeral", 1)
    assert thanks["user"] == MEMBER and thanks["channel"] == CHANNEL
    [vote] = Feedback.objects.all()
    assert vote.interaction_id == event.interaction_id and vote.vote == 1
    assert vote.client_id == f"slack:{TEAM_ID}:{MEMBER}"

    slack.press("askdocs_vote_down", values["askdocs_vote_down"], thread_ts=THREAD)
    fake_slack.wait_for("chat.postEphemeral", 2)
    assert list(Feedback.objects.values_list("vote", flat=True)) == [-1]  # changed, not added


def test_a_press_must_be_signed(slack, fake_slack):
    response = slack.press("askdocs_vote_up", "x", thread_ts=THREAD, secret="not-the-secret")
    assert response.status_code == 401
    replayed = slack.press("askdocs_vote_up", "x", thread_ts=THREAD, timestamp=1_600_000_000)
    assert replayed.status_code == 401
    assert fake_slack.attempts == 0 and not Feedback.objects.exists()


def test_ask_a_person_hands_the_threads_conversation_to_the_handoff(slack, fake_slack):
    slack.project.contact_support = "email"
    slack.project.contact_support_target = "support@acme.example"
    slack.project.save()
    event, values = answered(slack, fake_slack)
    assert values["askdocs_handoff"] == event.conversation_id

    response = slack.press("askdocs_handoff", values["askdocs_handoff"], thread_ts=THREAD)
    assert response.status_code == 200
    posts = fake_slack.wait_for("chat.postMessage", 2)
    assert posts[1]["thread_ts"] == THREAD and "support team" in posts[1]["text"]
    handoff = Handoff.objects.get()
    assert handoff.conversation_id == event.conversation_id and handoff.via == "email"
    [exchange] = handoff.exchanges
    logged = Interaction.objects.get(pk=event.interaction_id)
    assert logged.question in str(exchange)
    assert MEMBER in handoff.message
    wait_until(lambda: Handoff.objects.get().status != "queued")


def test_ask_a_person_for_a_thread_the_app_never_answered_is_refused(slack, fake_slack):
    slack.project.contact_support = "email"
    slack.project.contact_support_target = "support@acme.example"
    slack.project.save()
    slack.press("askdocs_handoff", "slack-unknown", thread_ts=THREAD)
    [note] = fake_slack.wait_for("chat.postEphemeral", 1)
    assert "not one the assistant answered" in note["text"]
    assert not Handoff.objects.exists()


def test_a_signed_payload_that_is_not_json_or_not_ours_is_not_acted_on(slack, fake_slack):
    path = f"/slack/{slack.project.public_key}/interactions"
    broken = slack.signed_post(path, "payload=%7Bnot-json", "application/x-www-form-urlencoded")
    assert broken.status_code == 400
    other = slack.press("someone_elses_button", "x", thread_ts=THREAD)
    assert other.status_code == 200
    events = slack.signed_post(
        f"/slack/{slack.project.public_key}/events", "[1, 2]", "application/json"
    )
    assert events.status_code == 400
    assert fake_slack.attempts == 0 and not Feedback.objects.exists()
