"""The MCP door: Streamable HTTP at /mcp/, beside Django in the ASGI app (config/asgi.py).

Every request is authorised by the one intake first (the project's secret key as a Bearer
token; 401 without it), then served by the SDK in stateless JSON mode: each request stands
alone, so any of several ASGI processes behind a load balancer can answer it, and the session
manager lives for one request only. That matters because daphne (`.bin/run`) runs no ASGI
lifespan, where the SDK would otherwise keep a task group for the whole process.

The door stands beside Django, so it applies itself what Django's middleware applies to the
other doors: the Host must be one of ALLOWED_HOSTS (which also guards against DNS rebinding),
and with ASKDOCS_HTTPS a request that came over plain http is refused (a redirect would come
after the secret key already crossed the network in clear). No request gets anything without
the secret key, and one sent by a browser must also come from an allowed Origin.
"""

from __future__ import annotations

import json
import logging

from channels.db import database_sync_to_async
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import INVALID_REQUEST
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from assistant.ask import intake, mcp_intake
from assistant.ask.intake import Caller
from assistant.errors import UNAVAILABLE, IntakeError
from assistant.mcp_server.tools import SCOPE_KEY, server

logger = logging.getLogger(__name__)

PATHS = frozenset({"/mcp", "/mcp/"})
#: A JSON-RPC call wraps the intake's own body limit in its envelope and the client's _meta.
MAX_REQUEST_BYTES = 4 * intake.MAX_BODY_BYTES


async def mcp_application(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        # A stateless server has no stream for a GET to open and no session for a DELETE to
        # end; the protocol says 405 (the SDK would hold a GET open, doing nothing).
        error = IntakeError("method_not_allowed", "The MCP endpoint takes POST only.", 405)
        await _refuse(error, send)
        return
    headers = Headers(scope=scope)
    refused = _transport_refusal(scope, headers)
    if refused is not None:
        await _refuse(refused, send)
        return
    client = scope.get("client") or ("", 0)
    caller = Caller.from_headers(headers, key="", client=client[0])
    try:
        project = await database_sync_to_async(mcp_intake.authorise_mcp)(caller)
    except IntakeError as error:
        await _refuse(error, send)
        return
    except Exception:  # the database is down: say so as JSON-RPC, not an HTML 500
        logger.exception("MCP authorisation failed")
        await _refuse(IntakeError("unavailable", UNAVAILABLE, 503), send)
        return
    scope[SCOPE_KEY] = (project, caller)
    manager = StreamableHTTPSessionManager(
        # The low-level server behind the tools: the manager serves that, not the MCPServer.
        app=server._lowlevel_server,
        stateless=True,
        json_response=True,
        max_request_body_size=MAX_REQUEST_BYTES,
    )
    async with manager.run():
        await manager.handle_request(scope, receive, send)


def _transport_refusal(scope: Scope, headers: Headers) -> IntakeError | None:
    """What Django's CommonMiddleware (ALLOWED_HOSTS) and SecurityMiddleware (HTTPS) would
    refuse."""
    host, _ = split_domain_port(headers.get("host", ""))
    allowed = settings.ALLOWED_HOSTS or (
        [".localhost", "127.0.0.1", "[::1]"] if settings.DEBUG else []
    )
    if not host or not validate_host(host, allowed):
        return IntakeError("disallowed_host", "This host name is not served here.", 400)
    if settings.SECURE_SSL_REDIRECT and not _secure(scope, headers):
        return IntakeError(
            "https_required",
            "The MCP endpoint is served over HTTPS only: use the https:// address (and a new "
            "secret key if this one was sent over plain http).",
            403,
        )
    return None


def _secure(scope: Scope, headers: Headers) -> bool:
    if scope.get("scheme") == "https":
        return True
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if not proxy:
        return False
    name = proxy[0].removeprefix("HTTP_").replace("_", "-").lower()
    return headers.get(name, "").split(",")[0].strip() == proxy[1]


async def _refuse(error: IntakeError, send: Send) -> None:
    """A JSON-RPC error with the intake's HTTP status (401 tells clients to authenticate)."""
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": INVALID_REQUEST, "message": error.message, "data": error.body()},
    }
    headers = [(b"content-type", b"application/json")]
    if error.status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="askdocs"'))
    if error.status == 405:
        headers.append((b"allow", b"POST"))
    if error.status in (429, 503):
        headers.append((b"retry-after", str(settings.ASKDOCS_RETRY_AFTER_SECONDS).encode()))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
