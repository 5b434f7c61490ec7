"""The Discord interactions endpoint of a project. Thin: find the project by the key in the
URL, check Discord's signature (Ed25519 over timestamp + body with the application's public
key; a timestamp more than five minutes off is a replay), answer Discord's PING, and let the
service decide the response, at once."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from assistant.ask.intake import database_answers, json_depth
from assistant.ask.selectors import project_by_key
from assistant.discord import services
from assistant.discord.interactions import PING
from assistant.discord.signing import is_signed
from assistant.models import Project

logger = logging.getLogger(__name__)

#: An interaction carries the message it came from (a button press): larger and deeper than
#: what the REST doors take.
MAX_BODY_BYTES = 1_000_000
MAX_JSON_DEPTH = 40


def signed_project(request: HttpRequest, key: str) -> Project | HttpResponse:
    """The project whose application signed this request, or the response that refuses it.
    Discord itself sends badly signed requests when the endpoint is saved, and expects 401."""
    with database_answers():
        project = project_by_key(key)
    if project is None or not project.discord_connected:
        return HttpResponse("No Discord application is connected here.\n", status=404)
    if len(request.body) > MAX_BODY_BYTES:
        return HttpResponse("Too large.\n", status=413)
    timestamp = request.headers.get("X-Signature-Timestamp", "")
    signed = is_signed(
        public_key=project.discord_public_key,
        signature=request.headers.get("X-Signature-Ed25519", ""),
        timestamp=timestamp, body=request.body, now=time.time(),
    )  # fmt: skip
    if not signed:
        logger.warning(
            "Discord request to %s refused: bad signature or a replay (timestamp %r)",
            project.name, timestamp[:20],
        )  # fmt: skip
        return HttpResponse("Invalid request signature.\n", status=401)
    return project


def _payload(body: bytes) -> dict[str, Any] | None:
    try:
        text = body.decode("utf-8")
        data = json.loads(text) if json_depth(text) <= MAX_JSON_DEPTH else None
    except ValueError:  # not UTF-8, not JSON
        return None
    return data if isinstance(data, dict) else None


@csrf_exempt
@require_POST
def interactions(request: HttpRequest, key: str) -> HttpResponse:
    project = signed_project(request, key)
    if isinstance(project, HttpResponse):
        return project
    payload = _payload(request.body)
    if payload is None:
        return HttpResponse("The body is not a JSON object.\n", status=400)
    if payload.get("type") == PING:
        return JsonResponse({"type": PING})
    return JsonResponse(services.discord_interaction_receive(project=project, payload=payload))
