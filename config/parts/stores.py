"""Where data and work go: the database, Redis (channel layer, caches), Celery, and the limits
of what a sync reads."""

from __future__ import annotations

from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config.env import env, envbool, envfloat, envint, envurl
from config.parts.paths import DATA_DIR

# --- Database: SQLite (WAL) by default, anything dj-database-url reads otherwise -------------
DATABASE_URL = env("DATABASE_URL")
if DATABASE_URL:
    try:
        # Under ASGI every request may run on another thread, so persistent connections pile
        # up (Django's docs advise 0); PostgreSQL gets psycopg's pool instead (below).
        DATABASES = {
            "default": dj_database_url.parse(
                DATABASE_URL, conn_max_age=envint("DATABASE_CONN_MAX_AGE", 0, minimum=0)
            )
        }
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from exc
    # Each process opens at most DATABASE_POOL_SIZE connections to PostgreSQL; a request that
    # finds them all busy waits up to DATABASE_POOL_TIMEOUT seconds for one (then JSON 503).
    # Without it, 200 concurrent asks on two web processes opened 104 connections and
    # PostgreSQL (max_connections 100) refused everyone. 0: no pool (PgBouncer in front).
    DATABASE_POOL_SIZE = envint("DATABASE_POOL_SIZE", 10, minimum=0, maximum=1000)
    if DATABASES["default"]["ENGINE"].endswith("postgresql") and DATABASE_POOL_SIZE:
        if DATABASES["default"].get("CONN_MAX_AGE"):
            raise ImproperlyConfigured(
                "DATABASE_CONN_MAX_AGE must be 0 with the connection pool (DATABASE_POOL_SIZE)"
            )
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": DATABASE_POOL_SIZE,
            "timeout": envfloat("DATABASE_POOL_TIMEOUT", 30.0, minimum=0.1),
        }
        # The pool checks a connection before handing it out: after a database restart the
        # pooled ones are dead, and each would fail one request.
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(DATA_DIR / "db.sqlite3"),
            "OPTIONS": {
                # WAL lets the web process read while a sync writes; IMMEDIATE avoids
                # "database is locked" on upgrade from read to write transactions.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: channel layer, cache, rate-limit counters, Celery broker --------------------------
REDIS_URL = envurl("REDIS_URL", schemes=("redis", "rediss", "unix"))
# Prefixes every key this app writes to Redis (cache, rate limits, channel layer): lets two
# deployments, or two test runs, share one Redis server without meeting.
REDIS_KEY_PREFIX = env("ASKDOCS_REDIS_KEY_PREFIX", "askdocs")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py's 5 s socket timeout equals channels_redis's 5 s blocking pop: an idle
            # consumer's read would time out and kill it. Give the pop room.
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                "prefix": f"{REDIS_KEY_PREFIX}:channels",
            },
        }
    }
    CACHES: dict[str, dict[str, Any]] = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": REDIS_KEY_PREFIX,
        },
        "retrieval": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"{REDIS_KEY_PREFIX}:retrieval",
        },
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        # Its own store, so that many different questions never evict rate-limit counters.
        "retrieval": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "retrieval",
            "OPTIONS": {"MAX_ENTRIES": 2000},
        },
    }

# --- Celery ------------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL") or REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = envbool(
    "CELERY_TASK_ALWAYS_EAGER", not (REDIS_URL or env("CELERY_BROKER_URL"))
)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
# A task whose worker died (the whole worker, not one child: that is requeued at once) is
# delivered again after this long. Shorter than a long sync on purpose: a second delivery of a
# sync that is still running finds it alive and does nothing (ingestion.sync).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": envint("ASKDOCS_TASK_VISIBILITY_SECONDS", 1800, minimum=60),
    # A Redis broker's keys (the queue, `unacked`, `_kombu.*`) under the deployment's prefix
    # too: two deployments sharing a Redis database must not share a queue. (Other
    # transports ignore it.)
    "global_keyprefix": f"{REDIS_KEY_PREFIX}:celery:",
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Each kind of background work on a queue of its own, as on the embedded default's lanes
# (assistant/wiring/background.py), so a worker can be given one kind: `worker -Q syncs` takes
# only syncs, `worker -Q handoffs,sms,slack,discord` the deliveries, and a long crawl never holds
# a handoff. A worker started without -Q takes every queue below (the simple setup). The
# schedule's minute check stays on the default queue: it must not pile up behind a long crawl.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "ingestion.tasks.source_sync_task": {"queue": "syncs"},
    "handoff.send": {"queue": "handoffs"},
    "sms.send_reply": {"queue": "sms"},
    "slack.answer": {"queue": "slack"},
    "slack.act": {"queue": "slack"},
    "slack.tell": {"queue": "slack"},
    "discord.answer": {"queue": "discord"},
    "feedback.tasks.check_run_task": {"queue": "checks"},
}
CELERY_TASK_QUEUES = [
    Queue(name)
    for name in (
        CELERY_TASK_DEFAULT_QUEUE,
        "syncs",
        "handoffs",
        "sms",
        "slack",
        "discord",
        "checks",
    )
]
# Beat asks every minute which sources are due (their schedule: hourly, daily, weekly), and
# deletes every night what projects keep no longer (assistant/privacy/retention.py).
CELERY_BEAT_SCHEDULE = {
    "ingestion-sync-due-sources": {"task": "ingestion.tasks.sync_due_sources", "schedule": 60.0},
    "privacy-retention": {"task": "privacy.retention", "schedule": crontab(hour=3, minute=30)},
}

# --- Ingestion limits -----------------------------------------------------------------------------
ASKDOCS_MAX_FILE_BYTES = envint("ASKDOCS_MAX_FILE_BYTES", 20_000_000, minimum=1_000)
ASKDOCS_MAX_ARCHIVE_BYTES = envint("ASKDOCS_MAX_ARCHIVE_BYTES", 100_000_000, minimum=1_000)
