"""WhiteNoise, served right under ASGI as well (see assistant/served_streams.py)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse
from whitenoise.middleware import WhiteNoiseMiddleware

from assistant.served_streams import serve_streaming_for


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise's middleware; under ASGI its files stream as an async iterator."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = super().__call__(request)
        if isinstance(response, StreamingHttpResponse):
            serve_streaming_for(request, response)
        return response
