"""What the Chroma store is made of, apart from talking to Chroma: collection names, the HNSW
parameters of a new collection, filters in Chroma's form, hits and the mismatch error."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SPACE = "cosine"
# The portable limit: chromadb's Python name check allows 63 characters, its Rust one 512.
_MAX_NAME_LENGTH = 63


class VectorStoreMismatch(ValueError):
    """An existing collection was built for another embedder, dimension or distance."""


@dataclass(slots=True)
class ChromaHit:
    id: str
    similarity: float
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HnswParams:
    """None keeps chromadb's default (ef_search 100, ef_construction 100, max_neighbors 16)."""

    ef_search: int | None = None
    ef_construction: int | None = None
    max_neighbors: int | None = None

    def as_configuration(self) -> dict[str, Any]:
        values = {
            "space": SPACE,
            "ef_search": self.ef_search,
            "ef_construction": self.ef_construction,
            "max_neighbors": self.max_neighbors,
        }
        return {key: value for key, value in values.items() if value is not None}


def collection_name(prefix: str, embedder_id: str, dimension: int) -> str:
    """A Chroma-safe name, e.g. ("chunks", "onnx:bge-small-en-v1.5", 384) ->
    "chunks-onnx-bge-small-en-v1-5-384". Too-long names keep a hash of the full one."""
    raw = f"{prefix}-{embedder_id}-{dimension}"
    name = slug(raw)
    if len(name) > _MAX_NAME_LENGTH:
        digest = hashlib.sha256(raw.encode()).hexdigest()[:10]
        name = f"{name[: _MAX_NAME_LENGTH - 11].rstrip('-')}-{digest}"
    if len(name) < 3:
        raise ValueError(f"Cannot derive a Chroma collection name from {raw!r}")
    return name


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def where_filter(where: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Chroma wants one operator per filter: {"a": 1, "b": 2} becomes an explicit $and."""
    if not where:
        return None
    if len(where) == 1 or any(key.startswith("$") for key in where):
        return dict(where)
    return {"$and": [{key: value} for key, value in where.items()]}
