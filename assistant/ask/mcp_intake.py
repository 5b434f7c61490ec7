"""The intake of the MCP server's callers (AI tools): who they are, from their secret key."""

from __future__ import annotations

from assistant.ask import ratelimits
from assistant.ask.intake import Caller
from assistant.ask.selectors import project_by_secret_key
from assistant.errors import IntakeError
from assistant.models import Project


def authorise_mcp(caller: Caller) -> Project:
    """AI tools (MCP clients) name no public key: their Bearer secret key alone picks the
    project. A browser-based client must also come from one of the project's origins."""
    if ratelimits.wrong_keys_exceeded(caller.client):
        raise IntakeError("rate_limited", ratelimits.WRONG_KEYS, 429)
    project = project_by_secret_key(caller.bearer)
    if project is None:
        ratelimits.count_wrong_key(caller.client)  # guessing keys costs the guesser
        raise IntakeError(
            "secret_key_required",
            "Authenticate with the project's secret key: Authorization: Bearer sk_...",
            401,
        )
    if caller.origin and not project.allows_origin(caller.origin):
        raise IntakeError(
            "origin_not_allowed", f"Origin {caller.origin} is not allowed for this project.", 403
        )
    return project
