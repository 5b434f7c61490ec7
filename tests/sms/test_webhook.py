"""The webhook's gate and its commands: signatures, forms, numbers, help, reset, opt-out.
No question reaches a model here (see test_answers.py for those)."""

from __future__ import annotations

import logging

import pytest

from assistant.models import Interaction, SmsConversation, SmsMessage
from assistant.sms.text import CLEARED
from tests.sms.conftest import (
    AUTH_TOKEN,
    CALLER,
    FIELD_NUMBER,
    PUBLIC_BASE_URL,
    WEBHOOK_PATH,
    twiml_messages,
)

pytestmark = pytest.mark.django_db


def test_it_refuses_a_request_without_a_signature_and_logs_it(
    client, twilio, field_project, caplog
):
    with caplog.at_level(logging.WARNING, logger="assistant.sms.views"):
        response = client.post(
            WEBHOOK_PATH,
            {"MessageSid": "SM" + "1" * 32, "From": CALLER, "To": FIELD_NUMBER, "Body": "help"},
        )
    assert response.status_code == 403
    assert "missing X-Twilio-Signature" in caplog.text
    assert not SmsMessage.objects.exists()


@pytest.mark.parametrize(
    "forgery",
    [
        {"token": "another-token"},
        {"url": "https://evil.example.test" + WEBHOOK_PATH},
        {"url": PUBLIC_BASE_URL + "/sms/twilio/other"},
    ],
)
def test_it_refuses_a_bad_signature(webhook, field_project, forgery, caplog):
    with caplog.at_level(logging.WARNING, logger="assistant.sms.views"):
        response = webhook.post("help", **forgery)
    assert response.status_code == 403
    assert "bad X-Twilio-Signature" in caplog.text
    assert not SmsMessage.objects.exists()


def test_it_refuses_a_body_changed_after_signing(client, twilio, field_project):
    from twilio.request_validator import RequestValidator

    params = {"MessageSid": "SM" + "2" * 32, "From": CALLER, "To": FIELD_NUMBER, "Body": "help"}
    signature = RequestValidator(AUTH_TOKEN).compute_signature(
        PUBLIC_BASE_URL + WEBHOOK_PATH, params
    )
    response = client.post(
        WEBHOOK_PATH, {**params, "Body": "reset"}, HTTP_X_TWILIO_SIGNATURE=signature
    )
    assert response.status_code == 403


def test_it_is_unavailable_until_twilio_is_configured(client, field_project, settings):
    settings.TWILIO_AUTH_TOKEN = ""
    response = client.post(WEBHOOK_PATH, {"Body": "help"}, HTTP_X_TWILIO_SIGNATURE="x")
    assert response.status_code == 503


def test_it_only_accepts_posts(client, twilio):
    assert client.get(WEBHOOK_PATH).status_code == 405


def test_it_rejects_a_signed_form_without_a_message_sid(webhook, field_project):
    response = webhook.post("help", sid="not-a-sid")
    assert response.status_code == 400
    assert b"MessageSid" in response.content
    assert not SmsMessage.objects.exists()


def test_it_answers_404_for_a_number_no_project_has(webhook, field_project):
    response = webhook.post("help", to="+15550109999")
    assert response.status_code == 404
    assert not SmsMessage.objects.exists()


def test_it_explains_the_commands_on_help(webhook, field_project):
    response = webhook.post(" HELP ")
    assert response.status_code == 200
    [reply] = twiml_messages(response)
    assert "Field team" in reply and "RESET" in reply and "STOP" in reply
    assert len(reply) <= 320
    message = SmsMessage.objects.get()
    assert (message.kind, message.status, message.delivery) == ("help", "replied", "twiml")
    assert not Interaction.objects.exists()  # no model was asked


@pytest.mark.parametrize("body", ["reset", " RESET ", "Clear", "cLeAr\n"])
def test_reset_and_clear_start_a_new_conversation(webhook, field_project, body):
    old = SmsConversation.objects.create(
        project=field_project,
        phone=CALLER,
        conversation_id="sms-old",
        last_message_at="2026-01-01T00:00Z",
    )
    response = webhook.post(body)
    assert twiml_messages(response) == [CLEARED]
    old.refresh_from_db()
    assert old.conversation_id != "sms-old"
    assert SmsMessage.objects.get().conversation_id == old.conversation_id


@pytest.mark.parametrize("body", ["STOP", "stop", " Unsubscribe", "START", "quit"])
def test_it_leaves_opt_out_keywords_to_twilio(webhook, field_project, body, twilio):
    response = webhook.post(body)
    assert response.status_code == 200
    assert twiml_messages(response) == []
    message = SmsMessage.objects.get()
    assert (message.kind, message.status, message.reply) == ("opt_out", "ignored", "")
    assert not Interaction.objects.exists()
    assert twilio.attempts == 0


def test_a_retried_delivery_is_answered_once(webhook, field_project, twilio):
    first = webhook.post("help", sid="SM" + "a" * 32)
    again = webhook.post("help", sid="SM" + "a" * 32)
    assert len(twiml_messages(first)) == 1
    assert again.status_code == 200 and twiml_messages(again) == []
    assert SmsMessage.objects.count() == 1
    assert twilio.attempts == 0


def test_a_retry_with_the_same_idempotency_token_is_answered_once(webhook, field_project):
    token = "2f3b0a52-idem-token"
    first = webhook.post("help", HTTP_I_TWILIO_IDEMPOTENCY_TOKEN=token)
    again = webhook.post("help", HTTP_I_TWILIO_IDEMPOTENCY_TOKEN=token)
    assert len(twiml_messages(first)) == 1 and twiml_messages(again) == []
    assert SmsMessage.objects.get().idempotency_token == token


def test_an_empty_text_asks_for_words(webhook, field_project):
    [reply] = twiml_messages(webhook.post("   "))
    assert reply == "Please send your question as text."
