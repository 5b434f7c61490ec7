"""Reads of users' memory for the admin: how often facts are injected, and how similar the
compared facts were (the evidence for tuning a project's memory threshold)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from assistant.models import Interaction

BUCKETS = 10  # similarity buckets of 0.1 from 0 to 1


@dataclass(slots=True)
class MemoryMetrics:
    questions: int = 0  # answered questions (memory commands excluded)
    with_memory: int = 0  # ... asked by a user who had facts
    injected: int = 0  # ... that got at least one fact
    #: (low, high, compared, injected) per similarity bucket
    distribution: list[tuple[float, float, int, int]] = field(default_factory=list)

    @property
    def injection_rate(self) -> float | None:
        return self.injected / self.with_memory if self.with_memory else None


def memory_metrics(*, since: datetime, project_id: int | None = None) -> MemoryMetrics:
    rows = Interaction.objects.filter(created_at__gte=since).exclude(generator="memory")
    if project_id is not None:
        rows = rows.filter(project_id=project_id)
    metrics = MemoryMetrics()
    compared = [0] * BUCKETS
    injected = [0] * BUCKETS
    for memory in rows.values_list("memory", flat=True).iterator():
        metrics.questions += 1
        entries = [e for e in memory or [] if "similarity" in e]
        if not entries:
            continue
        metrics.with_memory += 1
        metrics.injected += any(e["injected"] for e in entries)
        for entry in entries:
            bucket = min(BUCKETS - 1, max(0, int(entry["similarity"] * BUCKETS)))
            compared[bucket] += 1
            injected[bucket] += bool(entry["injected"])
    metrics.distribution = [
        (i / BUCKETS, (i + 1) / BUCKETS, compared[i], injected[i]) for i in range(BUCKETS)
    ]
    return metrics
