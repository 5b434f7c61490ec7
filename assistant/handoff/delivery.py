"""How a handoff reaches the support team: an e-mail through Django's mail backend, or a JSON
POST to the project's webhook, signed with the project's secret key so the receiver can tell
it came from us (`X-AskAI-Signature: sha256=<hex HMAC-SHA256 of the body>`)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import httpx
from django.conf import settings
from django.core.mail import EmailMessage

from assistant.handoff.models import Handoff
from assistant.wiring import outbound
from assistant.wiring.resilience import describe, is_transient


class DeliveryFailed(RuntimeError):
    """The handoff did not arrive. `retry`: worth another attempt later (the server or the
    network failed), not when the receiver refused it (a 4xx)."""

    def __init__(self, cause: BaseException | str, *, retry: bool) -> None:
        super().__init__(describe(cause))
        self.retry = retry


def payload(handoff: Handoff) -> dict[str, Any]:
    return {
        "handoff_id": handoff.pk,
        "project": handoff.project.name,
        "conversation_id": handoff.conversation_id,
        "email": handoff.email,
        "page_url": handoff.page_url,
        "message": handoff.message,
        "created_at": handoff.created_at.isoformat(),
        "exchanges": handoff.exchanges,
    }


def signature(key: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def deliver(handoff: Handoff) -> None:
    """Send it once; DeliveryFailed when it did not arrive."""
    if handoff.via == Handoff.Via.EMAIL:
        _send_mail(handoff)
    elif handoff.via == Handoff.Via.WEBHOOK:
        _post_webhook(handoff)


def _post_webhook(handoff: Handoff) -> None:
    body = json.dumps(payload(handoff)).encode()
    headers = {"Content-Type": "application/json", "User-Agent": "ask-ai-handoff/1"}
    try:
        headers["X-AskAI-Signature"] = signature(handoff.project.signing_key(), body)
    except ValueError:
        pass  # no secret key issued yet: nothing the receiver could check a signature with
    # The timeout bounds the whole delivery, not each read: a receiver that trickles its
    # answer cannot hold the lane. A target at a non-public address is refused at connect
    # (assistant/wiring/outbound.py) and not retried; redirects are not followed.
    seconds = settings.ASKDOCS_HANDOFF_WEBHOOK_TIMEOUT
    try:
        with outbound.deadline(seconds), outbound.client(timeout=seconds) as client:
            response = client.post(handoff.target, content=body, headers=headers)
            response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        raise DeliveryFailed(f"HTTP {exc.response.status_code}", retry=is_transient(exc)) from exc
    except httpx.ConnectError as exc:
        refused = isinstance(exc.__cause__ or exc.__context__, outbound.Refused)
        raise DeliveryFailed(exc, retry=not refused) from exc
    except httpx.HTTPError as exc:
        raise DeliveryFailed(exc, retry=True) from exc


def _send_mail(handoff: Handoff) -> None:
    mail = EmailMessage(
        subject=f"[{handoff.project.name}] A visitor asks for a person"
        + (f" ({handoff.email})" if handoff.email else ""),
        body=mail_body(handoff),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[handoff.target],
        reply_to=[handoff.email] if handoff.email else None,
    )
    try:
        mail.send()
    except Exception as exc:  # noqa: BLE001 - SMTP, socket or file errors: all worth a retry
        raise DeliveryFailed(exc, retry=True) from exc


def mail_body(handoff: Handoff) -> str:
    lines = [
        f"A visitor of {handoff.project.name} asked to talk to a person.",
        f"Their e-mail: {handoff.email or '(not given: you cannot reply to them)'}",
        f"Page: {handoff.page_url or '(unknown)'}",
    ]
    if handoff.message:
        lines += ["", "Their message:", handoff.message]
    lines += ["", "The conversation:"]
    for number, exchange in enumerate(handoff.exchanges, start=1):
        lines += ["", f"{number}. Q: {exchange['question']}", f"   A: {exchange['answer']}"]
        for kind, label in (("sources", "Source"), ("related", "Offered page")):
            lines += [f"   {label}: {s['title']} {s['url']}".rstrip() for s in exchange[kind]]
    lines += ["", f"Conversation id: {handoff.conversation_id} (handoff {handoff.pk})"]
    return "\n".join(lines)
