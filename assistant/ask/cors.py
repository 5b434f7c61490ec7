"""CORS for the API follows the projects' allowed origins (django-cors-headers does the
headers; we only say which origins are known). The view then checks the origin against the
one project the request names."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from corsheaders.middleware import CorsMiddleware
from corsheaders.signals import check_request_enabled
from django.core.cache import cache
from django.db import connection
from django.dispatch import receiver
from django.http import HttpRequest
from django.http.response import HttpResponseBase

logger = logging.getLogger(__name__)

_CACHE_KEY = "askdocs:cors-origins"


def known_origins() -> set[str]:
    """The allowed origins of every project, cached for a minute. With the cache unreachable
    (Redis down) they are read from the database on every request: slower, never wrong, and
    never open to every origin."""
    try:
        origins = cache.get(_CACHE_KEY)
    except Exception:  # noqa: BLE001 - the database still knows the origins
        logger.warning("cache unreachable; reading the allowed origins from the database")
        return _outside_event_loop(_load_origins)
    if origins is None:
        origins = _outside_event_loop(_load_origins)
        try:
            cache.set(_CACHE_KEY, origins, 60)
        except Exception:  # noqa: BLE001
            logger.warning("cache unreachable; allowed origins not cached")
    return origins


def _load_origins() -> set[str]:
    from assistant.models import Project
    from assistant.origins import normalise_origin

    origins = set()
    for allowed in Project.objects.values_list("allowed_origins", flat=True):
        for origin in allowed:
            try:
                origins.add(normalise_origin(origin))
            except ValueError:
                continue
    return origins


def _outside_event_loop(load: Any) -> set[str]:
    """On the event loop, where the ORM may not be used, the query runs in a short-lived
    thread (once a minute at most) whose connection is given back at once."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return load()
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_closing_connection(load)).result()


def _closing_connection(work: Any) -> Any:
    def run(*args: Any) -> Any:
        try:
            return work(*args)
        finally:
            connection.close()  # a thread that is no request's gives its connection back

    return run


class ProjectCorsMiddleware(CorsMiddleware):
    """django-cors-headers, with its checks off the event loop under ASGI. They may read the
    allowed origins from the database, and a loop blocked waiting for a connection stalls
    every request of the process, also those holding the connections it waits for: 200
    concurrent asks with a pool of 8 connections were refused (PoolTimeout) instead of
    waiting their turn."""

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        check = _closing_connection(self.check_preflight)
        response = await sync_to_async(check, thread_sensitive=False)(request)
        if response is None:
            result = self.get_response(request)
            assert not isinstance(result, HttpResponseBase)  # noqa: S101 - async mode
            response = await result
        add_headers = _closing_connection(self.add_response_headers)
        await sync_to_async(add_headers, thread_sensitive=False)(request, response)
        return response


def forget_origins() -> None:
    try:
        cache.delete(_CACHE_KEY)
    except Exception:  # noqa: BLE001 - a saved project must not fail for the cache
        logger.error("cache unreachable; origins cached before this change expire within 60 s")


@receiver(check_request_enabled)
def cors_allow_project_origins(sender: Any, request: Any, **kwargs: Any) -> bool:
    from assistant.origins import normalise_origin

    try:
        return normalise_origin(request.headers.get("Origin", "")) in known_origins()
    except ValueError:
        return False
