"""Reads over the interaction log (relevance metrics; blind spots are in blind_spots.py) and
over readers' votes (the filterable list, its CSV rows, thumbs-up rates). Everything
aggregates in the database over the (project, created_at) and (project, topic, created_at)
indexes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Avg, Count, F, Max, Q, QuerySet, Sum
from django.db.models.functions import Floor

from assistant.models import Interaction, Project
from feedback.day_buckets import per_local_day
from feedback.models import Feedback


def interactions_in(
    *, project: Project, since: datetime, topic: str | None = None
) -> QuerySet[Interaction]:
    rows = Interaction.objects.filter(project=project, created_at__gte=since)
    if topic is not None:
        rows = rows.filter(topic=topic)
    return rows


_FOUND = Q(kept_count__gt=0)
_ERROR = ~Q(error="")


class _Shares:
    """The shares every metrics row shows: questions with a chunk found, and refused."""

    questions: int
    found: int
    refused: int

    @property
    def found_share(self) -> float:
        return self.found / self.questions if self.questions else 0.0

    @property
    def refusal_rate(self) -> float:
        return self.refused / self.questions if self.questions else 0.0


@dataclass(frozen=True, slots=True)
class DayMetrics(_Shares):
    day: date
    questions: int
    found: int  # at least one chunk at or above the threshold
    refused: int
    errors: int
    avg_ms: float | None
    max_ms: float | None


def relevance_by_day(
    *, project: Project, since: datetime, topic: str | None = None
) -> list[DayMetrics]:
    """Per day in the active time zone, oldest first."""
    ok = ~_ERROR
    days = per_local_day(
        interactions_in(project=project, since=since, topic=topic),
        field="created_at",
        sums={
            "questions": Count("id"),
            "found": Count("id", filter=_FOUND),
            "refused": Count("id", filter=Q(refused=True)),
            "errors": Count("id", filter=_ERROR),
            "ms_total": Sum("total_ms", filter=ok),
            "answered": Count("id", filter=ok),
        },
        maxima={"max_ms": Max("total_ms", filter=ok)},
    )
    return [
        DayMetrics(
            day=day,
            questions=f["questions"],
            found=f["found"],
            refused=f["refused"],
            errors=f["errors"],
            avg_ms=f["ms_total"] / f["answered"] if f["answered"] else None,
            max_ms=f["max_ms"],
        )
        for day, f in days
    ]


@dataclass(frozen=True, slots=True)
class TopicMetrics(_Shares):
    topic: str
    questions: int
    found: int
    refused: int
    avg_best: float | None


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
    counts, unscored = [0] * buckets, 0
    rows = (
        interactions_in(project=project, since=since, topic=topic)
        .order_by()
        .annotate(bin=Floor(F("best_relevance") * buckets))  # NULL: no scored candidate
        .values("bin")
        .annotate(n=Count("id"))
    )
    for row in rows:
        if row["bin"] is None:
            unscored += row["n"]
        else:
            counts[min(max(int(row["bin"]), 0), buckets - 1)] += row["n"]
    return counts, unscored


# Readers' votes
def feedback_list(
    *,
    project: Project,
    vote: int | None = None,
    topic: str = "",
    channel: str = "",
    since: date | None = None,
    until: date | None = None,
) -> QuerySet[Feedback]:
    """Newest first; days are taken in the active time zone."""
    rows = Feedback.objects.filter(interaction__project=project).select_related("interaction")
    if vote is not None:
        rows = rows.filter(vote=vote)
    if topic:
        rows = rows.filter(interaction__topic=topic)
    if channel:
        rows = rows.filter(interaction__channel=channel)
    if since is not None:
        rows = rows.filter(updated_at__date__gte=since)
    if until is not None:
        rows = rows.filter(updated_at__date__lte=until)
    return rows.order_by("-updated_at", "-id")


CSV_HEADER = [
    "date", "vote", "comment", "topic", "channel", "question", "answer", "sources", "answer_id",
]  # fmt: skip


def _cell(value: str) -> str:
    # A spreadsheet would run a cell that starts like a formula: keep it text.
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def feedback_csv_rows(rows: QuerySet[Feedback]) -> Iterator[list[str]]:
    yield CSV_HEADER
    for row in rows.iterator(chunk_size=500):
        asked = row.interaction
        yield [
            _cell(value)
            for value in (
                row.updated_at.isoformat(),
                "up" if row.vote == Feedback.Vote.UP else "down",
                row.comment,
                asked.topic,
                asked.channel,
                asked.question,
                asked.answer,
                " ".join(s.get("url") or s.get("title", "") for s in asked.sources),
                str(asked.answer_id),
            )
        ]


@dataclass(frozen=True, slots=True)
class Thumbs:
    key: str
    up: int
    down: int

    @property
    def total(self) -> int:
        return self.up + self.down

    @property
    def up_rate(self) -> float:
        return self.up / self.total if self.total else 0.0


_UP = Q(vote=Feedback.Vote.UP)
_DOWN = Q(vote=Feedback.Vote.DOWN)


def thumbs_by_day(*, project: Project, since: datetime) -> list[Thumbs]:
    days = per_local_day(
        Feedback.objects.filter(interaction__project=project, updated_at__gte=since),
        field="updated_at",
        sums={"up": Count("id", filter=_UP), "down": Count("id", filter=_DOWN)},
    )
    return [Thumbs(key=day.strftime("%b %d"), up=f["up"], down=f["down"]) for day, f in days]


def thumbs_by_topic(*, project: Project, since: datetime) -> list[Thumbs]:
    rows = (
        Feedback.objects.filter(interaction__project=project, updated_at__gte=since)
        .order_by()
        .values("interaction__topic")
        .annotate(up=Count("id", filter=_UP), down=Count("id", filter=_DOWN))
        .order_by("-down", "-up")
    )
    return [Thumbs(key=row["interaction__topic"], up=row["up"], down=row["down"]) for row in rows]


def disliked_answers(*, project: Project, since: datetime, limit: int = 50) -> list[Feedback]:
    """Thumbs-down votes on answers that were given (not refused, not failed), newest first:
    the documents said something, and the reader found it wrong or not enough."""
    return list(
        Feedback.objects.filter(
            interaction__project=project,
            updated_at__gte=since,
            vote=Feedback.Vote.DOWN,
            interaction__refused=False,
            interaction__error="",
        )
        .exclude(interaction__generator="memory")
        .select_related("interaction")
        .order_by("-updated_at", "-id")[:limit]
    )
