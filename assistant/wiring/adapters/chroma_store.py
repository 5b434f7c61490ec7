"""Chroma as the VectorStore: one cosine collection per embedder (and per prefix).

The location string chooses how Chroma is reached (``chroma_clients``): a filesystem path opens
the embedded ``PersistentClient`` (one process only), ``http://host:port`` a ``chroma run``
server (the scale-out path, needed once a web process and a Celery worker both touch the store).

Vectors are always given explicitly and collections are opened with ``embedding_function=None``,
so chromadb's default ONNX MiniLM embedder (which downloads a model on first use) is never built.

HNSW knobs in chromadb 1.5.9 (collection ``configuration["hnsw"]``):

* ``space`` is always ``"cosine"`` here; fixed at creation.
* ``ef_construction`` (default 100) and ``max_neighbors`` (the M parameter, default 16) are
  fixed at creation: a different value for an existing collection is logged and ignored;
  ``reset()`` and re-index to change them.
* ``ef_search`` (default 100) may be changed later: an existing collection is modified to the
  requested value when it is opened. Measured on 1.5.9: the new value is used once the index is
  next loaded, i.e. by a process that had not queried the collection yet (embedded), or after
  the Chroma server restarts (a running server keeps the index it loaded, with the old value).
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.errors import NotFoundError

from assistant.rag.ports import VectorHit
from assistant.wiring.adapters.chroma_clients import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT,
    get_client,
    is_url,
    unavailable,
)
from assistant.wiring.adapters.chroma_naming import (
    SPACE,
    ChromaHit,
    HnswParams,
    VectorStoreMismatch,
    collection_name,
    where_filter,
)

logger = logging.getLogger(__name__)

IDS_PAGE_SIZE = 5_000

T = TypeVar("T")

Metadata = Mapping[str, str | int | float | bool]


# --- the store ----------------------------------------------------------------------------------


class ChromaStore:
    """A VectorStore over one Chroma collection. Nothing connects until the first call."""

    def __init__(
        self,
        location: str | Path,
        *,
        embedder_id: str,
        dimension: int,
        prefix: str = "chunks",
        hnsw: HnswParams | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        if dimension <= 0:
            raise ValueError(f"dimension must be positive, got {dimension}")
        self.location = location
        self.embedder_id = embedder_id
        self.dimension = dimension
        self.name = collection_name(prefix, embedder_id, dimension)
        self.hnsw = hnsw or HnswParams()
        self._connect_timeout = connect_timeout
        self._request_timeout = request_timeout
        self._lock = threading.Lock()
        self._client: ClientAPI | None = None
        self._handle: Collection | None = None
        self._max_batch: int | None = None

    @classmethod
    def for_embedder(
        cls, location: str | Path, embedder: Any, *, prefix: str = "chunks", **options: Any
    ) -> ChromaStore:
        """The store for an `Embedder` (anything with `id` and `dimension`)."""
        return cls(
            location,
            embedder_id=embedder.id,
            dimension=embedder.dimension,
            prefix=prefix,
            **options,
        )

    def __repr__(self) -> str:
        return f"ChromaStore({str(self.location)!r}, name={self.name!r})"

    # VectorStore ------------------------------------------------------------------------------

    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[Metadata],
    ) -> None:
        if not len(ids) == len(vectors) == len(metadatas):
            raise ValueError(
                f"upsert needs as many vectors and metadatas as ids "
                f"({len(ids)} ids, {len(vectors)} vectors, {len(metadatas)} metadatas)"
            )
        for vector_id, vector in zip(ids, vectors, strict=True):
            if len(vector) != self.dimension:
                raise VectorStoreMismatch(
                    f"Vector {vector_id!r} has {len(vector)} dimensions; collection "
                    f"{self.name!r} holds {self.dimension}-d vectors of {self.embedder_id!r}"
                )

        def write(collection: Collection) -> None:
            step = self._batch_size()
            for start in range(0, len(ids), step):
                end = start + step
                embeddings: list[Sequence[float]] = [list(v) for v in vectors[start:end]]
                collection.upsert(
                    ids=list(ids[start:end]),
                    embeddings=embeddings,
                    # Chroma rejects an empty metadata dict but accepts None.
                    metadatas=[dict(m) if m else None for m in metadatas[start:end]],  # type: ignore[misc]
                )

        self._on_collection(write)

    def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return

        def remove(collection: Collection) -> None:
            step = self._batch_size()
            for start in range(0, len(ids), step):
                collection.delete(ids=list(ids[start : start + step]))

        self._on_collection(remove)

    def query(
        self, vector: Sequence[float], *, k: int, where: Mapping[str, Any] | None = None
    ) -> list[VectorHit]:
        if k <= 0:
            return []
        if len(vector) != self.dimension:
            raise VectorStoreMismatch(
                f"Query vector has {len(vector)} dimensions; collection {self.name!r} "
                f"holds {self.dimension}-d vectors of {self.embedder_id!r}"
            )
        query_embeddings: list[Sequence[float]] = [list(vector)]
        result = self._on_collection(
            lambda collection: collection.query(
                query_embeddings=query_embeddings,
                n_results=k,
                where=cast(Any, where_filter(where)),
                include=["metadatas", "distances"],
            )
        )
        ids = result["ids"][0]
        distances = (result["distances"] or [[]])[0]
        metadata_rows = result["metadatas"]
        metadatas = metadata_rows[0] if metadata_rows else [{}] * len(ids)
        hits: list[VectorHit] = [
            ChromaHit(id=hit_id, similarity=1.0 - float(distance), metadata=dict(metadata or {}))
            for hit_id, distance, metadata in zip(ids, distances, metadatas, strict=True)
        ]
        hits.sort(key=lambda hit: hit.similarity, reverse=True)
        return hits

    def ids(self, where: Mapping[str, Any] | None = None) -> set[str]:
        def listed(collection: Collection) -> set[str]:
            found: set[str] = set()
            offset = 0
            while True:
                page = collection.get(
                    where=cast(Any, where_filter(where)),
                    include=[],
                    limit=IDS_PAGE_SIZE,
                    offset=offset,
                )["ids"]
                found.update(page)
                if len(page) < IDS_PAGE_SIZE:
                    return found
                offset += len(page)

        return self._on_collection(listed)

    def count(self) -> int:
        return self._on_collection(lambda collection: collection.count())

    # Maintenance ------------------------------------------------------------------------------

    def reset(self) -> None:
        """Drop the collection (tests, evaluation). The next call creates it empty."""
        with self._errors(), self._lock:
            client = self._get_client()
            try:
                client.delete_collection(self.name)
            except NotFoundError:
                pass
            except ValueError as error:  # older servers say "does not exist" as a ValueError
                if "does not exist" not in str(error):
                    raise
            self._handle = None

    # Internals --------------------------------------------------------------------------------

    def _get_client(self) -> ClientAPI:
        return get_client(
            self.location,
            connect_timeout=self._connect_timeout,
            request_timeout=self._request_timeout,
        )

    def _collection(self) -> Collection:
        client = self._get_client()
        handle = self._handle
        if handle is not None and self._client is client:
            return handle
        with self._lock:
            if self._handle is None or self._client is not client:
                self._handle = self._open(client)
                self._client = client
                self._max_batch = None
            return self._handle

    def _open(self, client: ClientAPI) -> Collection:
        collection = client.get_or_create_collection(
            self.name,
            embedding_function=None,
            configuration=cast(Any, {"hnsw": self.hnsw.as_configuration()}),
            metadata={"embedder_id": self.embedder_id, "dimension": self.dimension},
        )
        self._check(collection)
        self._apply_ef_search(collection)
        return collection

    def _check(self, collection: Collection) -> None:
        metadata = collection.metadata or {}
        recorded_dimension = metadata.get("dimension")
        recorded_embedder = metadata.get("embedder_id")
        space = (collection.configuration_json.get("hnsw") or {}).get("space", SPACE)
        problems = []
        if recorded_dimension != self.dimension:
            problems.append(f"dimension {recorded_dimension} (expected {self.dimension})")
        if recorded_embedder != self.embedder_id:
            problems.append(f"embedder {recorded_embedder!r} (expected {self.embedder_id!r})")
        if space != SPACE:
            problems.append(f"distance {space!r} (expected {SPACE!r})")
        if problems:
            raise VectorStoreMismatch(
                f"Chroma collection {self.name!r} at {self.location} was built with "
                f"{', '.join(problems)}. Re-index into a fresh collection, or reset() this one."
            )

    def _apply_ef_search(self, collection: Collection) -> None:
        stored = collection.configuration_json.get("hnsw") or {}
        for knob in ("ef_construction", "max_neighbors"):
            wanted = getattr(self.hnsw, knob)
            if wanted is not None and stored.get(knob) != wanted:
                logger.warning(
                    "Chroma collection %s keeps %s=%s (fixed at creation); %s=%s ignored. "
                    "Reset and re-index to change it.",
                    self.name,
                    knob,
                    stored.get(knob),
                    knob,
                    wanted,
                )
        wanted_ef = self.hnsw.ef_search
        if wanted_ef is not None and stored.get("ef_search") != wanted_ef:
            with warnings.catch_warnings():
                # "legacy" is how chromadb records "no embedding function", which is what we want.
                warnings.filterwarnings("ignore", "legacy embedding function config")
                collection.modify(configuration={"hnsw": {"ef_search": wanted_ef}})
            if is_url(self.location):
                logger.warning(
                    "Chroma collection %s now has ef_search=%s (was %s); the server uses it "
                    "once restarted.",
                    self.name,
                    wanted_ef,
                    stored.get("ef_search"),
                )

    def _batch_size(self) -> int:
        if self._max_batch is None:
            size = self._get_client().get_max_batch_size()
            self._max_batch = size if size > 0 else 1_000
        return self._max_batch

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn a server gone away into VectorStoreUnavailable; everything else is a bug."""
        try:
            yield
        except httpx.TransportError as error:
            raise unavailable(str(self.location), error) from error

    def _on_collection(self, operation: Callable[[Collection], T]) -> T:
        """Run `operation` on the collection. A handle whose collection has gone (a Chroma
        server restarted on an empty folder, a reset by another process) is dropped and the
        collection opened again, once: it is then created empty, as on first use."""
        with self._errors():
            try:
                return operation(self._collection())
            except NotFoundError:
                logger.warning("Chroma collection %s has gone; opening it again", self.name)
                with self._lock:
                    self._handle = None
                return operation(self._collection())
