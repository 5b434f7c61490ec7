"""One vector collection per combination of metadata fields: one per (project, source) for the
chunks.

Chroma answers a filtered query (`where={"project_id": 7}`) by pre-filtering and then
searching what is left, which took 150-1,100 ms at 100,000 vectors against 2.5 ms for the
same search unfiltered. Routing each project to collections of its own makes every product
query an unfiltered one, and deleting a project's collections is instant.

Each source gets its own collection too, because an approximate (HNSW) index does not keep a
small cluster findable next to a large one: with the 22 chunks of a help centre and 10,709 of
the Ray docs in one collection, 8 of the help centre's chunks did not find themselves and
recall@20 against exact search was 0.77 for them (0.99 for the Ray chunks); raising ef_search,
M and ef_construction only got it to 0.94. A query of a project searches each of its sources'
collections and merges by similarity: a source is searched on its own, whatever joins it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from assistant.rag.ports import VectorHit, VectorStore

#: A partition: the values of the keys, in order ("7", "3" for project 7, source 3).
Partition = tuple[str, ...]


class PartitionedStore:
    """Implements `VectorStore`. `open_partition(values)` gives the store of one combination
    of values of `keys`; `partitions()` lists the combinations that have a store now."""

    def __init__(
        self,
        *,
        keys: Sequence[str],
        open_partition: Callable[[Partition], VectorStore],
        partitions: Callable[[], Iterable[Partition]],
    ) -> None:
        if not keys:
            raise ValueError("a partitioned store needs at least one key")
        self.keys = tuple(keys)
        self._open = open_partition
        self._partitions = partitions
        self._lock = threading.Lock()
        self._stores: dict[Partition, VectorStore] = {}

    def partition(self, values: Sequence[object]) -> VectorStore:
        name = tuple(str(v) for v in values)
        with self._lock:
            if name not in self._stores:
                self._stores[name] = self._open(name)
            return self._stores[name]

    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None:
        if not len(ids) == len(vectors) == len(metadatas):
            raise ValueError("upsert needs as many vectors and metadatas as ids")
        groups: dict[Partition, list[int]] = {}
        for number, metadata in enumerate(metadatas):
            missing = [key for key in self.keys if key not in metadata]
            if missing:
                raise ValueError(f"every vector needs {missing[0]!r} in its metadata")
            groups.setdefault(tuple(str(metadata[k]) for k in self.keys), []).append(number)
        for values, rows in groups.items():
            self.partition(values).upsert(
                [ids[i] for i in rows], [vectors[i] for i in rows], [metadatas[i] for i in rows]
            )

    def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        for values in self._partitions():
            self.partition(values).delete(ids)

    def query(
        self, vector: Sequence[float], *, k: int, where: Mapping[str, Any] | None = None
    ) -> list[VectorHit]:
        chosen, rest = self._route(where)
        hits = [
            hit
            for values in chosen
            for hit in self.partition(values).query(vector, k=k, where=rest)
        ]
        hits.sort(key=lambda hit: hit.similarity, reverse=True)
        return hits[:k]

    def ids(self, where: Mapping[str, Any] | None = None) -> set[str]:
        chosen, rest = self._route(where)
        return {i for values in chosen for i in self.partition(values).ids(rest)}

    def count(self) -> int:
        return sum(self.partition(values).count() for values in self._partitions())

    def _route(
        self, where: Mapping[str, Any] | None
    ) -> tuple[list[Partition], dict[str, Any] | None]:
        """The partitions a filter can match, and the part of the filter left for each. A key
        pinned to a value (`{"project_id": 7}`) or to a list (`{"source_id": {"$in": [3, 4]}}`)
        picks partitions; anything else is passed on. When every key is pinned, the partitions
        follow from the filter alone, without listing the collections (about 3 ms)."""
        rest = dict(where or {})
        allowed: list[set[str] | None] = []
        for key in self.keys:
            value = rest.get(key)
            if isinstance(value, Mapping) and set(value) == {"$in"}:
                allowed.append({str(v) for v in value["$in"]})
                del rest[key]
            elif value is not None and not isinstance(value, Mapping):
                allowed.append({str(value)})
                del rest[key]
            else:
                allowed.append(None)
        if all(values is not None for values in allowed):
            chosen: list[Partition] = [()]
            for values in allowed:
                chosen = [(*prefix, v) for prefix in chosen for v in sorted(values or ())]
        else:
            chosen = [
                values
                for values in self._partitions()
                if all(a is None or v in a for v, a in zip(values, allowed, strict=True))
            ]
        return chosen, rest or None
