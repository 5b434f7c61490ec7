from __future__ import annotations

from django.urls import path

from assistant.ask.consumers import AskConsumer

websocket_urlpatterns = [
    path("ws/ask/", AskConsumer.as_asgi()),
]
