"""The deferred reply through a real Celery worker process on the local Redis.

The webhook runs in this process; the worker is `celery -A assistant.celery worker` in
another, sharing the test database (hence a transactional test) and the fake Twilio API."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.db import connection

from assistant.celery import app as celery_app
from assistant.models import SmsMessage
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

REPO = Path(__file__).resolve().parents[2]
BROKER_URL = os.environ.get("TEST_SMS_BROKER_URL", "redis://127.0.0.1:6379/13")


def _reachable(url: str) -> bool:
    parts = urlparse(url)
    try:
        socket.create_connection((parts.hostname, parts.port or 6379), timeout=2).close()
    except OSError:
        return False
    return True


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] or "postgres"
    return f"postgres://{user}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _forget_broker_connections() -> None:
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def celery_on_redis(twilio) -> Iterator[str]:  # noqa: ANN001
    """This process queues tasks on Redis (not eagerly), on a queue of its own."""
    if not _reachable(BROKER_URL):
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis is not reachable at {BROKER_URL}")
        pytest.skip(f"Redis is not reachable at {BROKER_URL}")
    queue = f"sms-test-{uuid.uuid4().hex[:10]}"
    names = ("task_always_eager", "broker_url", "task_default_queue")
    saved = {name: celery_app.conf[name] for name in names}
    celery_app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=queue)
    _forget_broker_connections()
    try:
        yield queue
    finally:
        celery_app.conf.update(saved)
        _forget_broker_connections()


@pytest.fixture
def worker(celery_on_redis, twilio, settings, tmp_path) -> Iterator[Path]:  # noqa: ANN001
    log = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "assistant.test_settings",
        "ASKDOCS_TESTING": "1",
        "ASKDOCS_DATA_DIR": str(settings.DATA_DIR),
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_PUBLIC_BASE_URL": PUBLIC_BASE_URL,
        "TWILIO_API_BASE_URL": twilio.url,
    }
    command = [
        sys.executable, "-m", "celery", "-A", "assistant.celery", "worker",
        "--pool=solo", "--loglevel=INFO", "-Q", celery_on_redis, "-n", f"{celery_on_redis}@%h",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip
    with log.open("w") as output:
        process = subprocess.Popen(  # noqa: S603 - our own command line
            command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        yield log
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
    assert sent["Body"].startswith("The answer is 42. " + DOCS_URL + "generator-oil")
    wait_until(lambda: SmsMessage.objects.get().status == "replied", timeout=30)
    message = SmsMessage.objects.get()
    assert (message.delivery, message.reply_sid) == ("rest", sent["sid"])
    log = worker.read_text()
    assert "sms.send_reply" in log and "succeeded" in log, log
    assert twilio.attempts == 1
