"""An API request gives its database connection back as soon as its view returns.

Django closes (with the pool: gives back) a request's connection only when the response has
been sent. Under ASGI, the middleware after the view runs in other threads; when one of them
needed a connection too (the CORS check, reading the allowed origins when their cache has
expired), every pooled connection could be held by a request waiting for a thread that waited
for a connection: 200 concurrent asks with a pool of 8 stalled until the pool's timeout.
Given back after the view, a connection is never held while its request waits for another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.db import connection
from django.http import HttpRequest
from django.utils.decorators import sync_and_async_middleware


def _give_back(request: HttpRequest) -> None:
    # Not inside a transaction (a test's, or ATOMIC_REQUESTS): that one ends the request.
    if request.path.startswith("/api/") and not connection.in_atomic_block:
        connection.close()


@sync_and_async_middleware
def give_back_the_connection_after_the_view(get_response: Callable[..., Any]) -> Any:
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> Any:
            response = await get_response(request)
            # In the request's own thread: the one its sync view ran in.
            await sync_to_async(_give_back, thread_sensitive=True)(request)
            return response

        return middleware

    def sync_middleware(request: HttpRequest) -> Any:
        response = get_response(request)
        _give_back(request)
        return response

    return sync_middleware
