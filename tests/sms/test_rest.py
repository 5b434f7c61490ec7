"""Deferred replies through Twilio's REST API (a local fake of it): at most one send, retries
with backoff on transient failures, a circuit breaker, and failures recorded with their cause."""

from __future__ import annotations

import logging

import pytest

from assistant.models import Project, SmsMessage
from assistant.sms import twilio_rest
from assistant.sms.sending import sms_send
from assistant.wiring import resilience
from tests.sms.conftest import CALLER, FIELD_NUMBER

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(twilio):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Rest", sms_number=FIELD_NUMBER)
    counter = iter(range(1, 1000))

    def make(reply: str = "The pump restarts in two minutes.") -> SmsMessage:
        return SmsMessage.objects.create(
            project=project,
            message_sid=f"SM{next(counter):032x}",
            from_number=CALLER,
            to_number=FIELD_NUMBER,
            body="question",
            kind="question",
            reply=reply,
            delivery="rest",
            status="queued",
        )

    return make


def test_it_sends_the_reply_from_the_project_number_once(queued, twilio):
    message = queued()
    sms_send(message_id=message.pk)
    sms_send(message_id=message.pk)  # a redelivered task
    [sent] = twilio.wait_for_messages(1)
    assert (sent["To"], sent["From"], sent["Body"]) == (CALLER, FIELD_NUMBER, message.reply)
    message.refresh_from_db()
    assert (message.status, message.reply_sid) == ("replied", sent["sid"])
    assert message.replied_at is not None
    assert twilio.attempts == 1


def test_it_does_not_send_a_reply_that_is_not_queued(queued, twilio):
    message = queued()
    SmsMessage.objects.filter(pk=message.pk).update(status="replied", delivery="twiml")
    sms_send(message_id=message.pk)
    assert twilio.attempts == 0


def test_it_retries_server_errors_with_backoff_then_sends(queued, twilio):
    twilio.fail_next(2, status=503)
    message = queued()
    sms_send(message_id=message.pk)
    assert twilio.attempts == 3 and len(twilio.messages) == 1
    message.refresh_from_db()
    assert message.status == "replied"


def test_it_records_the_cause_when_twilio_fails_for_good(queued, twilio, caplog):
    twilio.fail_next(3, status=500)
    message = queued()
    with caplog.at_level(logging.WARNING, logger="assistant.sms.sending"):
        sms_send(message_id=message.pk)
    message.refresh_from_db()
    assert twilio.attempts == 3 and twilio.messages == []
    assert message.status == "failed"
    assert "unavailable" in message.error and "500" in message.error
    assert message.message_sid in caplog.text and "after 3 attempts" in caplog.text


def test_it_does_not_retry_when_twilio_refuses_the_request(queued, twilio, settings):
    settings.TWILIO_AUTH_TOKEN = "a-wrong-token"
    twilio_rest.reset()
    message = queued()
    sms_send(message_id=message.pk)
    message.refresh_from_db()
    assert twilio.attempts == 1
    assert message.status == "failed" and "401" in message.error
    # a refusal proves Twilio is up: the circuit stays closed
    assert resilience.circuit_state(twilio_rest.upstream_name()) == "closed"


def test_the_circuit_opens_after_five_failed_sends_and_then_fails_without_calling(queued, twilio):
    twilio.fail_next(5 * 3, status=500)
    for _ in range(5):
        sms_send(message_id=queued().pk)
    assert twilio.attempts == 15
    assert resilience.circuit_state(twilio_rest.upstream_name()) == "open"
    message = queued()
    sms_send(message_id=message.pk)
    assert twilio.attempts == 15  # not called
    message.refresh_from_db()
    assert message.status == "failed" and "circuit" in message.error


def test_it_retries_when_nothing_listens(queued, twilio, settings, caplog):
    from tests.fake_ollama import unused_url

    settings.TWILIO_API_BASE_URL = unused_url()
    twilio_rest.reset()
    message = queued()
    with caplog.at_level(logging.WARNING, logger="assistant.sms.sending"):
        sms_send(message_id=message.pk)
    message.refresh_from_db()
    assert message.status == "failed" and "ConnectionError" in message.error
    assert "Connection refused" in caplog.text and "after 3 attempts" in caplog.text
