"""Write a follow-up conversation set from a question set (see evaluation/followups.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from measuring.evaluation.dataset import DatasetError, read_jsonl
from measuring.evaluation.followups import FOLLOWUP, followup_rows


class Command(BaseCommand):
    help = (
        "Turn the answerable questions of a query file into `followup` conversations (a "
        "second question that cannot be understood alone, with the original's gold) and their "
        "`followup_alone` twins, for `evaluate` to report by kind."
    )

    def add_arguments(self, parser):
        parser.add_argument("--queries", required=True, type=Path)
        parser.add_argument("--out", required=True, type=Path)

    def handle(self, *args: object, **options) -> None:
        source: Path = options["queries"]
        out: Path = options["out"]
        if not source.is_file():
            raise CommandError(f"No such file: {source}")
        if not out.parent.is_dir():
            raise CommandError(f"--out: no such folder: {out.parent}")
        try:
            rows = read_jsonl(source)
        except DatasetError as exc:
            raise CommandError(str(exc)) from exc
        if any("id" not in row or "question" not in row for row in rows):
            raise CommandError(f"{source}: every query line needs 'id' and 'question'")
        made = followup_rows(rows)
        out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in made))
        followups = [row for row in made if row["kind"] == FOLLOWUP]
        shapes = Counter(str(row["shape"]) for row in followups)
        answerable = sum(1 for row in rows if row.get("answerable", True))
        self.stdout.write(
            f"{len(followups)} follow-ups from {answerable} answerable questions "
            f"({', '.join(f'{k} {v}' for k, v in sorted(shapes.items()))}) -> {out}"
        )
