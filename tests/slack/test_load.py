"""The Slack door under load: a full answering gate posts the busy message in the thread, and
a model that does not write in time leaves the quote as the posted answer."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, SlackEvent
from tests.asking import fill
from tests.fake_ollama import FakeOllama
from tests.slack.conftest import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]


def test_a_full_gate_posts_the_busy_message_in_the_thread(slack, fake_slack, narrow_gate):
    held = fill(slack.project.public_key)
    try:
        slack.mention("How do I rotate an API key?", ts="1700002000.000100")
        [post] = fake_slack.wait_for("chat.postMessage", 1)
        wait_until(lambda: SlackEvent.objects.filter(status="replied").exists())
    finally:
        for ticket in held:
            ticket.release()
    assert post["thread_ts"] == "1700002000.000100"
    assert post["text"].startswith("Too many questions right now: please ask again in")
    assert not Interaction.objects.exists()


def test_a_model_that_stalls_leaves_the_quote_as_the_answer(slack, fake_slack, settings):
    from assistant.wiring import runtime
    from assistant.wiring.resilience import reset_circuits

    settings.ASKDOCS_WRITE_WITHIN = 1.5
    with FakeOllama() as ollama:
        ollama.tokens = [f" word{i}" for i in range(200)]  # no sentence ever ends
        ollama.stall_between_tokens = 0.1
        settings.OLLAMA_HOST = ollama.url
        runtime.reset()
        reset_circuits()
        slack.project.generator = "ollama"
        slack.project.save()
        try:
            slack.mention("How do I get my money back?", ts="1700002100.000100")
            [post] = fake_slack.wait_for("chat.postMessage", 1)
            wait_until(lambda: SlackEvent.objects.filter(status="replied").exists())
        finally:
            runtime.reset()
            reset_circuits()
    logged = Interaction.objects.get()
    assert logged.generator == "extractive" and logged.fallback  # the quote is the answer
    assert "word" not in post["text"] and "refund" in post["text"].lower()
