"""Reads over the interaction log: relevance metrics and blind spots. Everything aggregates in
the database over the (project, created_at) and (project, topic, created_at) indexes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Avg, Count, F, Max, Q, QuerySet
from django.db.models.functions import Floor, Lower, TruncDate

from assistant.models import Interaction, Project


def interactions_in(
    *, project: Project, since: datetime, topic: str | None = None
) -> QuerySet[Interaction]:
    rows = Interaction.objects.filter(project=project, created_at__gte=since)
    if topic is not None:
        rows = rows.filter(topic=topic)
    return rows


_FOUND = Q(kept_count__gt=0)
_ERROR = ~Q(error="")


@dataclass(frozen=True, slots=True)
class DayMetrics:
    day: date
    questions: int
    found: int  # at least one chunk at or above the threshold
    refused: int
    errors: int
    avg_ms: float | None
    max_ms: float | None

    @property
    def found_share(self) -> float:
        return self.found / self.questions if self.questions else 0.0

    @property
    def refusal_rate(self) -> float:
        return self.refused / self.questions if self.questions else 0.0


def relevance_by_day(
    *, project: Project, since: datetime, topic: str | None = None
) -> list[DayMetrics]:
    """Per day in the active time zone, oldest first."""
    rows = (
        interactions_in(project=project, since=since, topic=topic)
        .order_by()
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(
            questions=Count("id"),
            found=Count("id", filter=_FOUND),
            refused=Count("id", filter=Q(refused=True)),
            errors=Count("id", filter=_ERROR),
            avg_ms=Avg("total_ms", filter=~_ERROR),
            max_ms=Max("total_ms", filter=~_ERROR),
        )
        .order_by("day")
    )
    return [DayMetrics(**row) for row in rows]


@dataclass(frozen=True, slots=True)
class TopicMetrics:
    topic: str
    questions: int
    found: int
    refused: int
    avg_best: float | None

    @property
    def found_share(self) -> float:
        return self.found / self.questions if self.questions else 0.0

    @property
    def refusal_rate(self) -> float:
        return self.refused / self.questions if self.questions else 0.0


def relevance_by_topic(*, project: Project, since: datetime) -> list[TopicMetrics]:
    """Per topic, most asked first."""
    rows = (
        interactions_in(project=project, since=since)
        .order_by()
        .values("topic")
        .annotate(
            questions=Count("id"),
            found=Count("id", filter=_FOUND),
            refused=Count("id", filter=Q(refused=True)),
            avg_best=Avg("best_relevance"),
        )
        .order_by("-questions", "topic")
    )
    return [TopicMetrics(**row) for row in rows]


def best_relevance_histogram(
    *, project: Project, since: datetime, topic: str | None = None, buckets: int = 10
) -> tuple[list[int], int]:
    """Counts of the best relevance score per question in `buckets` equal bins over [0, 1]
    (1.0 falls in the last), and the number of questions without any scored candidate."""
    counts = [0] * buckets
    rows = (
        interactions_in(project=project, since=since, topic=topic)
        .filter(best_relevance__isnull=False)
        .order_by()
        .annotate(bin=Floor(F("best_relevance") * buckets))
        .values("bin")
        .annotate(n=Count("id"))
    )
    for row in rows:
        index = min(max(int(row["bin"]), 0), buckets - 1)
        counts[index] += row["n"]
    unscored = (
        interactions_in(project=project, since=since, topic=topic)
        .filter(best_relevance__isnull=True)
        .count()
    )
    return counts, unscored


@dataclass(frozen=True, slots=True)
class BlindSpot:
    topic: str
    question: str
    times: int
    best: float | None
    last_asked: datetime


def blind_spots(
    *, project: Project, since: datetime, below: float, limit: int = 200
) -> dict[str, list[BlindSpot]]:
    """Questions that were refused or whose best chunk scored under `below`, the same
    question (ignoring case) counted together, grouped by topic; the most frequent first."""
    rows = (
        interactions_in(project=project, since=since)
        .filter(Q(refused=True) | Q(best_relevance__lt=below) | Q(best_relevance__isnull=True))
        .filter(error="")
        .order_by()
        .annotate(normalised=Lower("question"))
        .values("topic", "normalised")
        .annotate(
            times=Count("id"),
            best=Max("best_relevance"),
            last_asked=Max("created_at"),
            question=Max("question"),
        )
        .order_by("-times", "-last_asked")[:limit]
    )
    grouped: dict[str, list[BlindSpot]] = {}
    for row in rows:
        grouped.setdefault(row["topic"], []).append(
            BlindSpot(
                topic=row["topic"],
                question=row["question"],
                times=row["times"],
                best=row["best"],
                last_asked=row["last_asked"],
            )  # fmt: skip
        )
    return dict(sorted(grouped.items(), key=lambda item: -sum(s.times for s in item[1])))
