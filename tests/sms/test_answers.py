"""Questions by text, answered by the real pipeline from the project's own documents.

These tests are transactional: the answer runs in a worker thread with its own database
connection, which sees only committed rows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import Interaction, SmsConversation, SmsMessage
from assistant.rag.types import SORRY
from assistant.rag.write.prompting import REMINDER
from assistant.sms.text import CLEARED
from tests.asking import fill
from tests.fake_ollama import unused_url
from tests.sms.conftest import (
    CALLER,
    DOCS_URL,
    FIELD_NUMBER,
    OFFICE_NUMBER,
    twiml_messages,
    wait_until,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

OIL = "How often should I change the generator oil?"


def chats(server) -> list[list[dict]]:  # noqa: ANN001
    return [r.body["messages"] for r in server.requests_to("/api/chat")]


def test_it_answers_in_the_webhook_response_from_the_documents_of_the_number_texted(
    webhook, field_project, office_project, twilio
):
    [reply] = twiml_messages(webhook.post(OIL, to=FIELD_NUMBER))
    assert "250 running hours" in reply and len(reply) <= 320
    assert reply.endswith(DOCS_URL + "generator-oil") or DOCS_URL + "generator-oil#" in reply
    message = SmsMessage.objects.get(to_number=FIELD_NUMBER)
    assert (message.status, message.delivery, message.reply) == ("replied", "twiml", reply)
    logged = Interaction.objects.get(pk=message.interaction_id)
    assert logged.channel == "sms" and logged.project == field_project
    assert logged.conversation_id == message.conversation_id != ""

    # The head office's number answers from the head office's documents only.
    assert twiml_messages(webhook.post(OIL, to=OFFICE_NUMBER)) == [SORRY]
    assert twilio.attempts == 0  # nothing went through the REST API


def test_a_follow_up_carries_the_conversation_into_the_prompt_until_reset(
    webhook, field_project, ollama_llm
):
    field_project.generator = "ollama"
    field_project.save()

    [first] = twiml_messages(webhook.post(OIL))
    assert first.startswith("Change the oil every 250 running hours.")
    follow_up = "And how long must the generator cool before an oil change?"
    twiml_messages(webhook.post(follow_up))
    asked = Interaction.objects.filter(question=follow_up).get()
    # It finds its answer as asked, so retrieval judges it so; the prompt keeps the exchange.
    assert (asked.query_form, asked.retrieval_query) == ("question", follow_up)
    assert chats(ollama_llm)[-1][1:] == [
        {"role": "user", "content": OIL},
        {"role": "assistant", "content": "Change the oil every 250 running hours [1]."},
        {"role": "user", "content": f"{follow_up}\n\n{REMINDER}"},
    ]

    assert twiml_messages(webhook.post(" Reset ")) == [CLEARED]
    fresh = "How do I reset the pump controller?"
    twiml_messages(webhook.post(fresh))
    assert Interaction.objects.get(question=fresh).retrieval_query == fresh
    assert chats(ollama_llm)[-1][1:] == [{"role": "user", "content": f"{fresh}\n\n{REMINDER}"}]
    assert Interaction.objects.get(question=fresh).conversation_id != asked.conversation_id


def test_the_prompt_carries_the_last_10_exchanges(webhook, field_project, ollama_llm):
    field_project.generator = "ollama"
    field_project.save()
    SmsConversation.objects.create(
        project=field_project, phone=CALLER, conversation_id="sms-long",
        last_message_at=timezone.now() - timedelta(minutes=1),
    )  # fmt: skip
    for n in range(1, 13):
        Interaction.objects.create(
            project=field_project, channel="sms", conversation_id="sms-long",
            question=f"question {n}", answer=f"answer {n}", retrieval_query=f"question {n}",
        )  # fmt: skip
    twiml_messages(webhook.post(OIL))
    history = chats(ollama_llm)[-1][1:-1]
    assert len(history) == 20
    assert history[0] == {"role": "user", "content": "question 3"}
    assert history[-1] == {"role": "assistant", "content": "answer 12"}


def test_a_quiet_spell_of_30_minutes_forgets_the_conversation(webhook, field_project, ollama_llm):
    field_project.generator = "ollama"
    field_project.save()
    twiml_messages(webhook.post(OIL))
    SmsConversation.objects.filter(phone=CALLER).update(
        last_message_at=timezone.now() - timedelta(minutes=30, seconds=1)
    )
    later = "How do I reset the pump controller?"
    twiml_messages(webhook.post(later))
    assert chats(ollama_llm)[-1][1:] == [{"role": "user", "content": f"{later}\n\n{REMINDER}"}]
    first, second = Interaction.objects.order_by("created_at")
    assert first.conversation_id != second.conversation_id


def test_a_retried_question_is_answered_once(webhook, field_project, twilio):
    sid = "SM" + "b" * 32
    first = webhook.post(OIL, sid=sid)
    again = webhook.post(OIL, sid=sid)
    assert len(twiml_messages(first)) == 1 and twiml_messages(again) == []
    assert Interaction.objects.count() == 1 and SmsMessage.objects.count() == 1
    assert twilio.attempts == 0


def test_a_slow_answer_is_acknowledged_at_once_then_sent_through_the_rest_api(
    webhook, field_project, ollama_llm, twilio, settings
):
    field_project.generator = "ollama"
    field_project.save()
    ollama_llm.stall_before_first_token = 1.5
    settings.SMS_INLINE_BUDGET = 0.3

    response = webhook.post(OIL)
    assert response.status_code == 200 and twiml_messages(response) == []

    [sent] = twilio.wait_for_messages(1)
    assert sent["To"] == CALLER and sent["From"] == FIELD_NUMBER
    written = "Change the oil every 250 running hours. "
    assert sent["Body"].startswith(written + DOCS_URL + "generator-oil")
    wait_until(lambda: SmsMessage.objects.get().status != "sending")
    message = SmsMessage.objects.get()
    assert (message.delivery, message.status, message.reply_sid) == ("rest", "replied", sent["sid"])
    assert message.reply == sent["Body"]
    assert twilio.attempts == 1


def test_a_stalled_model_gets_the_passages_quoted_within_the_timeout(
    webhook, field_project, ollama_llm, twilio, settings
):
    field_project.generator = "ollama"
    field_project.save()
    ollama_llm.stall_before_first_token = 5
    settings.ASKDOCS_OLLAMA_TIMEOUTS = {**settings.ASKDOCS_OLLAMA_TIMEOUTS, "first_token": 0.5}
    [reply] = twiml_messages(webhook.post(OIL))
    assert "250 running hours" in reply
    logged = Interaction.objects.get()
    assert (logged.generator, logged.error) == ("extractive", "")
    assert logged.fallback.startswith("ollama:")
    assert twilio.attempts == 0


def test_a_model_that_is_down_gets_the_passages_quoted(webhook, field_project, settings):
    from assistant.wiring import runtime

    field_project.generator = "ollama"
    field_project.save()
    settings.OLLAMA_HOST = unused_url()
    runtime.ollama_generator.cache_clear()
    try:
        [reply] = twiml_messages(webhook.post(OIL))
    finally:
        runtime.ollama_generator.cache_clear()
    assert "250 running hours" in reply and SmsMessage.objects.get().reply == reply
    assert Interaction.objects.get().fallback.startswith("ollama:")


def test_an_open_circuit_gets_the_passages_quoted_without_calling_the_model(
    webhook, field_project, ollama_llm
):
    from assistant.rag.ports import GeneratorUnavailable
    from assistant.rag.types import Question
    from assistant.rag.write.prompting import build_prompt
    from assistant.wiring import runtime

    field_project.generator = "ollama"
    field_project.save()
    ollama_llm.fail_next(15, status=500)
    for _ in range(5):  # five failed calls (of three attempts each) open the circuit
        with pytest.raises(GeneratorUnavailable):
            list(runtime.ollama_generator().stream(build_prompt(Question("x"), [])))
    calls = len(ollama_llm.requests_to("/api/chat"))
    assert calls == 15

    [reply] = twiml_messages(webhook.post(OIL))
    assert "250 running hours" in reply
    assert len(ollama_llm.requests_to("/api/chat")) == calls  # not called
    assert "circuit" in Interaction.objects.get().fallback.lower()


def test_a_refusal_by_text_points_at_the_nearest_page_when_one_is_on_the_subject(
    webhook, field_project
):
    [reply] = twiml_messages(webhook.post("How much does a G-40 generator cost?"))
    assert reply == f"{SORRY} This page may help: {DOCS_URL}generator-oil"
    logged = Interaction.objects.get(question__startswith="How much does a G-40")
    assert logged.refused and logged.related[0]["url"] == DOCS_URL + "generator-oil"

    [off_topic] = twiml_messages(webhook.post("Write me a poem about the sea"))
    assert off_topic == SORRY


def test_a_text_to_a_full_server_is_told_when_to_ask_again_and_kept(
    webhook, field_project, narrow_gate
):
    held = fill(field_project.public_key)

    [reply] = twiml_messages(webhook.post(OIL, to=FIELD_NUMBER))
    del held
    assert reply.startswith("Too many questions right now: please ask again in ")
    message = SmsMessage.objects.get(to_number=FIELD_NUMBER)
    assert (message.body, message.reply) == (OIL, reply)
    assert not Interaction.objects.exists()  # refused before any work
