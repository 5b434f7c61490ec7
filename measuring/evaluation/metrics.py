"""Ranking metrics over section ids (chunks are mapped back to the section they came from)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

#: The metrics that are a yes or a no for each question (a question missing one is not counted
#: in it): their shares get an interval, and `--baseline` compares them question by question.
SHARES = ("hit@1", "hit@5", "page_hit@5", "answered", "refused", "key_facts_hit")


def dedupe(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def hit_at(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int) -> float:
    return float(any(r in relevant for r in ranked[:k]))


def recall_at(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def mrr_at(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int) -> float:
    for rank, item in enumerate(ranked[:k], start=1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], relevant: set[str] | frozenset[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(rank + 1) for rank, r in enumerate(ranked[:k], 1) if r in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


def distribution(values: Sequence[float]) -> dict[str, float]:
    """min, quartiles, max: enough to see where a threshold would cut."""
    if not values:
        return {}
    ordered = sorted(values)
    if len(ordered) == 1:
        q1 = q2 = q3 = ordered[0]
    else:
        q1, q2, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return {
        "min": round(ordered[0], 4),
        "p25": round(q1, 4),
        "median": round(q2, 4),
        "p75": round(q3, 4),
        "max": round(ordered[-1], 4),
    }


def median_p95(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"median": round(statistics.median(ordered), 2), "p95": round(p95, 2)}


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (95% for z = 1.96). With 168 questions a
    share near 0.7 is known to about ±0.07: differences smaller than that need a paired test."""
    if n <= 0:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def sign_test(won: int, lost: int) -> float:
    """Exact two-sided sign test: how likely a split at least this uneven is when a change
    makes no difference (ties are dropped). 1.0 when nothing changed."""
    n = won + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(won, lost) + 1)) / 2**n
    return round(min(1.0, 2 * tail), 4)
