"""Does every source of a project stay findable, whatever its size next to the others? For a
sample of each source's chunks, the product's own search (its store, the project's scope) is
asked with the chunk's stored vector: the chunk must come first, and the top `k` must hold what
exact search over all the project's vectors holds. Similarities are compared, not ids, so that
identical chunks (a repeated API entry) count as found."""

from __future__ import annotations

from typing import Any

import numpy as np

from assistant.wiring import runtime
from assistant.wiring.adapters.chroma_clients import get_client
from ingestion.models import Source
from ingestion.selectors import search_scope

#: Similarities are float32 cosines computed twice (by Chroma and here): equal within this.
SAME = 1e-3


def source_recall(
    *, project_id: int, sample: int = 150, k: int = 20, seed: int = 3
) -> dict[str, Any]:
    store = runtime.chunk_store()
    where = search_scope(project_id=project_id).where
    sources = list(Source.objects.filter(project_id=project_id).order_by("pk"))
    vectors = {s.name: _vectors(store, project_id, s.pk) for s in sources}
    everything = np.vstack([m for m in vectors.values() if len(m)])
    report: dict[str, Any] = {}
    for name, matrix in vectors.items():
        if not len(matrix):
            continue
        picks = np.random.default_rng(seed).permutation(len(matrix))[:sample]
        self_first, recall = 0, []
        for i in picks:
            hits = store.query(matrix[i].tolist(), k=k, where=where)
            kth = np.sort(everything @ matrix[i])[-k] - SAME
            self_first += bool(hits) and hits[0].similarity >= 1 - SAME
            recall.append(sum(hit.similarity >= kth for hit in hits) / k)
        report[name] = {
            "chunks": len(matrix),
            "sampled": len(picks),
            "self_first": round(self_first / len(picks), 4),
            f"recall@{k}": round(float(np.mean(recall)), 4),
        }
    return report


def _vectors(store: Any, project_id: int, source_id: int) -> np.ndarray:
    partition = store.partition((project_id, source_id))
    found = (
        get_client(partition.location).get_collection(partition.name).get(include=["embeddings"])
    )
    matrix = np.asarray(found["embeddings"], dtype=np.float32)
    if not len(matrix):
        return matrix
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
