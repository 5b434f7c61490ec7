"""Overload answered well: every 503 says when to come back, and a database that refused is
logged with its cause (a full pool or a database that is down), told apart on a real
PostgreSQL with a real psycopg pool."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from django.db import OperationalError
from django.db.backends.postgresql.base import DatabaseWrapper

from assistant.overload import DATABASE_DOWN, POOL_EXHAUSTED, database_trouble, log_database_trouble

POSTGRES = urlsplit(
    os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
)


def pooled(alias: str, port: int) -> DatabaseWrapper:
    """A connection of Django's PostgreSQL backend with a pool of one connection."""
    return DatabaseWrapper(
        {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": POSTGRES.path.lstrip("/"),
            "USER": POSTGRES.username or "postgres",
            "PASSWORD": POSTGRES.password or "",
            "HOST": POSTGRES.hostname,
            "PORT": port,
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": False,
            "AUTOCOMMIT": True,
            "ATOMIC_REQUESTS": False,
            "TIME_ZONE": None,
            "TEST": {},
            "OPTIONS": {"pool": {"min_size": 0, "max_size": 1, "timeout": 1.0}},
        },  # fmt: skip
        alias=alias,
    )


@pytest.fixture
def holder(django_db_blocker) -> Iterator[DatabaseWrapper]:  # noqa: ANN001
    """Connections of their own, outside the test database (pytest-django guards those)."""
    with django_db_blocker.unblock():
        first = pooled("overload-full", POSTGRES.port or 5432)
        try:
            first.ensure_connection()  # the pool's one connection, held
        except OperationalError:
            pytest.skip("no PostgreSQL at " + POSTGRES.geturl())
        yield first
        first.close()
        first.close_pool()


def test_a_full_pool_is_told_from_a_database_that_is_down(holder, caplog) -> None:
    waiting = pooled("overload-full", POSTGRES.port or 5432)
    with pytest.raises(OperationalError) as full:
        waiting.ensure_connection()
    assert database_trouble(full.value, waiting.pool) == POOL_EXHAUSTED

    down = pooled("overload-down", 1)  # nothing listens on port 1
    try:
        with pytest.raises(OperationalError) as refused:
            down.ensure_connection()
        assert database_trouble(refused.value, down.pool) == DATABASE_DOWN
    finally:
        down.close_pool()

    with caplog.at_level(logging.WARNING, logger="askdocs.overload"):
        log_database_trouble(full.value, "/api/v1/ask")
    assert "503 for /api/v1/ask:" in caplog.text


@pytest.mark.django_db
def test_every_503_says_when_to_come_back(client, settings) -> None:
    settings.TWILIO_AUTH_TOKEN = ""  # the SMS door answers 503 while it is not configured
    response = client.post("/sms/twilio/incoming", {"Body": "hi"})
    assert response.status_code == 503
    assert response["Retry-After"] == str(settings.ASKDOCS_RETRY_AFTER_SECONDS)
