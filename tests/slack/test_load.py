"""The Slack door under load: a full answering gate posts the busy message in the thread, and
a model that does not write in time leaves the quote as the posted answer."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, SlackEvent
from assistant.slack.blocks import WRITING
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
    # The quote, posted at once, is updated in place into the answer: the same text, and now
    # the buttons on it.
    [answer] = fake_slack.made("chat.update")
    assert answer["ts"] == SlackEvent.objects.get().reply_ts
    assert answer["text"] == post["text"] and "askdocs_vote_up" in str(answer["blocks"])
    assert WRITING in str(post["blocks"]) and WRITING not in str(answer["blocks"])


def test_a_written_answer_replaces_the_quote_posted_while_the_model_writes(
    slack, fake_slack, settings
):
    from assistant.wiring import runtime
    from assistant.wiring.resilience import reset_circuits

    with FakeOllama() as ollama:
        # A sentence of the demo's refund page: the written answer's check lets it through.
        sentence = "If you are not happy with a purchase, you can ask for a refund within 30 days"
        ollama.tokens = [f" {word}" for word in f"{sentence} of the charge [1].".split()]
        ollama.stall_between_tokens = 0.1
        settings.OLLAMA_HOST = ollama.url
        runtime.reset()
        reset_circuits()
        slack.project.generator = "ollama"
        slack.project.save()
        try:
            slack.mention("How do I get my money back?", ts="1700002200.000100")
            [quote] = fake_slack.wait_for("chat.postMessage", 1)
            # Posted while the model still writes: none of its words are in it yet.
            assert "of the charge [1]" not in quote["text"] and "refund" in quote["text"].lower()
            assert WRITING in str(quote["blocks"]) and "askdocs_vote_up" not in str(quote)
            [answer] = fake_slack.wait_for("chat.update", 1)
            wait_until(lambda: SlackEvent.objects.filter(status="replied").exists())
        finally:
            runtime.reset()
            reset_circuits()
    logged = Interaction.objects.get()
    assert logged.generator.startswith("ollama") and "of the charge [1]" in logged.answer
    event = SlackEvent.objects.get()
    assert answer["ts"] == event.reply_ts and answer["channel"] == quote["channel"]
    assert "of the charge [1]" in answer["text"]
    assert "askdocs_vote_up" in str(answer["blocks"]) and WRITING not in str(answer["blocks"])
    assert [name for name, _ in fake_slack.calls] == ["chat.postMessage", "chat.update"]
