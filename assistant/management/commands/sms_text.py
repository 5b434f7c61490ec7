"""Text the SMS webhook as Twilio would: signed requests to a running server, replies printed
with the time the webhook took to answer (its acknowledgement time)."""

from __future__ import annotations

import secrets
import statistics
import time
from xml.etree import ElementTree

import httpx
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse
from twilio.request_validator import RequestValidator


class Command(BaseCommand):
    help = (
        "Send texts to the SMS webhook of a running server, signed with TWILIO_AUTH_TOKEN for "
        "TWILIO_PUBLIC_BASE_URL, and print each reply and how long the webhook took."
    )

    def add_arguments(self, parser):
        parser.add_argument("texts", nargs="+", help="Messages, sent in order")
        parser.add_argument("--to", required=True, help="The project's SMS number")
        parser.add_argument("--from", dest="sender", default="+15550001234", help="Texter")
        parser.add_argument(
            "--url", default="", help="Where the server listens (default TWILIO_PUBLIC_BASE_URL)"
        )
        parser.add_argument("--repeat", type=int, default=1, help="Send the texts N times")

    def handle(self, *args: object, **options) -> None:
        if not (settings.TWILIO_AUTH_TOKEN and settings.TWILIO_PUBLIC_BASE_URL):
            raise CommandError("Set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_PUBLIC_BASE_URL.")
        path = reverse("sms-twilio-incoming")
        signed_url = settings.TWILIO_PUBLIC_BASE_URL + path
        target = (options["url"] or settings.TWILIO_PUBLIC_BASE_URL).rstrip("/") + path
        validator = RequestValidator(settings.TWILIO_AUTH_TOKEN)
        times: list[float] = []
        with httpx.Client(timeout=30) as http:
            for _ in range(max(1, options["repeat"])):
                for text in options["texts"]:
                    params = {
                        "MessageSid": "SM" + secrets.token_hex(16),
                        "AccountSid": settings.TWILIO_ACCOUNT_SID,
                        "From": options["sender"],
                        "To": options["to"],
                        "Body": text,
                        "NumMedia": "0",
                    }
                    headers = {
                        "X-Twilio-Signature": validator.compute_signature(signed_url, params)
                    }
                    started = time.perf_counter()
                    response = http.post(target, data=params, headers=headers)
                    elapsed = (time.perf_counter() - started) * 1000
                    times.append(elapsed)
                    self.stdout.write(f"> {text}")
                    self.stdout.write(f"< {self._reply(response)}")
                    self.stdout.write(f"  [HTTP {response.status_code} in {elapsed:.0f} ms]\n")
        median = statistics.median(times)
        self.stdout.write(
            f"webhook acknowledgement time over {len(times)} texts: median {median:.0f} ms, "
            f"min {min(times):.0f} ms, max {max(times):.0f} ms"
        )

    @staticmethod
    def _reply(response: httpx.Response) -> str:
        if response.status_code != 200:
            return response.text.strip()
        root = ElementTree.fromstring(response.text)  # noqa: S314 - our own server's TwiML
        messages = [m.text or "" for m in root.iter("Message")]
        return " | ".join(messages) if messages else "(empty TwiML: acknowledged, no reply here)"
