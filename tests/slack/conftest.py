"""Fixtures of the Slack door: a fake Slack Web API on a loopback port, the demo project with
a Slack app connected, and requests signed exactly as Slack signs them."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client

from assistant.models import Project
from tests.celery_worker import tasks_in_this_process
from tests.fake_slack import BOT_USER_ID, TEAM_ID, FakeSlack

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # noqa: S105 - a test value
BOT_TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"  # noqa: S105 - a test value
CHANNEL = "C0HELP0001"
MEMBER = "U0MEMBER01"


def signature(secret: str, timestamp: str, body: str) -> str:
    """Slack's v0 signature: HMAC-SHA256 of `v0:{timestamp}:{body}` with the signing secret."""
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256)
    return "v0=" + digest.hexdigest()


@dataclass
class SlackRequests:
    """Slack's side of the two request URLs: events and interactions, signed."""

    client: Client
    project: Project
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def signed_post(
        self, path: str, body: str, content_type: str, *, secret: str = SIGNING_SECRET,
        timestamp: int | None = None, **headers: str,
    ):  # noqa: ANN201  # fmt: skip
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        signed = {"HTTP_X_SLACK_SIGNATURE": signature(secret, stamp, body)}
        return self.client.post(
            path, body, content_type=content_type, HTTP_X_SLACK_REQUEST_TIMESTAMP=stamp,
            **{**signed, **headers},
        )  # fmt: skip

    def event(self, envelope: dict[str, Any], **options: Any):  # noqa: ANN201, ANN401
        path = f"/slack/{self.project.public_key}/events"
        return self.signed_post(path, json.dumps(envelope), "application/json", **options)

    def envelope(self, event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
        return {
            "token": "legacy-verification-token", "team_id": TEAM_ID, "api_app_id": "A0APP0001",
            "event": event, "type": "event_callback",
            "event_id": event_id or f"Ev{next(self.ids):08d}", "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
        }  # fmt: skip

    def mention(self, text: str, *, ts: str, thread_ts: str = "", **options: Any):  # noqa: ANN201, ANN401
        event = {
            "type": "app_mention", "user": MEMBER, "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
            "channel": CHANNEL, "event_ts": ts,
        }  # fmt: skip
        if thread_ts:
            event["thread_ts"] = thread_ts
        return self.event(self.envelope(event, event_id=options.pop("event_id", None)), **options)

    def message(self, text: str, *, ts: str, channel_type: str = "channel", **fields: Any):  # noqa: ANN201, ANN401
        event = {
            "type": "message", "user": MEMBER, "text": text, "ts": ts, "channel": CHANNEL,
            "channel_type": channel_type, "event_ts": ts, **fields,
        }  # fmt: skip
        return self.event(self.envelope(event))

    def press(
        self, action_id: str, value: str, *, thread_ts: str, user: str = MEMBER, **options: Any
    ):  # noqa: ANN201, ANN401
        payload = {
            "type": "block_actions", "user": {"id": user, "team_id": TEAM_ID},
            "team": {"id": TEAM_ID}, "channel": {"id": CHANNEL},
            "container": {"type": "message", "channel_id": CHANNEL, "message_ts": "1.2"},
            "message": {"ts": "1700000000.000001", "thread_ts": thread_ts, "text": "…"},
            "actions": [{"action_id": action_id, "value": value, "type": "button",
                         "block_id": "askdocs_answer"}],
        }  # fmt: skip
        body = urlencode({"payload": json.dumps(payload)})
        path = f"/slack/{self.project.public_key}/interactions"
        return self.signed_post(path, body, "application/x-www-form-urlencoded", **options)


@pytest.fixture(scope="module")
def restore_demo(django_db_blocker) -> Iterator[None]:  # noqa: ANN001
    """Transactional tests (answers run on the background lane's thread, which sees only
    committed rows) empty the database when they end, the demo project included: put it back."""
    yield
    from assistant.demo import PROJECT_NAME, demo_seed

    with django_db_blocker.unblock():
        if not Project.objects.filter(name=PROJECT_NAME).exists():
            demo_seed()


@pytest.fixture
def fake_slack(settings) -> Iterator[FakeSlack]:  # noqa: ANN001
    """Slack's Web API faked on a loopback port; queued tasks run in this process."""
    with FakeSlack(BOT_TOKEN) as fake:
        settings.ASKDOCS_SLACK_API_URL = fake.url
        with tasks_in_this_process():
            yield fake


@pytest.fixture
def slack_project(transactional_db) -> Project:  # noqa: ANN001
    """The demo project with a Slack app connected (seeded again: a transactional test
    before this one emptied the database)."""
    from assistant.demo import demo_seed

    demo = demo_seed().project
    demo.set_slack_signing_secret(SIGNING_SECRET)
    demo.set_slack_bot_token(BOT_TOKEN)
    demo.save()
    return demo


@pytest.fixture
def slack(client: Client, slack_project: Project, fake_slack: FakeSlack) -> SlackRequests:
    return SlackRequests(client, slack_project)


def wait_until(condition, timeout: float = 60.0) -> None:  # noqa: ANN001
    """Poll for something the background lane does (not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {condition.__doc__ or ''}")
        time.sleep(0.05)
