"""The Discord door under load: a full answering gate writes the busy message in place of
the deferred response, and a model that does not write in time leaves the quote as the
answer."""

from __future__ import annotations

import pytest

from assistant.models import DiscordInteraction, Interaction
from tests.asking import fill
from tests.discord.conftest import wait_until
from tests.fake_ollama import FakeOllama

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]


def replied() -> bool:
    return DiscordInteraction.objects.filter(status="replied").exists()


def test_a_full_gate_writes_the_busy_message(discord, fake_discord, narrow_gate):
    held = fill(discord.project.public_key)
    try:
        assert discord.ask("How do I rotate an API key?").json() == {"type": 5}
        [edit] = fake_discord.wait_for("edit", 1)
        wait_until(replied)
    finally:
        for ticket in held:
            ticket.release()
    assert edit["content"].startswith("Too many questions right now: please ask again in")
    assert "components" not in edit
    assert not Interaction.objects.exists()


def test_a_model_that_stalls_leaves_the_quote_as_the_answer(discord, fake_discord, settings):
    from assistant.wiring import runtime
    from assistant.wiring.resilience import reset_circuits

    settings.ASKDOCS_WRITE_WITHIN = 1.5
    with FakeOllama() as ollama:
        ollama.tokens = [f" word{i}" for i in range(200)]  # no sentence ever ends
        ollama.stall_between_tokens = 0.1
        settings.OLLAMA_HOST = ollama.url
        runtime.reset()
        reset_circuits()
        discord.project.generator = "ollama"
        discord.project.save()
        try:
            discord.ask("How do I get my money back?")
            [edit] = fake_discord.wait_for("edit", 1)
            wait_until(replied)
        finally:
            runtime.reset()
            reset_circuits()
    logged = Interaction.objects.get()
    assert logged.generator == "extractive" and logged.fallback  # the quote is the answer
    assert "word" not in edit["content"] and "refund" in edit["content"].lower()
