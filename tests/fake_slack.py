"""A small local HTTP server that speaks the part of Slack's Web API the app uses:
`auth.test`, `chat.postMessage`, `chat.postEphemeral` and `chat.update` (POST
/api/<method>, a Bearer bot token, a JSON or form body). Answers like Slack: HTTP 200 with
`{"ok": true, …}`, or `{"ok": false, "error": "invalid_auth"}` for a token it does not know,
and whatever failure the test scripts.

    with FakeSlack(BOT_TOKEN) as slack:
        slack.fail_next("chat.postMessage", error="channel_not_found")
        ...
        [post] = slack.wait_for("chat.postMessage", 1)
        post["thread_ts"], post["blocks"]
"""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any
from urllib.parse import parse_qs

from tests.servers import LoopbackServer

TEAM_ID = "T0FAKE001"
BOT_USER_ID = "U0BOT0001"
METHODS = ("auth.test", "chat.postMessage", "chat.postEphemeral", "chat.update")


class FakeSlack(LoopbackServer):
    content_type = "application/json; charset=utf-8"

    def __init__(self, token: str) -> None:
        self.token = token
        self.calls: list[tuple[str, dict[str, Any]]] = []  # accepted calls, in order
        self.attempts = 0  # every request, accepted or not
        self._failures: dict[str, list[tuple[int, str]]] = {}
        self._ts = itertools.count(1)
        self._changed = threading.Condition()

    def fail_next(self, method: str, *, error: str = "internal_error", status: int = 200) -> None:
        """The next call of `method` fails: `{"ok": false, "error": error}` with `status`."""
        with self._changed:
            self._failures.setdefault(method, []).append((status, error))

    def made(self, method: str) -> list[dict[str, Any]]:
        with self._changed:
            return [params for name, params in self.calls if name == method]

    def wait_for(self, method: str, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        with self._changed:
            if not self._changed.wait_for(
                lambda: len(self.made_unlocked(method)) >= count, timeout
            ):
                raise AssertionError(
                    f"expected {count} {method} calls within {timeout} s, "
                    f"got {len(self.made_unlocked(method))}"
                )
            return self.made_unlocked(method)

    def made_unlocked(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.calls if name == method]

    @property
    def url(self) -> str:
        """The Web API's base URL, as slack_sdk's WebClient takes it."""
        return f"{self.origin}/api/"

    def answer(self, path: str, headers: Any, body: str) -> tuple[int, Any]:
        return self._handle(
            path, headers.get("Authorization", ""), _params(headers.get("Content-Type", ""), body)
        )

    def _handle(self, path: str, authorization: str, params: dict[str, Any]) -> tuple[int, dict]:
        method = path.removeprefix("/api/").split("?")[0]
        with self._changed:
            self.attempts += 1
            if method not in METHODS:
                return 404, {"ok": False, "error": "unknown_method"}
            if not authorization.startswith("Bearer ") or not authorization[7:]:
                return 200, {"ok": False, "error": "not_authed"}
            if authorization[7:] != self.token:
                return 200, {"ok": False, "error": "invalid_auth"}
            if self._failures.get(method):
                status, error = self._failures[method].pop(0)
                return status, {"ok": False, "error": error}
            if method == "auth.test":
                return 200, {
                    "ok": True, "url": "https://acme.slack.com/", "team": "Acme",
                    "user": "askdocs", "team_id": TEAM_ID, "user_id": BOT_USER_ID,
                    "bot_id": "B0BOT0001",
                }  # fmt: skip
            if not params.get("channel"):
                return 200, {"ok": False, "error": "channel_not_found"}
            self.calls.append((method, params))
            self._changed.notify_all()
            if method == "chat.postEphemeral":
                return 200, {"ok": True, "message_ts": f"1700000000.{next(self._ts):06d}"}
            ts = params.get("ts") or f"1700000000.{next(self._ts):06d}"
            return 200, {"ok": True, "channel": params["channel"], "ts": ts, "message": params}


def _params(content_type: str, body: str) -> dict[str, Any]:
    if content_type.startswith("application/json"):
        return json.loads(body or "{}")
    params: dict[str, Any] = {key: values[0] for key, values in parse_qs(body).items()}
    if isinstance(params.get("blocks"), str):
        params["blocks"] = json.loads(params["blocks"])
    return params
