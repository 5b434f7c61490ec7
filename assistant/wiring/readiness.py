"""Readiness: can this process serve a question now? One short check per configured dependency.

`/healthz` says only that the process is up (liveness: restart it if not); `/readyz` asks the
database, and Redis, a Chroma server and Ollama when they are configured, each with a timeout
of about a second, so a load balancer can stop sending traffic to a process that would only
answer 503s, and an operator can see which part is down."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from django.conf import settings
from django.db import connection

TIMEOUT_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    ms: float
    detail: str = ""


def checks() -> list[Check]:
    """The dependencies this process is configured with, each checked once, in order."""
    planned: list[tuple[str, Callable[[], None]]] = [("database", _database)]
    if settings.REDIS_URL:
        planned.append(("redis", _redis))
    if settings.CHROMA_URL:
        planned.append(("chroma", lambda: _http(f"{settings.CHROMA_URL}/api/v2/heartbeat")))
    if settings.OLLAMA_HOST:
        planned.append(("ollama", lambda: _http(f"{settings.OLLAMA_HOST}/api/version")))
    return [_run(name, probe) for name, probe in planned]


def _run(name: str, probe: Callable[[], None]) -> Check:
    started = time.perf_counter()
    try:
        probe()
    except Exception as exc:  # noqa: BLE001 - whatever failed, the dependency is not ready
        return Check(name, False, _ms(started), _describe(exc))
    return Check(name, True, _ms(started))


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis() -> None:
    import redis

    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS
    )
    try:
        client.ping()
    finally:
        client.close()


def _http(url: str) -> None:
    httpx.get(url, timeout=TIMEOUT_SECONDS).raise_for_status()


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
