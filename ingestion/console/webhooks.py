"""Console actions for a support source's webhook token: issue (shown once), revoke. The
token authorises `POST /api/v1/sources/<id>/answers`; only its hash and hint are stored."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST

from assistant.console_shell.access import show_once, shown_once, staff_required
from ingestion.models import Source
from ingestion.support_answers import (
    source_webhook_token_issue,
    source_webhook_token_revoke,
    source_webhook_token_valid,
)

#: Session key of the tokens waiting to be shown once, by source pk.


def takes_webhook(source: Source) -> bool:
    """Only a support source fed by imports receives pushed answers."""
    return (
        source.kind == Source.Kind.SUPPORT
        and (source.config or {}).get("provider", "import") == "import"
    )


def webhook_context(*, session: SessionBase, source: Source) -> dict[str, Any] | None:
    """What the source page shows of its token: the full one once, after issuing; then the
    hint and when it was issued. None for sources without a webhook."""
    if not takes_webhook(source):
        return None
    token = shown_once(session, "webhook-token", source.pk)
    config = source.config or {}
    return {
        # A token issued or revoked since it was stored is not the one to show.
        "token": token
        if token and source_webhook_token_valid(source=source, token=token)
        else None,
        "hint": config.get("webhook_token_hint")
        or ("whk_…" if config.get("webhook_token_sha256") else ""),
        "issued": parse_datetime(config.get("webhook_token_issued") or ""),
    }


@require_POST
@staff_required
def webhook_token_new(request: HttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source, pk=pk)
    if not takes_webhook(source):
        messages.error(request, "Only a support source of provider “import” takes pushed answers.")
        return redirect("console-source", pk=source.pk)
    token = source_webhook_token_issue(source=source)
    show_once(request.session, "webhook-token", source.pk, token)
    messages.success(request, "Webhook token issued. Any earlier token no longer works.")
    return redirect("console-source", pk=source.pk)


@require_POST
@staff_required
def webhook_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    source = get_object_or_404(Source, pk=pk)
    source_webhook_token_revoke(source=source)
    messages.success(request, "Webhook token revoked: pushes with it are refused.")
    return redirect("console-source", pk=source.pk)
