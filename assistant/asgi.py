"""ASGI entry point: HTTP through Django, WebSockets through Channels.

There is no global origin validator: the widget lives on customers' pages, so each socket's
Origin is checked against the allowed origins of the project it names (assistant.ask.consumers)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")

# Django is set up before anything imports models.
django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from assistant.ask.routing import websocket_urlpatterns  # noqa: E402
from assistant.server_limits import answer_over_limit_requests  # noqa: E402

# Daphne's own refusals (a request line over 16 KiB, a WebSocket message over 1 MiB) answer in
# the API's error shape instead of dropping the connection.
answer_over_limit_requests()

application = ProtocolTypeRouter(
    {
        "http": django_application,
        "websocket": URLRouter(websocket_urlpatterns),
    }
)
