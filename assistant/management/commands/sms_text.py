"""Text the SMS webhook as Twilio would: signed requests, replies printed with the time the
webhook took to answer (its acknowledgement time).

Without Twilio settings the texts go through the real webhook in this process, signed with a
throwaway token: the SMS channel can be tried without a Twilio account or a running server.
With TWILIO_AUTH_TOKEN and TWILIO_PUBLIC_BASE_URL set they go to a running server."""

from __future__ import annotations

import secrets
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from xml.etree import ElementTree

import httpx
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import Client, override_settings
from django.urls import reverse
from twilio.request_validator import RequestValidator

#: A reply is ready well within it once the models are loaded; Twilio's own limit is 15 s.
LOCAL_BUDGET_SECONDS = 14.0
LOCAL_BASE_URL = "https://testserver"

Send = Callable[[dict[str, str], dict[str, str]], tuple[int, str]]


class Command(BaseCommand):
    help = (
        "Send texts to the SMS webhook and print each reply and how long the webhook took: "
        "in this process with a throwaway signing token when Twilio is not configured, "
        "otherwise to a running server, signed with TWILIO_AUTH_TOKEN for "
        "TWILIO_PUBLIC_BASE_URL."
    )

    def add_arguments(self, parser):
        parser.add_argument("texts", nargs="+", help="Messages, sent in order")
        parser.add_argument(
            "--to", required=True, help="The project's SMS number (the demo's: +15550100100)"
        )
        parser.add_argument("--from", dest="sender", default="+15550001234", help="Texter")
        parser.add_argument(
            "--url", default="",
            help="Where the server listens (default TWILIO_PUBLIC_BASE_URL; needs Twilio settings)",
        )  # fmt: skip
        parser.add_argument("--repeat", type=int, default=1, help="Send the texts N times")

    def handle(self, *args: object, **options) -> None:
        configured = bool(settings.TWILIO_AUTH_TOKEN and settings.TWILIO_PUBLIC_BASE_URL)
        if options["url"] and not configured:
            raise CommandError(
                "Texting a server needs TWILIO_AUTH_TOKEN and TWILIO_PUBLIC_BASE_URL (as the "
                "server has them); without --url the texts go through this process."
            )
        transport = _remote if configured else _in_process
        with transport(options["url"]) as (send, signing_url, token):
            if not configured:
                self.stdout.write("Twilio is not configured: texting the webhook in this process.")
            self._send_all(send, signing_url, token, options)

    def _send_all(self, send: Send, signing_url: str, token: str, options: dict) -> None:
        validator = RequestValidator(token)
        times: list[float] = []
        for _ in range(max(1, options["repeat"])):
            for text in options["texts"]:
                params = {
                    "MessageSid": "SM" + secrets.token_hex(16),
                    "AccountSid": settings.TWILIO_ACCOUNT_SID or "AC" + "0" * 32,
                    "From": options["sender"],
                    "To": options["to"],
                    "Body": text,
                    "NumMedia": "0",
                }
                headers = {"X-Twilio-Signature": validator.compute_signature(signing_url, params)}
                started = time.perf_counter()
                status, body = send(params, headers)
                elapsed = (time.perf_counter() - started) * 1000
                times.append(elapsed)
                self.stdout.write(f"> {text}")
                self.stdout.write(f"< {_reply(status, body)}")
                self.stdout.write(f"  [HTTP {status} in {elapsed:.0f} ms]\n")
        median = statistics.median(times)
        self.stdout.write(
            f"webhook acknowledgement time over {len(times)} texts: median {median:.0f} ms, "
            f"min {min(times):.0f} ms, max {max(times):.0f} ms"
        )


@contextmanager
def _remote(url: str) -> Iterator[tuple[Send, str, str]]:
    path = reverse("sms-twilio-incoming")
    target = (url or settings.TWILIO_PUBLIC_BASE_URL).rstrip("/") + path
    with httpx.Client(timeout=30) as http:

        def send(params: dict[str, str], headers: dict[str, str]) -> tuple[int, str]:
            response = http.post(target, data=params, headers=headers)
            return response.status_code, response.text

        yield send, settings.TWILIO_PUBLIC_BASE_URL + path, settings.TWILIO_AUTH_TOKEN


@contextmanager
def _in_process(url: str) -> Iterator[tuple[Send, str, str]]:
    path = reverse("sms-twilio-incoming")
    token = secrets.token_hex(16)
    with override_settings(
        TWILIO_AUTH_TOKEN=token,
        TWILIO_PUBLIC_BASE_URL=LOCAL_BASE_URL,
        ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "testserver"],
        SMS_INLINE_BUDGET=LOCAL_BUDGET_SECONDS,
    ):
        client = Client()

        def send(params: dict[str, str], headers: dict[str, str]) -> tuple[int, str]:
            response = client.post(path, data=params, headers=headers, secure=True)
            return response.status_code, response.content.decode()

        yield send, LOCAL_BASE_URL + path, token


def _reply(status: int, body: str) -> str:
    if status != 200:
        return body.strip()
    root = ElementTree.fromstring(body)  # noqa: S314 - our own server's TwiML
    messages = [m.text or "" for m in root.iter("Message")]
    return " | ".join(messages) if messages else "(empty TwiML: acknowledged, no reply here)"
