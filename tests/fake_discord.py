"""A small local HTTP server that speaks the part of Discord's REST API (v10) the app uses:

- `PATCH /webhooks/{application}/{token}/messages/@original` (an answer replacing the deferred
  response) and `POST /webhooks/{application}/{token}` (a follow-up message), authorised by
  the interaction's token alone, as Discord does;
- `PUT /applications/{application}/commands`, `GET /users/@me` and `GET /applications/@me`,
  with `Authorization: Bot <token>`.

It checks messages as Discord does (content of at most 2,000 characters, rows of at most five
buttons, custom ids of at most 100) and answers errors in Discord's shape: `{"message": …,
"code": …}` with 400, 401 or 404, and whatever failure the test scripts.

    with FakeDiscord(APPLICATION_ID, BOT_TOKEN, public_key) as discord:
        token = discord.issue_token()          # as Discord does with each interaction
        ...
        [edit] = discord.wait_for("edit", 1)
        edit["content"], edit["components"]
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from typing import Any
from urllib.parse import unquote

from tests.servers import LoopbackServer

API = "/api/v10"
APPLICATION_NAME = "Acme docs"
BOT_USERNAME = "Acme docs"
CONTENT_LIMIT = 2000
_WEBHOOK = re.compile(r"/webhooks/(\d+)/([^/?]+)(/messages/@original)?")
_COMMANDS = re.compile(r"/applications/(\d+)/commands")


class FakeDiscord(LoopbackServer):
    def __init__(self, application_id: str, bot_token: str, public_key: str) -> None:
        self.application_id = application_id
        self.bot_token = bot_token
        self.public_key = public_key
        self.tokens: set[str] = set()  # interaction tokens Discord issued
        #: Accepted messages, in order: ("edit" or "follow_up", interaction token, body).
        self.messages: list[tuple[str, str, dict[str, Any]]] = []
        self.commands: list[dict[str, Any]] = []
        self.attempts = 0  # every request, accepted or not
        #: Every message request: (time.monotonic(), "edit" or "follow_up", the HTTP status).
        self.deliveries: list[tuple[float, str, int]] = []
        self._failures: dict[str, list[tuple[int, int, str, float | None]]] = {}
        self._ids = itertools.count(1_100_000_000_000_000_001)
        self._changed = threading.Condition()

    @property
    def url(self) -> str:
        """The API's base URL, as ASKDOCS_DISCORD_API_URL takes it."""
        return self.origin + API

    def issue_token(self) -> str:
        with self._changed:
            token = f"aW50ZXJhY3Rpb246{next(self._ids)}.fake-interaction-token_Zk9v"
            self.tokens.add(token)
            return token

    def fail_next(
        self, route: str, *, status: int = 500, code: int = 0, message: str = "",
        retry_after: float | None = None,
    ) -> None:  # fmt: skip
        """The next call of `route` ("edit", "follow_up", "commands", "me", "application")
        fails with `status` and Discord's error body; with `retry_after`, a 429 as Discord
        sends it (`{"message": …, "retry_after": seconds, "global": false}`)."""
        with self._changed:
            self._failures.setdefault(route, []).append(
                (status, code, message or "Failure", retry_after)
            )

    def sent(self, kind: str = "") -> list[dict[str, Any]]:
        with self._changed:
            return [body for sort, _, body in self.messages if not kind or sort == kind]

    def wait_for(self, kind: str, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._sent(kind)) >= count, timeout):
                raise AssertionError(
                    f"expected {count} {kind} messages within {timeout} s, "
                    f"got {len(self._sent(kind))}"
                )
            return self._sent(kind)

    def _sent(self, kind: str) -> list[dict[str, Any]]:
        return [body for sort, _, body in self.messages if sort == kind]

    def respond(self, method: str, path: str, headers: Any, body: str) -> tuple[int, Any]:
        path = path.partition("?")[0]
        with self._changed:
            self.attempts += 1
            if not path.startswith(API + "/"):
                return _error(404, 0, "404: Not Found")
            route = path.removeprefix(API)
            if webhook := _WEBHOOK.fullmatch(route):
                kind = "edit" if webhook.group(3) else "follow_up"
                wanted = "PATCH" if kind == "edit" else "POST"
                if method != wanted:
                    return _error(405, 0, "405: Method Not Allowed")
                answered = self._message(kind, webhook.group(1), unquote(webhook.group(2)), body)
                self.deliveries.append((time.monotonic(), kind, answered[0]))
                return answered
            authorization = headers.get("Authorization", "")
            if authorization != f"Bot {self.bot_token}":
                return _error(401, 0, "401: Unauthorized")
            if route == "/users/@me" and method == "GET":
                return self._failure("me") or (
                    200,
                    {"id": "1100000000000000900", "username": BOT_USERNAME, "bot": True},
                )
            if route == "/applications/@me" and method == "GET":
                return self._failure("application") or (200, {
                    "id": self.application_id, "name": APPLICATION_NAME,
                    "verify_key": self.public_key, "bot_public": True,
                })  # fmt: skip
            if (commands := _COMMANDS.fullmatch(route)) and method == "PUT":
                return self._register(commands.group(1), body)
            return _error(404, 0, "404: Not Found")

    def _failure(self, route: str) -> tuple[int, dict[str, Any]] | None:
        if self._failures.get(route):
            status, code, message, retry_after = self._failures[route].pop(0)
            failure = _error(status, code, message)
            if retry_after is not None:
                failure[1].update(retry_after=retry_after, **{"global": False})
            return failure
        return None

    def _message(self, kind: str, application_id: str, token: str, body: str) -> tuple[int, Any]:
        if application_id != self.application_id:
            return _error(404, 10015, "Unknown Webhook")
        if token not in self.tokens:
            return _error(401, 50027, "Invalid Webhook Token")
        if failure := self._failure(kind):
            return failure
        message = json.loads(body or "{}")
        if problem := _message_problem(message):
            return _error(400, 50035, f"Invalid Form Body: {problem}")
        self.messages.append((kind, token, message))
        self._changed.notify_all()
        return 200, {"id": str(next(self._ids)), "type": 0, "flags": 0, **message}

    def _register(self, application_id: str, body: str) -> tuple[int, Any]:
        if application_id != self.application_id:
            return _error(403, 50001, "Missing Access")
        if failure := self._failure("commands"):
            return failure
        commands = json.loads(body or "[]")
        for command in commands:
            if not re.fullmatch(r"[-_a-z0-9]{1,32}", command.get("name", "")):
                return _error(400, 50035, "Invalid Form Body: name")
            if not 1 <= len(command.get("description", "")) <= 100:
                return _error(400, 50035, "Invalid Form Body: description")
        self.commands = [
            {"id": str(next(self._ids)), "application_id": application_id, "version": "1", **c}
            for c in commands
        ]
        return 200, self.commands


def _message_problem(message: dict[str, Any]) -> str:
    """What Discord would refuse in a message body ("" when nothing)."""
    content = message.get("content")
    if content is not None and len(content) > CONTENT_LIMIT:
        return f"content: Must be {CONTENT_LIMIT} or fewer in length."
    if not (content or message.get("embeds") or message.get("components")):
        return "Cannot send an empty message"
    for row in message.get("components") or ():
        if row.get("type") != 1 or not 1 <= len(row.get("components") or ()) <= 5:
            return "components: an action row holds one to five components"
        for button in row["components"]:
            if len(button.get("custom_id", "")) > 100 or len(button.get("label", "")) > 80:
                return "components: custom_id or label too long"
    return ""


def _error(status: int, code: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"message": message, "code": code}
