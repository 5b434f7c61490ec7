"""The deferred reply through a real Celery worker process on the local Redis.

The webhook runs in this process; the worker is `celery -A config.celery worker` in
another, sharing the test database (hence a transactional test) and the fake Twilio API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.models import SmsMessage
from tests.celery_worker import queue_on_redis, worker_process
from tests.sms.conftest import (
    ACCOUNT_SID,
    AUTH_TOKEN,
    CALLER,
    DOCS_URL,
    PUBLIC_BASE_URL,
    twiml_messages,
    wait_until,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("restore_demo"),
    pytest.mark.redis,
]


@pytest.fixture
def celery_on_redis(twilio) -> Iterator[str]:  # noqa: ANN001
    with queue_on_redis("sms-test") as queue:
        yield queue


@pytest.fixture
def worker(celery_on_redis, twilio, settings, tmp_path) -> Iterator[Path]:  # noqa: ANN001
    log = tmp_path / "worker.log"
    with worker_process(
        celery_on_redis, data_dir=settings.DATA_DIR, log=log,
        TWILIO_ACCOUNT_SID=ACCOUNT_SID, TWILIO_AUTH_TOKEN=AUTH_TOKEN,
        TWILIO_PUBLIC_BASE_URL=PUBLIC_BASE_URL, TWILIO_API_BASE_URL=twilio.url,
    ):  # fmt: skip
        yield log


def test_a_slow_answer_is_sent_by_a_real_celery_worker(
    webhook, field_project, ollama_llm, twilio, worker, settings
):
    field_project.generator = "ollama"
    field_project.save()
    ollama_llm.stall_before_first_token = 1.5
    settings.SMS_INLINE_BUDGET = 0.3

    response = webhook.post("How often should I change the generator oil?")
    assert twiml_messages(response) == []  # acknowledged; the answer follows by REST

    [sent] = twilio.wait_for_messages(1, timeout=120)
    assert sent["To"] == CALLER
    written = "Change the oil every 250 running hours. "
    assert sent["Body"].startswith(written + DOCS_URL + "generator-oil")
    wait_until(lambda: SmsMessage.objects.get().status == "replied", timeout=30)
    message = SmsMessage.objects.get()
    assert (message.delivery, message.reply_sid) == ("rest", sent["sid"])
    log = worker.read_text()
    assert "sms.send_reply" in log and "succeeded" in log, log
    assert twilio.attempts == 1
