"""The MCP door: Streamable HTTP at /mcp/, beside Django in the ASGI app (assistant/asgi.py).

Every request is authorised by the one intake first (the project's secret key as a Bearer
token; 401 without it), then served by the SDK in stateless JSON mode: each request stands
alone, so any of several ASGI processes behind a load balancer can answer it, and the session
manager lives for one request only. That matters because daphne (`.bin/run`) runs no ASGI
lifespan, where the SDK would otherwise keep a task group for the whole process.

The SDK's DNS-rebinding guard (an allowed-Host list) is left off: no request gets anything
without the secret key, and one sent by a browser must also come from an allowed Origin.
"""

from __future__ import annotations

import json
import logging

from channels.db import database_sync_to_async
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import INVALID_REQUEST
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from assistant.ask import intake
from assistant.ask.intake import Caller
from assistant.ask.services import UNAVAILABLE
from assistant.errors import IntakeError
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
    client = scope.get("client") or ("", 0)
    caller = Caller.from_headers(Headers(scope=scope), key="", client=client[0])
    try:
        project = await database_sync_to_async(intake.authorise_mcp)(caller)
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
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
