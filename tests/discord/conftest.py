"""Fixtures of the Discord door: a fake Discord API on a loopback port, the demo project with a
Discord application connected, and interactions signed exactly as Discord signs them (Ed25519
over timestamp + body), with a key pair made for this test run."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.test import Client

from assistant.models import Project
from tests.celery_worker import tasks_in_this_process
from tests.fake_discord import FakeDiscord

APPLICATION_ID = "1100000000000000001"
BOT_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDkwMA.GhTz4k.fake-bot-token-for-tests-0123456789abc"  # noqa: S105 - a test value
GUILD = "1100000000000000100"
CHANNEL = "1100000000000000200"
THREAD = "1100000000000000300"
MEMBER = "1100000000000000400"
OTHER_MEMBER = "1100000000000000401"
SIGNING_KEY = Ed25519PrivateKey.generate()


def public_key_of(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


PUBLIC_KEY = public_key_of(SIGNING_KEY)


def signature(key: Ed25519PrivateKey, timestamp: str, body: str) -> str:
    """Discord's signature: Ed25519 of timestamp + body, hex."""
    return key.sign(timestamp.encode() + body.encode()).hex()


@dataclass
class DiscordRequests:
    """Discord's side of the interactions endpoint: interactions, signed."""

    client: Client
    project: Project
    fake: FakeDiscord
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1_200_000_000_000_000_001))

    @property
    def path(self) -> str:
        return f"/discord/{self.project.public_key}/interactions"

    def signed_post(
        self, body: str, *, key: Ed25519PrivateKey = SIGNING_KEY, timestamp: int | None = None,
        **headers: str,
    ):  # noqa: ANN201  # fmt: skip
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        signed = {
            "HTTP_X_SIGNATURE_ED25519": signature(key, stamp, body),
            "HTTP_X_SIGNATURE_TIMESTAMP": stamp,
        }
        return self.client.post(
            self.path, body, content_type="application/json", **{**signed, **headers}
        )

    def interaction(
        self, kind: int, *, user: str = MEMBER, channel: str = CHANNEL, channel_type: int = 0,
        guild: str = GUILD, **fields: Any,
    ) -> dict[str, Any]:  # fmt: skip
        """An interaction as Discord sends it: in a server (member) or a direct message (user)."""
        payload: dict[str, Any] = {
            "id": str(next(self.ids)), "application_id": APPLICATION_ID, "type": kind,
            "token": self.fake.issue_token(), "version": 1, "locale": "en-US",
            "channel_id": channel, "app_permissions": "0",
            "channel": {"id": channel, "type": channel_type, "name": "help"},
            "entitlements": [], "context": 0 if guild else 1, **fields,
        }  # fmt: skip
        who = {"id": user, "username": f"member{user[-3:]}", "global_name": "Ada"}
        if guild:
            payload.update(guild_id=guild, guild_locale="en-US",
                           member={"user": who, "roles": [], "permissions": "0"})  # fmt: skip
        else:
            payload["user"] = who
        return payload

    def ask(self, question: str, *, discord_id: str = "", **options: Any):  # noqa: ANN201, ANN401
        """`/ask question:<question>`."""
        signing = _signing(options)
        data = {"id": "1100000000000000050", "name": "ask", "type": 1,
                "options": [{"name": "question", "type": 3, "value": question}]}  # fmt: skip
        payload = self.interaction(2, data=data, **options)
        if discord_id:
            payload["id"] = discord_id
        return self.signed_post(json.dumps(payload), **signing)

    def press(self, custom_id: str, *, discord_id: str = "", **options: Any):  # noqa: ANN201, ANN401
        """A press of a button whose custom_id is `custom_id`."""
        signing = _signing(options)
        data = {"component_type": 2, "custom_id": custom_id}
        message = {"id": "1100000000000000600", "content": "…", "application_id": APPLICATION_ID}
        payload = self.interaction(3, data=data, message=message, **options)
        if discord_id:
            payload["id"] = discord_id
        return self.signed_post(json.dumps(payload), **signing)


def _signing(options: dict[str, Any]) -> dict[str, Any]:
    """The options that are about signing the request (a key, a timestamp, headers), taken out."""
    wanted = [k for k in options if k in ("key", "timestamp") or k.startswith("HTTP_")]
    return {k: options.pop(k) for k in wanted}


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
def fake_discord(settings) -> Iterator[FakeDiscord]:  # noqa: ANN001
    """Discord's API faked on a loopback port; queued tasks run in this process."""
    with FakeDiscord(APPLICATION_ID, BOT_TOKEN, PUBLIC_KEY) as fake:
        settings.ASKDOCS_DISCORD_API_URL = fake.url
        with tasks_in_this_process():
            yield fake


@pytest.fixture
def discord_project(transactional_db) -> Project:  # noqa: ANN001
    """The demo project with a Discord application connected (seeded again: a transactional
    test before this one emptied the database)."""
    from assistant.demo import demo_seed

    demo = demo_seed().project
    demo.discord_application_id = APPLICATION_ID
    demo.discord_public_key = PUBLIC_KEY
    demo.set_discord_bot_token(BOT_TOKEN)
    demo.save()
    return demo


@pytest.fixture
def discord(client: Client, discord_project: Project, fake_discord: FakeDiscord) -> DiscordRequests:
    return DiscordRequests(client, discord_project, fake_discord)


def buttons(message: dict[str, Any]) -> dict[str, str]:
    """{action: value} of the buttons under a message."""
    [row] = message["components"]
    return dict(button["custom_id"].split(":", 1) for button in row["components"])


def wait_until(condition, timeout: float = 60.0) -> None:  # noqa: ANN001
    """Poll for something the background lane does (not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {condition.__doc__ or ''}")
        time.sleep(0.05)
