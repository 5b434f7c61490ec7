"""Twilio's REST API, for replies that could not go back in the webhook response.

One client per process, built lazily from settings (never at import: Celery forks). Its base
URL is a setting (TWILIO_API_BASE_URL) so tests can point it at a local fake of the API.
Every send goes through the shared resilience policy: retries with backoff, and one circuit
breaker per Twilio API host.
"""

from __future__ import annotations

from functools import cache

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from assistant.wiring.resilience import Resilience, is_transient


def worth_retrying(exc: BaseException) -> bool:
    # Sending is not idempotent: retry only when Twilio cannot have taken the message (no
    # connection) or said so (429, 5xx). A read timeout may hide a sent message, so it fails.
    if isinstance(exc, requests.ReadTimeout):
        return False
    if isinstance(exc, requests.ConnectionError):
        return True
    return is_transient(exc)


def upstream_name() -> str:
    return f"twilio:{settings.TWILIO_API_BASE_URL}"


@cache
def client() -> Client:
    if not settings.TWILIO_ACCOUNT_SID:
        raise ImproperlyConfigured("Sending SMS needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN.")
    http = TwilioHttpClient(timeout=settings.TWILIO_HTTP_TIMEOUT)
    twilio = Client(settings.TWILIO_ACCOUNT_SID, settings.TWILIO_AUTH_TOKEN, http_client=http)
    twilio.api.base_url = settings.TWILIO_API_BASE_URL
    return twilio


@cache
def policy() -> Resilience:
    return Resilience(upstream_name(), retry_if=worth_retrying)


def send_sms(*, to: str, from_: str, body: str) -> str:
    """Send one text; return Twilio's message SID. Raises UpstreamUnavailable when Twilio
    cannot be reached (or its circuit is open), TwilioRestException when it refuses (4xx)."""
    message = policy().call(client().messages.create, to=to, from_=from_, body=body)
    return str(message.sid)


def reset() -> None:
    """Forget the client and policy (tests that change settings)."""
    client.cache_clear()
    policy.cache_clear()
