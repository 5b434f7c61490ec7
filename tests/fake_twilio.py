"""A small local HTTP server that speaks the one part of Twilio's REST API we use: creating a
message (POST /2010-04-01/Accounts/{AccountSid}/Messages.json, form-encoded, Basic auth with
the account SID and auth token). Answers like Twilio: 201 with the message resource, 401 with
Twilio's error document for wrong credentials, and whatever failure the test scripts.

    with FakeTwilio(account_sid, auth_token) as twilio:
        twilio.fail_next(2, status=500)
        ...
        twilio.wait_for_messages(1)
        twilio.messages[0]["Body"]
"""

from __future__ import annotations

import base64
import re
import secrets
import threading
from typing import Any
from urllib.parse import parse_qs

from tests.servers import LoopbackServer

_MESSAGES_PATH = re.compile(r"^/2010-04-01/Accounts/(AC[0-9a-f]{32})/Messages\.json$")


class FakeTwilio(LoopbackServer):
    def __init__(self, account_sid: str, auth_token: str) -> None:
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.messages: list[dict[str, str]] = []  # accepted messages, in order
        self.attempts = 0  # every POST, accepted or not
        self._failures: list[int] = []
        self._changed = threading.Condition()

    def fail_next(self, times: int, *, status: int = 500) -> None:
        with self._changed:
            self._failures += [status] * times

    def wait_for_messages(self, count: int, timeout: float = 30.0) -> list[dict[str, str]]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.messages) >= count, timeout):
                raise AssertionError(
                    f"expected {count} messages within {timeout} s, got {len(self.messages)}"
                )
            return list(self.messages)

    @property
    def url(self) -> str:
        return self.origin

    def answer(self, path: str, headers: Any, body: str) -> tuple[int, Any]:
        return self._handle(path, headers.get("Authorization", ""), body)

    def _handle(self, path: str, authorization: str, body: str) -> tuple[int, dict[str, Any]]:
        with self._changed:
            self.attempts += 1
            match = _MESSAGES_PATH.match(path)
            if match is None:
                return 404, _error(20404, "The requested resource was not found", 404)
            expected = base64.b64encode(f"{self.account_sid}:{self.auth_token}".encode()).decode()
            if match.group(1) != self.account_sid or authorization != f"Basic {expected}":
                return 401, _error(20003, "Authenticate", 401)
            if self._failures:
                status = self._failures.pop(0)
                return status, _error(20500, "Internal Server Error", status)
            form = {key: values[0] for key, values in parse_qs(body).items()}
            if not form.get("To") or not form.get("Body"):
                return 400, _error(21604, "A 'To' phone number and a 'Body' are required.", 400)
            sid = "SM" + secrets.token_hex(16)
            self.messages.append({**form, "sid": sid})
            self._changed.notify_all()
        return 201, {
            "sid": sid,
            "account_sid": self.account_sid,
            "to": form["To"],
            "from": form.get("From"),
            "body": form["Body"],
            "status": "queued",
            "num_segments": "1",
            "direction": "outbound-api",
            "api_version": "2010-04-01",
            "uri": f"/2010-04-01/Accounts/{self.account_sid}/Messages/{sid}.json",
        }


def _error(code: int, message: str, status: int) -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": status,
    }
