"""Summaries that survive a noisy machine: median and p95 per run, then the median of those
over runs."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def median_p95(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"median": statistics.median(ordered), "p95": p95}


def over_runs(runs: Sequence[Sequence[float]]) -> dict[str, float] | None:
    """{median, p95, n}: each run's median and p95, then the median of each over the runs."""
    runs = [r for r in runs if r]
    if not runs:
        return None
    per_run = [median_p95(r) for r in runs]
    return {
        "median": round(statistics.median(p["median"] for p in per_run), 3),
        "p95": round(statistics.median(p["p95"] for p in per_run), 3),
        "n": sum(len(r) for r in runs),
    }


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 4)
