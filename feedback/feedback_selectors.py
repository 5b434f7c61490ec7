"""Reads over readers' votes: the filterable list, its CSV rows, thumbs-up rates."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Count, Q, QuerySet

from assistant.models import Project
from feedback.day_buckets import per_local_day
from feedback.models import Feedback


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
