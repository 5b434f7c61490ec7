"""A Slack member is a person to memory and to privacy requests: "remember …" in Slack is kept
as theirs (slack:<team>:<member>), used for them only, and `privacy erase` of that key takes
what the door stored of them, the threads they asked in and their memory, on the real stores.

Transactional: the answers run on the background lane's thread, which sees only committed rows."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from assistant.memory.models import UserFact
from assistant.models import Interaction, SlackEvent
from tests.fake_slack import TEAM_ID
from tests.slack.conftest import MEMBER, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

OTHER = "U0MEMBER02"
ALICE = f"slack:{TEAM_ID}:{MEMBER}"


def replied(count: int) -> None:
    wait_until(lambda: SlackEvent.objects.filter(status="replied").count() == count)


def test_a_member_tells_the_assistant_something_and_only_they_get_it_back(slack, fake_slack):
    slack.message("remember I deploy on Kubernetes", ts="1700002000.000100", channel_type="im")
    [told] = fake_slack.wait_for("chat.postMessage", 1)
    replied(1)
    assert told["text"] == "Got it, I'll remember that: I deploy on Kubernetes."
    assert list(UserFact.objects.values_list("user_key", flat=True)) == [ALICE]

    slack.message("what do you remember about me?", ts="1700002000.000200", channel_type="im")
    slack.message(
        "what do you remember about me?", ts="1700002000.000300", channel_type="im", user=OTHER
    )
    posts = fake_slack.wait_for("chat.postMessage", 3)
    replied(3)
    assert "I deploy on Kubernetes" in posts[1]["text"]
    assert posts[2]["text"] == "I don't remember anything about you yet."
    # Two members are two askers (the log keeps a hash of each member, never their id).
    askers = set(Interaction.objects.values_list("asker", flat=True))
    assert len(askers) == 2 and "" not in askers and MEMBER not in json.dumps(list(askers))


def test_erasing_a_member_takes_their_questions_threads_and_memory(slack, fake_slack):
    slack.message("remember I deploy on Kubernetes", ts="1700002100.000100", channel_type="im")
    slack.mention("How do I rotate an API key?", ts="1700002100.000200")
    slack.message("How do I get my money back?", ts="1700002100.000300", channel_type="im",
                  user=OTHER)  # fmt: skip
    fake_slack.wait_for("chat.postMessage", 3)
    replied(3)

    out = StringIO()
    call_command("privacy", "erase", ALICE, "--yes", stdout=out)
    erased = json.loads(out.getvalue())

    assert (erased["slack_events"], erased["interactions"], erased["facts"]) == (2, 2, 1)
    assert list(SlackEvent.objects.values_list("user_id", flat=True)) == [OTHER]
    assert list(Interaction.objects.values_list("question", flat=True)) == [
        "How do I get my money back?"
    ]
    assert not UserFact.objects.exists()
