"""CORS for the API follows the projects' allowed origins (django-cors-headers does the
headers; we only say which origins are known). The view then checks the origin against the
one project the request names."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from corsheaders.signals import check_request_enabled
from django.core.cache import cache
from django.db import connection
from django.dispatch import receiver

_CACHE_KEY = "askdocs:cors-origins"


def known_origins() -> set[str]:
    origins = cache.get(_CACHE_KEY)
    if origins is None:
        origins = _outside_event_loop(_load_origins)
        cache.set(_CACHE_KEY, origins, 60)
    return origins


def _load_origins() -> set[str]:
    from assistant.models import Project, normalise_origin

    origins = set()
    for allowed in Project.objects.values_list("allowed_origins", flat=True):
        for origin in allowed:
            try:
                origins.add(normalise_origin(origin))
            except ValueError:
                continue
    return origins


def _outside_event_loop(load: Any) -> set[str]:
    """Under ASGI the CORS middleware runs (and sends its signal) on the event loop, where the
    ORM may not be used; the query then runs in a short-lived thread (once a minute at most)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return load()

    def load_and_close() -> set[str]:
        try:
            return load()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(load_and_close).result()


def forget_origins() -> None:
    cache.delete(_CACHE_KEY)


@receiver(check_request_enabled)
def cors_allow_project_origins(sender: Any, request: Any, **kwargs: Any) -> bool:
    from assistant.models import normalise_origin

    try:
        return normalise_origin(request.headers.get("Origin", "")) in known_origins()
    except ValueError:
        return False
