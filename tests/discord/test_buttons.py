"""The buttons under an answer, pressed in Discord: thumbs up/down record feedback on that
answer, "Ask a person" hands the conversation to the project's handoff. Each press is answered
in its own response: the vote's thanks to the member alone, the handoff in the channel."""

from __future__ import annotations

import pytest

from assistant.models import DiscordInteraction, Handoff, Interaction
from feedback.models import Feedback
from tests.discord.conftest import GUILD, MEMBER, OTHER_MEMBER, buttons, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

EPHEMERAL = 64


def answered(discord, fake_discord) -> tuple[DiscordInteraction, dict[str, str]]:  # noqa: ANN001
    discord.ask("How do I rotate an API key?")
    [edit] = fake_discord.wait_for("edit", 1)
    wait_until(lambda: DiscordInteraction.objects.filter(status="replied").exists())
    return DiscordInteraction.objects.get(kind="ask"), buttons(edit)


def test_thumbs_record_feedback_on_that_answer_once_per_member(discord, fake_discord):
    row, values = answered(discord, fake_discord)
    assert "askdocs_handoff" not in values  # the demo project has no person to hand to

    response = discord.press(f"askdocs_vote_up:{values['askdocs_vote_up']}")
    assert response.status_code == 200
    thanks = response.json()
    assert thanks["type"] == 4 and thanks["data"]["flags"] == EPHEMERAL
    assert thanks["data"]["content"] == "Thanks for your feedback."
    [vote] = Feedback.objects.all()
    assert vote.interaction_id == row.interaction_id and vote.vote == 1
    assert vote.client_id == f"discord:{GUILD}:{MEMBER}"

    discord.press(f"askdocs_vote_down:{values['askdocs_vote_down']}")
    assert list(Feedback.objects.values_list("vote", flat=True)) == [-1]  # changed, not added
    discord.press(f"askdocs_vote_up:{values['askdocs_vote_up']}", user=OTHER_MEMBER)
    assert sorted(Feedback.objects.values_list("vote", flat=True)) == [-1, 1]


def test_a_vote_on_an_answer_it_never_gave_is_refused(discord, fake_discord):
    response = discord.press("askdocs_vote_up:0b7f3c9e-2a51-4f1c-9d0e-5b8a7c6d4e21")
    assert "not one the assistant gave" in response.json()["data"]["content"]
    assert not Feedback.objects.exists()


def test_ask_a_person_hands_the_conversation_to_the_handoff(discord, fake_discord):
    discord.project.contact_support = "email"
    discord.project.contact_support_target = "support@acme.example"
    discord.project.save()
    row, values = answered(discord, fake_discord)
    assert values["askdocs_handoff"] == row.conversation_id

    response = discord.press(f"askdocs_handoff:{values['askdocs_handoff']}")
    told = response.json()
    assert told["type"] == 4 and "flags" not in told["data"]  # said in the channel
    assert "support team" in told["data"]["content"]
    handoff = Handoff.objects.get()
    assert handoff.conversation_id == row.conversation_id and handoff.via == "email"
    [exchange] = handoff.exchanges
    assert Interaction.objects.get(pk=row.interaction_id).question in str(exchange)
    assert MEMBER in handoff.message and GUILD in handoff.message
    wait_until(lambda: Handoff.objects.get().status != "queued")


def test_ask_a_person_for_a_conversation_it_never_had_is_refused(discord, fake_discord):
    discord.project.contact_support = "email"
    discord.project.contact_support_target = "support@acme.example"
    discord.project.save()
    response = discord.press("askdocs_handoff:discord-unknown")
    told = response.json()
    assert told["data"]["flags"] == EPHEMERAL
    assert "not one the assistant answered" in told["data"]["content"]
    assert not Handoff.objects.exists()


def test_a_press_seen_before_or_not_ours_changes_nothing(discord, fake_discord):
    _, values = answered(discord, fake_discord)
    up = f"askdocs_vote_up:{values['askdocs_vote_up']}"
    assert discord.press(up, discord_id="1200000000000000888").json()["type"] == 4
    Feedback.objects.all().delete()
    again = discord.press(up, discord_id="1200000000000000888")
    assert again.json() == {"type": 6}  # acknowledged, nothing done
    assert discord.press("someone_elses_button:1").json() == {"type": 6}
    assert not Feedback.objects.exists()


def test_a_press_must_be_signed(discord, fake_discord):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    forged = discord.press("askdocs_vote_up:x", key=Ed25519PrivateKey.generate())
    replayed = discord.press("askdocs_vote_up:x", timestamp=1_600_000_000)
    assert forged.status_code == replayed.status_code == 401
    assert not DiscordInteraction.objects.exists() and not Feedback.objects.exists()
