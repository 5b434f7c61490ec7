"""ASGI entry point: HTTP through Django, the MCP server for AI tools at /mcp/, WebSockets
through Channels.

There is no global origin validator: the widget lives on customers' pages, so each socket's
Origin is checked against the allowed origins of the project it names (assistant.ask.consumers)."""

import os
from typing import Any

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Django is set up before anything imports models.
django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from assistant.admission import refuse_when_full  # noqa: E402
from assistant.ask.routing import websocket_urlpatterns  # noqa: E402
from assistant.mcp_server.app import PATHS as MCP_PATHS  # noqa: E402
from assistant.mcp_server.app import mcp_application  # noqa: E402
from assistant.server_limits import (  # noqa: E402
    answer_over_limit_requests,
    listen_with_room,
    refuse_large_body,
)

# Daphne's own refusals (a request line over 16 KiB, a WebSocket message over 1 MiB) answer in
# the API's error shape instead of dropping the connection.
answer_over_limit_requests()
# A burst of connections waits in a listen queue long enough to be answered, not reset.
listen_with_room(settings.ASKDOCS_LISTEN_BACKLOG)


async def http_application(scope: Any, receive: Any, send: Any) -> None:
    """/mcp/ to the MCP server, everything else to Django; a body declared over its path's
    limit is refused before either reads it, and a question when admission is full."""
    if await refuse_large_body(scope, send) or await refuse_when_full(scope, send):
        return
    if scope["path"] in MCP_PATHS:
        await mcp_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http_application,
        "websocket": URLRouter(websocket_urlpatterns),
    }
)
