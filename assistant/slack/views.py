"""Slack's two request URLs of a project: the Events API and interactivity. Thin: find the
project by the key in the URL, check Slack's signature (HMAC-SHA256 of `v0:{timestamp}:{body}`
with the project's signing secret; requests older than five minutes are replays), answer the
URL check, let the service decide, and acknowledge at once with an empty 200."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from slack_sdk.signature import SignatureVerifier

from assistant.ask.intake import database_answers, json_depth
from assistant.ask.selectors import project_by_key
from assistant.errors import IntakeError
from assistant.models import Project
from assistant.slack import services

logger = logging.getLogger(__name__)

#: Slack's event and interaction payloads carry the message's blocks: larger and deeper than
#: what the REST doors take.
MAX_BODY_BYTES = 1_000_000
MAX_JSON_DEPTH = 40
RETRY_HEADER = "X-Slack-Retry-Num"


def signed_project(request: HttpRequest, key: str) -> Project | HttpResponse:
    """The project whose signing secret signed this request, or the response that refuses it."""
    with database_answers():
        project = project_by_key(key)
    secret = project.slack_signing_secret() if project is not None else ""
    if project is None or not secret:
        return HttpResponse("No Slack app is connected here.\n", status=404)
    if len(request.body) > MAX_BODY_BYTES:
        return HttpResponse("Too large.\n", status=413)
    timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
    signature = request.headers.get("X-Slack-Signature", "")
    if not (timestamp.isdigit() and signature):
        logger.warning("Slack request to %s refused: no signature or timestamp", project.name)
        return HttpResponse("Invalid signature.\n", status=401)
    # The verifier refuses a timestamp more than five minutes from now (a replay).
    if not SignatureVerifier(secret).is_valid(request.body, timestamp, signature):
        logger.warning(
            "Slack request to %s refused: bad signature or a replay (timestamp %s)",
            project.name, timestamp,
        )  # fmt: skip
        return HttpResponse("Invalid signature.\n", status=401)
    return project


def _json(text: str) -> dict[str, Any]:
    if json_depth(text) > MAX_JSON_DEPTH:
        raise IntakeError("malformed_json", "The JSON is nested too deeply.")
    try:
        data = json.loads(text)
    except ValueError:
        raise IntakeError("malformed_json", "The body is not JSON.") from None
    if not isinstance(data, dict):
        raise IntakeError("invalid", "Send a JSON object.")
    return data


@csrf_exempt
@require_POST
def events(request: HttpRequest, key: str) -> HttpResponse:
    project = signed_project(request, key)
    if isinstance(project, HttpResponse):
        return project
    try:
        envelope = _json(request.body.decode("utf-8"))
    except (IntakeError, UnicodeDecodeError):
        return HttpResponse("The body is not a JSON object.\n", status=400)
    if envelope.get("type") == "url_verification":
        return JsonResponse({"challenge": str(envelope.get("challenge") or "")})
    outcome = services.slack_event_receive(project=project, envelope=envelope)
    if request.headers.get(RETRY_HEADER):
        logger.info(
            "Slack retry %s (%s) of %s: %s", request.headers[RETRY_HEADER],
            request.headers.get("X-Slack-Retry-Reason", "?"), envelope.get("event_id"), outcome,
        )  # fmt: skip
    return HttpResponse(status=200)


@csrf_exempt
@require_POST
def interactions(request: HttpRequest, key: str) -> HttpResponse:
    project = signed_project(request, key)
    if isinstance(project, HttpResponse):
        return project
    try:
        payload = _json(request.POST.get("payload", ""))
    except IntakeError:
        return HttpResponse("The payload is not a JSON object.\n", status=400)
    services.slack_action_receive(project=project, payload=payload)
    return HttpResponse(status=200)
