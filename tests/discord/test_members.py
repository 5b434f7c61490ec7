"""A Discord user is a person to memory and to privacy requests: "remember …" asked with /ask is
kept as theirs (discord:<user id>, in every server), used for them only, and `privacy erase` of
that key takes what the door stored of them, their conversations and their memory, on the real
stores.

Transactional: the answers run on the background lane's thread, which sees only committed rows."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from assistant.memory.models import UserFact
from assistant.models import DiscordInteraction, Interaction
from tests.discord.conftest import MEMBER, OTHER_MEMBER, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

ALICE = f"discord:{MEMBER}"
ANOTHER_SERVER = "1100000000000009999"


def replied(count: int) -> None:
    wait_until(lambda: DiscordInteraction.objects.filter(status="replied").count() == count)


def test_a_member_tells_the_assistant_something_and_gets_it_back_in_any_server(
    discord, fake_discord
):
    discord.ask("remember I deploy on Kubernetes")
    [told] = fake_discord.wait_for("edit", 1)
    replied(1)
    assert told["content"].startswith("Got it, I'll remember that: I deploy on Kubernetes.")
    assert list(UserFact.objects.values_list("user_key", flat=True)) == [ALICE]

    discord.ask("what do you remember about me?", guild=ANOTHER_SERVER)
    discord.ask("what do you remember about me?", user=OTHER_MEMBER)
    edits = fake_discord.wait_for("edit", 3)
    replied(3)
    assert "I deploy on Kubernetes" in edits[1]["content"]
    assert edits[2]["content"].startswith("I don't remember anything about you yet.")
    # Two members are two askers (the log keeps a hash of each member, never their id).
    askers = set(Interaction.objects.values_list("asker", flat=True))
    assert len(askers) == 2 and "" not in askers and MEMBER not in json.dumps(list(askers))


def test_erasing_a_member_takes_their_questions_everywhere_and_their_memory(discord, fake_discord):
    discord.ask("remember I deploy on Kubernetes")
    discord.ask("How do I rotate an API key?", guild=ANOTHER_SERVER)
    discord.ask("How do I get my money back?", user=OTHER_MEMBER)
    fake_discord.wait_for("edit", 3)
    replied(3)

    out = StringIO()
    call_command("privacy", "erase", ALICE, "--yes", stdout=out)
    erased = json.loads(out.getvalue())

    assert (erased["discord_interactions"], erased["interactions"], erased["facts"]) == (2, 2, 1)
    assert list(DiscordInteraction.objects.values_list("user_id", flat=True)) == [OTHER_MEMBER]
    assert list(Interaction.objects.values_list("question", flat=True)) == [
        "How do I get my money back?"
    ]
    assert not UserFact.objects.exists()
