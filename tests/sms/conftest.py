"""Fixtures of the SMS channel: a fake Twilio REST API, signed webhook requests, and
projects of their own (with their own indexed documents) that answer given numbers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.test import Client
from twilio.request_validator import RequestValidator

from assistant.models import Project
from assistant.sms import twilio_rest
from assistant.wiring import resilience
from ingestion.models import Source
from ingestion.services import document_upsert
from tests.celery_worker import tasks_in_this_process
from tests.fake_ollama import FakeOllama
from tests.fake_twilio import FakeTwilio

ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
AUTH_TOKEN = "test-auth-token-0123456789abcdef"  # noqa: S105 - a test value
PUBLIC_BASE_URL = "https://sms.example.test"
WEBHOOK_PATH = "/sms/twilio/incoming"
FIELD_NUMBER = "+15550100001"
OFFICE_NUMBER = "+15550100002"
CALLER = "+15557654321"

FIELD_DOCS = {
    "pump-reset": (
        "Resetting the P-200 pump controller",
        "To reset the P-200 pump controller, hold the red STOP button for ten seconds until "
        "the display shows RESET. Then switch the main breaker off and on again. The "
        "controller restarts in about two minutes and keeps its flow settings.",
    ),
    "generator-oil": (
        "Changing the oil of the G-40 generator",
        "Change the oil of the G-40 generator every 250 running hours. Use 2.5 litres of "
        "SAE 15W-40 oil. Let the engine cool for 30 minutes before you open the drain plug, "
        "and dispose of the old oil at a collection point.",
    ),
}
OFFICE_DOCS = {
    "parking": (
        "Parking at the head office",
        "Visitors park in the underground garage on level -2. Ask reception for a parking "
        "ticket; the barrier opens with the ticket until 7 pm.",
    ),
}
DOCS_URL = "https://docs.field.example/"


@dataclass
class Webhook:
    client: Client
    counter: int = 0

    def sid(self) -> str:
        self.counter += 1
        return f"SM{self.counter:032x}"

    def post(
        self,
        body: str,
        *,
        to: str = FIELD_NUMBER,
        sender: str = CALLER,
        sid: str | None = None,
        token: str = AUTH_TOKEN,
        url: str | None = None,
        **headers: str,
    ):  # noqa: ANN201
        params = {
            "MessageSid": sid or self.sid(),
            "SmsSid": sid or f"SM{self.counter:032x}",
            "AccountSid": ACCOUNT_SID,
            "From": sender,
            "To": to,
            "Body": body,
            "NumMedia": "0",
        }
        signature = RequestValidator(token).compute_signature(
            url or PUBLIC_BASE_URL + WEBHOOK_PATH, params
        )
        return self.client.post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=signature, **headers)


@pytest.fixture
def twilio(settings) -> Iterator[FakeTwilio]:  # noqa: ANN001
    """The SMS channel configured, its REST API faked locally; tasks run in-process."""
    with FakeTwilio(ACCOUNT_SID, AUTH_TOKEN) as fake:
        settings.TWILIO_ACCOUNT_SID = ACCOUNT_SID
        settings.TWILIO_AUTH_TOKEN = AUTH_TOKEN
        settings.TWILIO_PUBLIC_BASE_URL = PUBLIC_BASE_URL
        settings.TWILIO_API_BASE_URL = fake.url
        # Generous, so a loaded test machine does not turn an inline answer into a deferred
        # one; the tests of the deferred path lower it and stall the model instead.
        settings.SMS_INLINE_BUDGET = 120.0
        twilio_rest.reset()
        resilience.reset_circuits()
        try:
            with tasks_in_this_process():
                yield fake
        finally:
            twilio_rest.reset()
            resilience.reset_circuits()


@pytest.fixture
def webhook(client: Client, twilio: FakeTwilio) -> Webhook:
    return Webhook(client)


def make_project(
    name: str, number: str, docs: dict[str, tuple[str, str]], **fields: object
) -> Project:
    project = Project.objects.create(name=name, sms_number=number, **fields)
    source = Source.objects.create(project=project, name=f"{name} docs", kind=Source.Kind.FILES)
    for slug, (title, text) in docs.items():
        document_upsert(
            source=source, external_id=slug, title=title, text=text, url=DOCS_URL + slug
        )
    return project


@pytest.fixture
def field_project(db) -> Project:  # noqa: ANN001
    return make_project("Field team", FIELD_NUMBER, FIELD_DOCS)


@pytest.fixture
def office_project(db) -> Project:  # noqa: ANN001
    return make_project("Head office", OFFICE_NUMBER, OFFICE_DOCS)


@pytest.fixture(scope="module")
def restore_demo(django_db_blocker) -> Iterator[None]:  # noqa: ANN001
    """Transactional tests (needed where answers run in other threads or processes) empty
    the database when they end, the session's demo project included: put it back."""
    yield
    from assistant.demo import PROJECT_NAME, demo_seed

    with django_db_blocker.unblock():
        if not Project.objects.filter(name=PROJECT_NAME).exists():
            demo_seed()


def twiml_messages(response) -> list[str]:  # noqa: ANN001
    from xml.etree import ElementTree

    assert response["Content-Type"].startswith("application/xml")
    root = ElementTree.fromstring(response.content)  # noqa: S314 - our own response
    assert root.tag == "Response"
    return [element.text or "" for element in root.iter("Message")]


@pytest.fixture
def ollama_llm(settings) -> Iterator[FakeOllama]:  # noqa: ANN001
    """A fake Ollama server as the configured LLM (projects opt in with generator="ollama")."""
    from assistant.wiring import runtime

    with FakeOllama() as server:
        # A sentence the field manual backs: a written answer is checked against its passages.
        server.tokens = ["Change the oil ", "every 250 running hours [1]."]
        settings.OLLAMA_HOST = server.url
        runtime.ollama_generator.cache_clear()
        resilience.reset_circuits()
        try:
            yield server
        finally:
            runtime.ollama_generator.cache_clear()
            resilience.reset_circuits()


def wait_until(condition, timeout: float = 30.0) -> None:  # noqa: ANN001
    """Poll for something another thread or process does (not a timing assertion)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {condition.__doc__ or ''}")
        time.sleep(0.05)
