"""One Chroma client per path or URL per process, built lazily and forgotten in a forked child.

A filesystem path gives ``chromadb.PersistentClient`` (the embedded default; one process only);
``http://host:port`` gives ``chromadb.HttpClient`` against ``chroma run``, with the timeouts that
chromadb's own HTTP session lacks.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from urllib.parse import urlsplit

import chromadb
import httpx
from chromadb.api import ClientAPI
from chromadb.config import Settings as ChromaSettings

logger = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT = 2.0
DEFAULT_REQUEST_TIMEOUT = 60.0


class VectorStoreUnavailable(RuntimeError):
    """The vector store cannot be reached now; the message names where it was looked for."""


def is_url(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(("http://", "https://"))


#: How long the System behind a client replaced by `reopen_embedded` stays open: a search or a
#: write batch that took its collection handle just before the swap finishes on it, then its
#: files, SQLite connections and threads are released (left open, every index change seen by
#: a long-running server kept a few file descriptors more).
RETIRED_CLIENT_GRACE_S = 30.0

_cache_lock = threading.Lock()
_clients: dict[str, ClientAPI] = {}
_client_locks: dict[str, threading.Lock] = {}


def _forget_clients_after_fork() -> None:
    # A forked child (Celery prefork) must not reuse the parent's client or a lock held
    # at fork time; it builds its own on first use.
    global _cache_lock, _clients, _client_locks
    _cache_lock = threading.Lock()
    _clients = {}
    _client_locks = {}


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_clients_after_fork)


def _cache_key(location: str | Path) -> str:
    if is_url(location):
        return str(location).rstrip("/")
    return str(Path(location).expanduser().resolve())


def get_client(
    location: str | Path,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> ClientAPI:
    """The process-wide client for a path or URL, built on first use."""
    key = _cache_key(location)
    client = _clients.get(key)
    if client is not None:
        return client
    with _cache_lock:
        key_lock = _client_locks.setdefault(key, threading.Lock())
    with key_lock:  # per key, so a slow server does not block opening a local path
        client = _clients.get(key)
        if client is None:
            if is_url(key):
                client = _http_client(key, connect_timeout, request_timeout)
            else:
                client = _persistent_client(key)
            _clients[key] = client
        return client


def reopen_embedded(location: str | Path) -> None:
    """Give this process a fresh client of an embedded store: a `PersistentClient` reads a
    collection's index once and does not see what another process (a CLI command, a worker)
    wrote since; a new one does. A Chroma server needs none of this (no-op for a URL)."""
    key = _cache_key(location)
    if is_url(key):
        return
    with _cache_lock:
        key_lock = _client_locks.setdefault(key, threading.Lock())
    with key_lock:
        old = _clients.pop(key, None)
        if old is not None:
            # chromadb keeps one System per path for all its clients (a private registry of
            # the pinned version); dropping it makes the next client load from disk. Clients
            # still held elsewhere look their System up by path, so they move to the new one.
            from chromadb.api.shared_system_client import SharedSystemClient

            identifier = getattr(old, "_identifier", None)
            system = SharedSystemClient._identifier_to_system.pop(identifier, None)  # type: ignore[arg-type]
            SharedSystemClient._identifier_to_refcount.pop(identifier, None)  # type: ignore[arg-type]
            if system is not None:
                _stop_later(system)
        _clients[key] = _persistent_client(key)


def _stop_later(system: object) -> None:
    def stop() -> None:
        try:
            system.stop()  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a retired store failing to close must not matter
            logger.warning("could not close a replaced Chroma client", exc_info=True)

    timer = threading.Timer(RETIRED_CLIENT_GRACE_S, stop)
    timer.daemon = True
    timer.start()


def close_clients() -> None:
    """Close every cached client (tests, evaluation runs). Stores reopen on next use."""
    with _cache_lock:
        clients = list(_clients.values())
        _clients.clear()
    for client in clients:
        close = getattr(client, "close", None)
        if callable(close):
            close()


def _settings() -> ChromaSettings:
    return ChromaSettings(anonymized_telemetry=False, allow_reset=False)


def _persistent_client(path: str) -> ClientAPI:
    Path(path).mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=path, settings=_settings())


def _http_client(url: str, connect_timeout: float, request_timeout: float) -> ClientAPI:
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"Not a Chroma server URL: {url!r}")
    ssl = parts.scheme == "https"
    port = parts.port or (443 if ssl else 80)
    # chromadb's own HTTP session has no timeout at all, so an unreachable or black-holed
    # server would hang the first request; ask the heartbeat first, briefly.
    heartbeat = f"{parts.scheme}://{parts.netloc}/api/v2/heartbeat"
    try:
        response = httpx.get(heartbeat, timeout=connect_timeout)
    except httpx.HTTPError as error:
        raise unavailable(url, error) from error
    if response.status_code != httpx.codes.OK:
        raise VectorStoreUnavailable(
            f"The Chroma server at {url} answered HTTP {response.status_code} to its "
            "heartbeat; is this URL a Chroma server (`chroma run`)?"
        )
    try:
        client = chromadb.HttpClient(host=parts.hostname, port=port, ssl=ssl, settings=_settings())
    except (httpx.HTTPError, ValueError) as error:
        raise unavailable(url, error) from error
    # Bound every later request too. chromadb exposes no setting for this, so set it on its
    # httpx session when that is where we expect it to be.
    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(request_timeout, connect=connect_timeout)
    return client


def unavailable(url: str, error: Exception) -> VectorStoreUnavailable:
    return VectorStoreUnavailable(
        f"Cannot reach the Chroma server at {url} ({type(error).__name__}: {error}). "
        "Is `chroma run` running there, and is the URL right?"
    )
