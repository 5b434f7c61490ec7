"""Per-day figures in the viewer's time zone, aggregated by the database.

Django's TruncDate with a time zone runs a Python function per row on SQLite, which costs
about a second at 100,000 rows. Instead the database groups rows by UTC hour (shifted by the
zone's odd minutes, so Kolkata's +5:30 hours line up with local hours), natively on SQLite and
PostgreSQL, and the at most 24 x days hour groups are folded into local days here."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import NotSupportedError
from django.db.models import Aggregate, CharField, Func, QuerySet
from django.utils import timezone

_BUCKET_FORMAT = "%Y-%m-%d %H"


class UtcHour(Func):
    """'YYYY-MM-DD HH' of a timestamp in UTC plus `shift_minutes`."""

    output_field = CharField()

    def __init__(self, expression: Any, *, shift_minutes: int) -> None:
        super().__init__(expression)
        self.shift_minutes = shift_minutes

    # Django's expression API, as it is called; the stubs type its parameters more narrowly.
    def as_sqlite(  # type: ignore[override]
        self, compiler: Any, connection: Any, **extra: Any
    ) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        # SQLite stores timestamps as UTC text ('YYYY-MM-DD HH:MM:SS.ffffff'): the hour is a
        # prefix; with a shift, strftime does the arithmetic (both without a Python callback).
        if not self.shift_minutes:
            return f"substr({sql}, 1, 13)", params
        return f"strftime(%s, {sql}, %s)", [
            _BUCKET_FORMAT, *params, f"{self.shift_minutes:+d} minutes",
        ]  # fmt: skip

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return (
            f"to_char(date_trunc('hour', ({sql} AT TIME ZONE 'UTC') "
            "+ %s * interval '1 minute'), 'YYYY-MM-DD HH24')",
            [*params, self.shift_minutes],
        )

    def as_sql(  # type: ignore[override]
        self, compiler: Any, connection: Any, **extra: Any
    ) -> tuple[str, list[Any]]:
        raise NotSupportedError("Per-day metrics support SQLite and PostgreSQL.")


def _shift_minutes(zone: Any) -> int:
    offset = timezone.now().astimezone(zone).utcoffset() or timedelta()
    return int(offset.total_seconds() // 60) % 60


def per_local_day(
    rows: QuerySet[Any],
    *,
    field: str,
    sums: Mapping[str, Aggregate],
    maxima: Mapping[str, Aggregate] | None = None,
) -> list[tuple[date, dict[str, Any]]]:
    """(day, figures) oldest first: `sums` (counts, sums) are added up over a day's hours,
    `maxima` take the largest; days in the active time zone."""
    maxima = maxima or {}
    zone = timezone.get_current_timezone()
    shift = _shift_minutes(zone)
    grouped = (
        rows.order_by()
        .annotate(bucket=UtcHour(field, shift_minutes=shift))
        .values("bucket")
        .annotate(**sums, **maxima)
    )
    days: dict[date, dict[str, Any]] = {}
    for row in grouped:
        start = datetime.strptime(row["bucket"], _BUCKET_FORMAT).replace(tzinfo=UTC)
        day = (start - timedelta(minutes=shift)).astimezone(zone).date()
        figures = days.setdefault(day, {**dict.fromkeys(sums, 0), **dict.fromkeys(maxima)})
        for name in sums:
            figures[name] += row[name] or 0
        for name in maxima:
            value = row[name]
            if value is not None and (figures[name] is None or value > figures[name]):
                figures[name] = value
    return sorted(days.items())
