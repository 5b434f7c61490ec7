"""Rate limits on every ask path, counted by django-ratelimit in the default cache (Redis when
REDIS_URL is set, so every web process shares the counters).

The WebSocket consumer has no HttpRequest, so the checks take the client address and build the
small request django-ratelimit reads the address from."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import is_ratelimited

RATE_LIMITED = "Too many questions at once. Please wait a minute and ask again."
FEEDBACK_RATE_LIMITED = "Too much feedback at once. Please wait a minute."


def _request_from(client: str) -> HttpRequest:
    request = HttpRequest()
    request.method = "POST"
    request.META["REMOTE_ADDR"] = client or "0.0.0.0"  # noqa: S104 - an address, not a bind
    return request


def ask_is_limited(*, client: str, conversation_id: str = "") -> bool:
    """Count one question against its client address and its conversation; True when over."""
    request = _request_from(client)
    if is_ratelimited(
        request, group="ask:client", key="ip", rate=settings.ASKDOCS_RATE_ASK_PER_CLIENT,
        increment=True,
    ):  # fmt: skip
        return True
    return bool(conversation_id) and is_ratelimited(
        request,
        group="ask:conversation",
        key=lambda group, request: conversation_id,
        rate=settings.ASKDOCS_RATE_ASK_PER_CONVERSATION,
        increment=True,
    )


def feedback_is_limited(*, client: str) -> bool:
    return is_ratelimited(
        _request_from(client), group="feedback:client", key="ip",
        rate=settings.ASKDOCS_RATE_FEEDBACK_PER_CLIENT, increment=True,
    )  # fmt: skip
