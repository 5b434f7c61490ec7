"""Overload answered well: every 503 says when to come back (`Retry-After`), and a database
that refused is logged with its cause, so an operator can tell a full connection pool (more
requests than connections: scale out, raise DATABASE_POOL_SIZE) from a database that is
down (restart it)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.http import HttpRequest
from django.utils.decorators import sync_and_async_middleware

logger = logging.getLogger("askdocs.overload")

POOL_EXHAUSTED = "pool exhausted"
DATABASE_DOWN = "database down"


#: Each pool's count of failed connection attempts when last asked (by id of the pool).
_errors_seen: dict[int, int] = {}


def database_trouble(error: BaseException, pool: Any = None) -> str:
    """POOL_EXHAUSTED when every pooled connection stayed busy past the pool's timeout,
    DATABASE_DOWN otherwise. A pool that cannot open connections times out the same way
    (psycopg_pool's PoolTimeout under Django's OperationalError): it tried and failed to
    connect while the request waited, which its count of connection errors shows."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if type(cause).__name__ == "PoolTimeout":
            if pool is None:
                return POOL_EXHAUSTED
            errors = int(pool.get_stats().get("connections_errors", 0))
            failed_meanwhile = errors > _errors_seen.get(id(pool), 0)
            _errors_seen[id(pool)] = errors
            return DATABASE_DOWN if failed_meanwhile else POOL_EXHAUSTED
        cause = cause.__cause__ or cause.__context__
    return DATABASE_DOWN


def log_database_trouble(error: BaseException, where: str) -> str:
    cause = database_trouble(error, _default_pool())
    logger.warning(
        "503 for %s: %s (%s: %s)", where, cause, type(error).__name__, str(error).strip()[:200]
    )
    return cause


def _default_pool() -> Any:
    from django.db import connection

    try:
        return getattr(connection, "pool", None)
    except Exception:  # noqa: BLE001 - no pool to ask (SQLite, or pooling off)
        return None


def _with_retry_after(response: Any) -> Any:
    if getattr(response, "status_code", None) == 503 and not response.has_header("Retry-After"):
        response["Retry-After"] = str(settings.ASKDOCS_RETRY_AFTER_SECONDS)
    return response


@sync_and_async_middleware
def retry_after_on_503(get_response: Callable[..., Any]) -> Any:
    """Every 503 the server answers (a database or model unavailable, the SMS channel not
    configured) tells clients when to try again."""
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> Any:
            return _with_retry_after(await get_response(request))

        return middleware

    def sync_middleware(request: HttpRequest) -> Any:
        return _with_retry_after(get_response(request))

    return sync_middleware
