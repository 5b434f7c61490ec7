"""Greedy clustering of short texts by cosine similarity of their embeddings. Plain Python and
numpy: the caller brings the vectors.

Texts are taken most frequent first; each joins the existing cluster whose centroid it is most
similar to when that similarity reaches the threshold, and otherwise starts a new cluster. So
the most asked variant leads its cluster, and one pass over n texts costs n x clusters dot
products."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

#: bge-small-en-v1.5 puts paraphrases ("How do I reset my password?" / "I forgot my password,
#: how to reset it") at 0.84-0.95 and different questions of one product at 0.35-0.76.
DEFAULT_SIMILARITY = 0.8


@dataclass(slots=True)
class Cluster:
    members: list[str] = field(default_factory=list)  # most frequent first
    weight: int = 0
    total: np.ndarray | None = None  # sum of the members' unit vectors (weighted)

    def centroid(self) -> np.ndarray:
        assert self.total is not None  # noqa: S101 - set when the first member joins
        return self.total / np.linalg.norm(self.total)


def cluster_texts(
    counts: Sequence[tuple[str, int]],
    vectors: Mapping[str, np.ndarray],
    *,
    threshold: float = DEFAULT_SIMILARITY,
) -> list[Cluster]:
    """Clusters of the texts in `counts` ((text, times asked)), biggest first."""
    clusters: list[Cluster] = []
    for text, times in sorted(counts, key=lambda item: (-item[1], item[0])):
        vector = vectors[text]
        best, best_similarity = None, threshold
        for candidate in clusters:
            similarity = float(candidate.centroid() @ vector)
            if similarity >= best_similarity:
                best, best_similarity = candidate, similarity
        if best is None:
            best = Cluster()
            clusters.append(best)
        best.members.append(text)
        best.weight += times
        best.total = vector * times if best.total is None else best.total + vector * times
    clusters.sort(key=lambda c: -c.weight)  # stable: ties keep first-asked order
    return clusters
