"""CORS for the API follows the projects' allowed origins (django-cors-headers does the
headers; we only say which origins are known). The view then checks the origin against the
one project the request names."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from corsheaders.signals import check_request_enabled
from django.core.cache import cache
from django.db import connection
from django.dispatch import receiver

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
    try:
        cache.delete(_CACHE_KEY)
    except Exception:  # noqa: BLE001 - a saved project must not fail for the cache
        logger.error("cache unreachable; origins cached before this change expire within 60 s")


@receiver(check_request_enabled)
def cors_allow_project_origins(sender: Any, request: Any, **kwargs: Any) -> bool:
    from assistant.models import normalise_origin

    try:
        return normalise_origin(request.headers.get("Origin", "")) in known_origins()
    except ValueError:
        return False
