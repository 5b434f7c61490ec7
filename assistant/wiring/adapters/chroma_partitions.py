"""The chunk store on Chroma: one collection per project and source (`partitioned`), and the
one-time split of collections of the earlier per-project layout."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chromadb.errors import NotFoundError

from assistant.rag.ports import VectorStore
from assistant.wiring.adapters.chroma_clients import get_client, unavailable
from assistant.wiring.adapters.chroma_naming import slug
from assistant.wiring.adapters.chroma_store import IDS_PAGE_SIZE, ChromaStore
from assistant.wiring.adapters.partitioned_store import PartitionedStore

logger = logging.getLogger(__name__)


def partitioned(
    location: str | Path,
    *,
    keys: Sequence[str],
    embedder_id: str,
    dimension: int,
    prefix: str = "chunks",
    **options: Any,
) -> PartitionedStore:
    """A `PartitionedStore` of Chroma collections named like
    "chunks-p7-s3-onnx-bge-small-en-v1-5-384" (each key by its first letter, so that long ids
    stay within the 63 characters the Python client allows), one per combination of values of
    `keys`. Collections of the earlier layout, one per value of the first key
    ("chunks-project-id-7-..."), are split into the new ones when the store is built (vectors
    and metadata move as they are: nothing is embedded again)."""
    letters = [key[0] for key in keys]
    if len(set(letters)) != len(letters):
        raise ValueError(f"partition keys need different first letters: {keys}")
    head, tail = re.escape(slug(prefix)), re.escape("-" + slug(f"{embedder_id}-{dimension}"))
    pattern = re.compile(f"^{head}-" + "-".join(f"{c}([0-9a-z]+)" for c in letters) + f"{tail}$")
    legacy = re.compile(f"^{head}-{slug(keys[0])}-[0-9a-z]+{tail}$") if len(keys) > 1 else None

    def name_prefix(values: Sequence[str]) -> str:
        return "-".join([prefix, *(f"{c}{v}" for c, v in zip(letters, values, strict=True))])

    def open_partition(values: Sequence[str]) -> VectorStore:
        return ChromaStore(location, embedder_id=embedder_id, dimension=dimension,
                           prefix=name_prefix(values), **options)  # fmt: skip

    def names() -> list[str]:
        client = get_client(location)
        try:
            return [c.name if hasattr(c, "name") else str(c) for c in client.list_collections()]
        except Exception as error:  # noqa: BLE001 - reported like every other store failure
            raise unavailable(str(location), error) from error

    def partitions() -> list[tuple[str, ...]]:
        return sorted(tuple(m.groups()) for name in names() if (m := pattern.match(name)))

    store = PartitionedStore(keys=keys, open_partition=open_partition, partitions=partitions)
    if legacy is not None:
        for name in names():
            if legacy.match(name):
                _split_legacy(location, name, store, **options)
    return store


def _split_legacy(location: str | Path, name: str, store: PartitionedStore, **options: Any) -> None:
    """Move the vectors of a collection of the earlier layout into the store's partitions,
    a page at a time, then drop it. Safe to run twice at once (upserts are idempotent; a
    collection another process dropped first is done)."""
    client = get_client(location)
    try:
        old = client.get_collection(name, embedding_function=None)
        moved = 0
        while True:
            page = old.get(limit=IDS_PAGE_SIZE, offset=0, include=["embeddings", "metadatas"])
            if not page["ids"]:
                break
            store.upsert(page["ids"], page["embeddings"], page["metadatas"])  # type: ignore[arg-type]
            old.delete(ids=page["ids"])
            moved += len(page["ids"])
        client.delete_collection(name)
    except NotFoundError:
        return
    logger.info("Moved %s vectors of %s into one collection per source.", moved, name)
