"""Questions asked with /ask in Discord, answered by the real pipeline from the demo project's
documents and written in place of the deferred response through a fake Discord API on a
loopback port.

Transactional: the answer runs on the background lane's thread, with its own database
connection, which sees only committed rows."""

from __future__ import annotations

import json
import re
import time

import pytest

from assistant.models import DiscordInteraction, Interaction
from assistant.rag.types import SORRY
from tests.discord.conftest import (
    CHANNEL,
    OTHER_MEMBER,
    PUBLIC_KEY,
    SIGNING_KEY,
    THREAD,
    buttons,
    signature,
    wait_until,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

ROTATE = "How do I rotate an API key?"
DEFERRED = {"type": 5}
TOLD = r"Too many questions at once: please ask again in \d+ seconds?\."


def replied(count: int) -> None:
    wait_until(lambda: DiscordInteraction.objects.filter(status="replied").count() == count)


def test_an_ask_is_deferred_then_answered_in_place_with_its_sources_as_links(discord, fake_discord):
    response = discord.ask(ROTATE)
    assert (response.status_code, response.json()) == (200, DEFERRED)

    [edit] = fake_discord.wait_for("edit", 1)
    replied(1)
    assert "**Sources**" in edit["content"]
    assert "(<https://help.acme.example/api-keys" in edit["content"]  # a link, no preview card
    assert edit["allowed_mentions"] == {"parse": []}  # nothing in an answer pings anyone
    row = DiscordInteraction.objects.get()
    assert (row.text, row.channel_id, row.token_sealed) == (ROTATE, CHANNEL, "")
    logged = Interaction.objects.get(pk=row.interaction_id)
    assert logged.channel == "discord" and not logged.refused and logged.question == ROTATE
    assert logged.conversation_id == row.conversation_id
    assert logged.answer.split()[0] in edit["content"]
    assert buttons(edit)["askdocs_vote_up"] == str(logged.answer_id)
    assert fake_discord.sent("follow_up") == []


def test_a_follow_up_in_the_same_channel_continues_the_conversation(
    discord, fake_discord, fake_ollama, settings
):
    from assistant.wiring import runtime
    from assistant.wiring.resilience import reset_circuits

    settings.OLLAMA_HOST = fake_ollama.url
    runtime.reset()
    reset_circuits()
    discord.project.generator = "ollama"
    discord.project.save()
    try:
        discord.ask(ROTATE)
        fake_discord.wait_for("edit", 1)
        replied(1)
        discord.ask("And how often should I do it?")
        fake_discord.wait_for("edit", 2)
        replied(2)
    finally:
        runtime.reset()
        reset_circuits()
    first, second = Interaction.objects.order_by("created_at")
    assert first.conversation_id == second.conversation_id != ""
    prompts = [r.body["messages"] for r in fake_ollama.requests_to("/api/chat")]
    assert any(ROTATE in str(m) for m in prompts[-1])  # the first exchange is in the prompt


def test_a_thread_is_one_conversation_and_a_channel_is_each_members_own(discord, fake_discord):
    discord.ask(ROTATE, channel=THREAD, channel_type=11)
    discord.ask("Do you offer a student discount?", channel=THREAD, channel_type=11,
                user=OTHER_MEMBER)  # fmt: skip
    discord.ask(ROTATE)
    discord.ask(ROTATE, user=OTHER_MEMBER)
    fake_discord.wait_for("edit", 4)
    replied(4)
    in_thread, in_thread_too, mine, theirs = (
        row.conversation_id for row in DiscordInteraction.objects.order_by("pk")
    )
    assert in_thread == in_thread_too
    assert len({in_thread, mine, theirs}) == 3


def test_a_repeated_interaction_is_acknowledged_and_answered_once(discord, fake_discord):
    first = discord.ask(ROTATE, discord_id="1200000000000000777")
    again = discord.ask(ROTATE, discord_id="1200000000000000777")
    assert first.json() == again.json() == DEFERRED
    # The lane answers in order: once the next question is answered, a second answer to the
    # first would already have been written.
    discord.ask("Do you offer a student discount?")
    fake_discord.wait_for("edit", 2)
    replied(2)
    assert len(fake_discord.sent("edit")) == 2
    assert DiscordInteraction.objects.filter(discord_id="1200000000000000777").count() == 1


@pytest.mark.parametrize(
    "forgery",
    [
        {"timestamp": int(time.time()) - 301},  # recorded over five minutes ago, replayed
        {"timestamp": 1_600_000_000},
        {"timestamp": int(time.time()) + 3600},
        {"key": "another application's key"},
        {"HTTP_X_SIGNATURE_ED25519": "0" * 128},
        {"HTTP_X_SIGNATURE_ED25519": ""},
        {"HTTP_X_SIGNATURE_TIMESTAMP": "yesterday"},
    ],
)
def test_a_replayed_or_badly_signed_request_is_refused_and_nothing_is_stored(
    discord, fake_discord, forgery
):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if forgery.get("key"):
        forgery["key"] = Ed25519PrivateKey.generate()
    response = discord.ask(ROTATE, **forgery)
    assert response.status_code == 401
    assert not DiscordInteraction.objects.exists() and not Interaction.objects.exists()
    assert fake_discord.attempts == 0


def test_a_body_changed_after_signing_is_refused(discord, fake_discord):
    body = json.dumps(discord.interaction(1))
    stamp = str(int(time.time()))
    response = discord.client.post(
        discord.path, body.replace('"type": 1', '"type": 2'), content_type="application/json",
        HTTP_X_SIGNATURE_TIMESTAMP=stamp,
        HTTP_X_SIGNATURE_ED25519=signature(SIGNING_KEY, stamp, body),
    )  # fmt: skip
    assert response.status_code == 401


def test_it_answers_discords_ping_only_when_signed(discord):
    ping = discord.signed_post(json.dumps({"id": "1", "application_id": "1", "type": 1}))
    assert (ping.status_code, ping.json()) == (200, {"type": 1})
    unsigned = discord.client.post(discord.path, '{"type": 1}', content_type="application/json")
    assert unsigned.status_code == 401


def test_a_project_without_a_discord_application_answers_nothing(discord):
    discord.project.discord_public_key = ""
    discord.project.save()
    assert discord.signed_post('{"type": 1}').status_code == 404
    assert discord.client.get(discord.path).status_code == 405
    assert (
        discord.client.post("/discord/pk_nope/interactions", "{}", "application/json").status_code
        == 404
    )
    discord.project.discord_public_key = PUBLIC_KEY
    discord.project.save()
    assert discord.signed_post("[1, 2]").status_code == 400


def test_a_refusal_says_so_and_offers_the_related_pages(discord, fake_discord):
    discord.ask("Can I pay my invoice by cheque?")
    [edit] = fake_discord.wait_for("edit", 1)
    replied(1)
    assert edit["content"].startswith(SORRY)
    assert "**These pages may help**" in edit["content"]
    assert "(<https://help.acme.example/plans#invoices-and-payment-methods>)" in edit["content"]
    assert "askdocs_vote_down" in buttons(edit)


def test_what_is_no_question_is_told_to_the_member_alone(discord, fake_discord):
    response = discord.ask("   ")
    assert response.status_code == 200
    answer = response.json()
    assert answer["type"] == 4 and answer["data"]["flags"] == 64
    assert not DiscordInteraction.objects.exists() and fake_discord.attempts == 0


def test_a_flood_from_one_server_is_told_to_wait(discord, fake_discord, settings):
    settings.ASKDOCS_RATE_DISCORD_PER_SERVER = "3/m"
    answers = [
        discord.ask("Do you offer a student discount?", user=f"11000000000000005{n:02d}").json()
        for n in range(5)
    ]
    assert answers[:3] == [DEFERRED] * 3
    assert all(a["type"] == 4 and a["data"]["flags"] == 64 for a in answers[3:])
    # Each member left unanswered is told so (to them alone), with when to ask again.
    for answer in answers[3:]:
        assert re.fullmatch(TOLD, answer["data"]["content"]), answer
        assert 1 <= int(re.search(r"\d+", answer["data"]["content"])[0]) <= 60
    statuses = list(DiscordInteraction.objects.order_by("pk").values_list("status", flat=True))
    assert statuses[3:] == ["limited", "limited"]
    fake_discord.wait_for("edit", 3)
    replied(3)
    assert len(fake_discord.sent("edit")) == 3
    # Another server is counted on its own.
    assert (
        discord.ask("Do you offer a student discount?", guild="1100000000000009999").json()
        == DEFERRED
    )


def test_a_member_over_their_own_limit_is_told_to_wait(discord, fake_discord, settings):
    settings.ASKDOCS_RATE_DISCORD_PER_USER = "1/m"
    assert discord.ask("Do you offer a student discount?").json() == DEFERRED
    told = discord.ask("Do you offer a student discount?").json()
    assert (told["type"], told["data"]["flags"]) == (4, 64)
    assert re.fullmatch(TOLD, told["data"]["content"]), told
    assert discord.ask("Do you offer a student discount?", user=OTHER_MEMBER).json() == DEFERRED
    fake_discord.wait_for("edit", 2)
    replied(2)


def test_a_long_answer_goes_in_messages_of_at_most_2000_characters(
    discord, fake_discord, fake_ollama, settings
):
    from assistant.wiring import runtime
    from assistant.wiring.resilience import reset_circuits

    sentences = (
        "Create the new key first, deploy it, then click **Revoke** next to the old key [1]. "
        "A revoked key stops working within one minute [1]. Keys that have not been used for "
        "180 days are revoked automatically, and the account owner receives an e-mail a week "
        "before [1].\n\n"
    )
    fake_ollama.tokens = [sentences] * 14  # about 3,500 characters, all from the passage
    settings.OLLAMA_HOST = fake_ollama.url
    runtime.reset()
    reset_circuits()
    discord.project.generator = "ollama"
    discord.project.save()
    try:
        discord.ask(ROTATE)
        [edit] = fake_discord.wait_for("edit", 1)
        replied(1)
    finally:
        runtime.reset()
        reset_circuits()
    follow_ups = fake_discord.sent("follow_up")
    messages = [edit, *follow_ups]
    logged = Interaction.objects.get()
    assert len(logged.answer) > 2000 and follow_ups
    assert all(len(m["content"]) <= 2000 for m in messages)
    assert all(m["content"].rstrip().endswith("[1].") for m in messages[:-1])  # at sentences
    assert all("components" not in m for m in messages[:-1])
    assert "askdocs_vote_up" in buttons(messages[-1])  # the buttons under the last
    assert "**Sources**" in messages[-1]["content"]
    written = " ".join(m["content"] for m in messages).split("**Sources**")[0]
    assert " ".join(written.split()) == " ".join(logged.answer.split())  # nothing lost


def test_an_answer_discord_refuses_is_marked_failed(discord, fake_discord):
    fake_discord.fail_next("edit", status=404, code=10015, message="Unknown Webhook")
    discord.ask(ROTATE)
    wait_until(lambda: DiscordInteraction.objects.filter(status="failed").exists())
    row = DiscordInteraction.objects.get()
    assert "Unknown Webhook" in row.error and row.token_sealed == ""
    assert row.interaction is not None  # the answer is in the log all the same


def test_a_message_discord_rate_limits_is_sent_again_after_the_wait_it_names(discord, fake_discord):
    fake_discord.fail_next("edit", status=429, message="You are being rate limited.",
                           retry_after=0.6)  # fmt: skip
    discord.ask(ROTATE)
    [edit] = fake_discord.wait_for("edit", 1)
    replied(1)
    assert "**Sources**" in edit["content"]
    (refused_at, _, refused), (sent_at, _, sent) = fake_discord.deliveries
    assert (refused, sent) == (429, 200)
    assert sent_at - refused_at >= 0.6


def test_a_message_still_rate_limited_after_two_more_tries_is_marked_failed(discord, fake_discord):
    for _ in range(3):
        fake_discord.fail_next("edit", status=429, message="You are being rate limited.",
                               retry_after=0.05)  # fmt: skip
    discord.ask(ROTATE)
    wait_until(lambda: DiscordInteraction.objects.filter(status="failed").exists())
    assert [status for _, _, status in fake_discord.deliveries] == [429, 429, 429]
    assert "429" in DiscordInteraction.objects.get().error


def test_a_rate_limit_longer_than_the_lane_waits_is_not_waited_out(discord, fake_discord):
    fake_discord.fail_next("edit", status=429, message="You are being rate limited.",
                           retry_after=60.0)  # fmt: skip
    discord.ask(ROTATE)
    wait_until(lambda: DiscordInteraction.objects.filter(status="failed").exists(), timeout=30)
    assert [status for _, _, status in fake_discord.deliveries] == [429]


def test_personal_data_is_masked_and_the_console_shows_the_channel(
    discord, fake_discord, django_user_model
):
    discord.ask("How do I get my money back? Mail jane.doe@example.com")
    fake_discord.wait_for("edit", 1)
    replied(1)
    row = DiscordInteraction.objects.get()
    masked = "How do I get my money back? Mail [email]"
    assert row.text == Interaction.objects.get().question == masked

    staff = django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    discord.client.force_login(staff)
    listed = discord.client.get(
        "/admin/conversations/", {"project": discord.project.pk, "channel": "discord"}
    ).content.decode()
    assert "How do I get my money back?" in listed and "jane.doe" not in listed
    elsewhere = discord.client.get(
        "/admin/conversations/", {"project": discord.project.pk, "channel": "slack"}
    ).content.decode()
    assert "How do I get my money back?" not in elsewhere
    transcript = discord.client.get(
        "/admin/conversations/view/", {"project": discord.project.pk, "id": row.conversation_id}
    ).content.decode()
    assert "Discord" in transcript and masked in transcript
