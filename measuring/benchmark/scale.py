"""Vector search at scale: the real chunk vectors plus generated filler up to `target`, in a
throwaway Chroma collection with the product's HNSW settings, against exact search.

Embedding ~100k real texts would take hours on two cores, so the filler is made from the real
vectors: each is a random convex mixture (Dirichlet weights) of three real vectors plus Gaussian
noise scaled to the real vectors' per-dimension spread, normalised. It lies where real chunks
lie without duplicating any; the report gives the nearest-neighbour similarity of filler and of
real vectors so the resemblance can be judged.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from assistant.wiring.adapters.chroma_clients import close_clients, get_client
from assistant.wiring.adapters.chroma_naming import HnswParams
from assistant.wiring.adapters.chroma_store import ChromaStore
from measuring.benchmark.stats import over_runs

MIX = 3
NOISE = 0.5  # times the real vectors' per-dimension standard deviation
BATCH = 2_000
RECALL_K = 10
PROJECT = {"project_id": 1}
FILLER_METHOD = (
    f"normalised Dirichlet mixtures of {MIX} random real chunk vectors plus Gaussian noise "
    f"({NOISE} x the real vectors' per-dimension standard deviation)"
)


def stored_vectors(store: object) -> np.ndarray:
    """Every vector of a ChromaStore's collection, as a float32 matrix."""
    if not isinstance(store, ChromaStore):
        raise TypeError(f"cannot read vectors out of {store!r}")
    collection = get_client(store.location).get_collection(store.name)
    rows: list[Any] = []
    offset = 0
    while True:
        page = collection.get(include=["embeddings"], limit=5_000, offset=offset)
        embeddings = page["embeddings"]
        if embeddings is None or len(embeddings) == 0:
            break
        rows.extend(embeddings)
        offset += len(embeddings)
    return np.asarray(rows, dtype=np.float32)


def filler(real: np.ndarray, count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(real), size=(count, MIX))
    weights = rng.dirichlet(np.ones(MIX), size=count).astype(np.float32)
    mixed = np.einsum("nm,nmd->nd", weights, real[picks])
    mixed += rng.normal(size=mixed.shape).astype(np.float32) * (NOISE * real.std(axis=0))
    return mixed / np.linalg.norm(mixed, axis=1, keepdims=True)


def nearest_similarity(sample: np.ndarray, pool: np.ndarray) -> float:
    """Median cosine similarity of each sample vector to its nearest neighbour in `pool`."""
    return round(float(np.median((sample @ pool.T).max(axis=1))), 4)


def measure_scale(
    *,
    real: np.ndarray,
    queries: np.ndarray,
    target: int,
    k: int,
    runs: int,
    hnsw: HnswParams,
    embedder_id: str,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    fill = filler(real, max(0, target - len(real)))
    vectors = np.vstack([real, fill]) if len(fill) else real[:target]
    ids = [f"real-{i}" for i in range(min(len(real), len(vectors)))]
    ids += [f"fill-{i}" for i in range(len(vectors) - len(ids))]
    sample = np.random.default_rng(1).choice(len(real), size=min(200, len(real)), replace=False)
    resemblance = {
        "real_to_real_nn_similarity": _real_nn(real, sample) if len(real) > 1 else None,
        "filler_to_real_nn_similarity": (
            nearest_similarity(fill[:200], real) if len(fill) else None
        ),
    }
    exact = _exact_top(vectors, queries, RECALL_K)

    with tempfile.TemporaryDirectory(prefix="askdocs-bench-scale-") as folder:
        store = ChromaStore(folder, embedder_id=embedder_id, dimension=vectors.shape[1],
                            prefix="bench-scale", hnsw=hnsw)  # fmt: skip
        started = time.perf_counter()
        for start in range(0, len(vectors), BATCH):
            end = start + BATCH
            store.upsert(
                ids[start:end], vectors[start:end].tolist(), [PROJECT] * len(ids[start:end])
            )
            if end % (BATCH * 10) == 0 or end >= len(vectors):
                progress(f"{min(end, len(vectors))}/{len(vectors)} vectors stored")
        build_s = time.perf_counter() - started
        # The product keeps one collection per project and searches it without a filter; a
        # single shared collection filtered by project is measured beside it for reference.
        results = {
            name: _queries(store, queries, exact, ids, k, runs, where)
            for name, where in (("per_project", None), ("shared_filtered", PROJECT))
        }
        close_clients()  # let go of the temporary folder's files before it is removed

    return {
        "chunks": len(vectors),
        "real_chunks": min(len(real), len(vectors)),
        "filler_chunks": len(vectors) - min(len(real), len(vectors)),
        "filler_method": FILLER_METHOD,
        **resemblance,
        "queries": len(queries),
        "k": k,
        "build_s": round(build_s, 2),
        "search_ms": results["per_project"]["search_ms"],
        "recall@10": results["per_project"]["recall@10"],
        "shared_filtered_search_ms": results["shared_filtered"]["search_ms"],
        "shared_filtered_recall@10": results["shared_filtered"]["recall@10"],
    }


def _real_nn(real: np.ndarray, sample: np.ndarray) -> float:
    sims = real[sample] @ real.T
    sims[np.arange(len(sample)), sample] = -1.0  # not itself
    return round(float(np.median(sims.max(axis=1))), 4)


def _exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> list[set[int]]:
    if len(vectors) <= k:
        return [set(range(len(vectors))) for _ in queries]
    return [{int(i) for i in np.argpartition(-(vectors @ q), k)[:k]} for q in queries]


def _queries(
    store: ChromaStore,
    queries: np.ndarray,
    exact: Sequence[set[int]],
    ids: Sequence[str],
    k: int,
    runs: int,
    where: dict[str, Any] | None,
) -> dict[str, Any]:
    position = {vector_id: i for i, vector_id in enumerate(ids)}
    store.query(queries[0].tolist(), k=k, where=where)  # loads the index
    per_run: list[list[float]] = []
    recalls: list[float] = []
    for run in range(runs):
        times = []
        for query, truth in zip(queries, exact, strict=True):
            vector = query.tolist()
            started = time.perf_counter()
            hits = store.query(vector, k=k, where=where)
            times.append((time.perf_counter() - started) * 1000)
            if run == 0:
                found = {position[h.id] for h in hits[:RECALL_K]}
                recalls.append(len(found & truth) / len(truth))
        per_run.append(times)
    return {"search_ms": over_runs(per_run), "recall@10": round(float(np.mean(recalls)), 4)}
