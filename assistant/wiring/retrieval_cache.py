"""Django's cache as the RetrievalCache, and the per-project index versions that scope it.

Both live in the `retrieval` cache alias: in-process memory on the embedded default, Redis
when REDIS_URL is set, so a Celery worker's sync invalidates what the web processes cached.

An index version is an integer that only grows. A version that is missing (never set,
evicted, or the cache restarted) is created from the clock, so it never equals a value that
earlier entries were keyed with: losing a version costs misses, never stale answers."""

from __future__ import annotations

import logging
import time

from django.core.cache import caches
from django.db import transaction

logger = logging.getLogger(__name__)

ALIAS = "retrieval"
_EPOCH = "askdocs:retrieval-epoch"


class DjangoRetrievalCache:
    def __init__(self, *, ttl_seconds: int, alias: str = ALIAS) -> None:
        self.ttl_seconds = ttl_seconds
        self.alias = alias

    def get(self, key: str) -> object | None:
        try:
            return caches[self.alias].get(key)
        except Exception:  # noqa: BLE001 - an unreachable cache is a miss, not an outage
            logger.warning("retrieval cache unreachable on get", exc_info=True)
            return None

    def put(self, key: str, value: object) -> None:
        try:
            caches[self.alias].set(key, value, self.ttl_seconds)
        except Exception:  # noqa: BLE001
            logger.warning("retrieval cache unreachable on set", exc_info=True)


def index_scope(*, project_id: int) -> str:
    """The part of a cache key that changes whenever the project's indexed content does
    (and whenever the whole cache is cleared). One round trip."""
    cache = caches[ALIAS]
    keys = [_EPOCH, _version_key(project_id)]
    found = cache.get_many(keys)
    return ".".join(str(found.get(key) or _initialise(key)) for key in keys)


def index_changed(*, project_id: int) -> None:
    """Call after the project's chunks or vectors changed: its cached retrievals are dropped.
    Inside a transaction it is called again on commit, so that no question asked before the
    commit caches the old content under the new version."""
    _bump(_version_key(project_id))
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: _bump(_version_key(project_id)))


def retrieval_cache_clear() -> None:
    """Drop every cached retrieval of every project (without flushing a shared Redis)."""
    _bump(_EPOCH)


def _bump(key: str) -> None:
    try:
        try:
            caches[ALIAS].incr(key)
        except ValueError:  # missing: a fresh value is a change too
            _initialise(key)
    except Exception:  # noqa: BLE001 - a write to the index must not fail for the cache
        logger.error("could not invalidate cached retrievals (%s); entries expire by TTL", key)


def _initialise(key: str) -> int:
    cache = caches[ALIAS]
    cache.add(key, time.time_ns(), timeout=None)
    value = cache.get(key)
    return int(value) if value is not None else time.time_ns()


def _version_key(project_id: int) -> str:
    return f"askdocs:index-version:{project_id}"
