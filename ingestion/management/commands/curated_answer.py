"""Curated answers from scripts: `curated_answer add|list|retire` (the console does the same)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.models import Project
from ingestion.curated import CuratedAnswerInvalid, curated_answer_retire, curated_answer_save
from ingestion.models import CuratedAnswer


class Command(BaseCommand):
    help = "Add, list or retire a project's curated answers (served at once, no sync needed)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser("add", help="Write a curated answer")
        add.add_argument("--project", required=True, help="Project name")
        add.add_argument(
            "--question", action="append", required=True,
            help="A phrasing of the question; repeat for more",
        )  # fmt: skip
        add.add_argument("--answer", required=True, help="The answer (Markdown)")
        add.add_argument("--url", default="", help="A link shown with it (http/https)")
        add.add_argument("--topic", default="")
        listing = sub.add_parser("list", help="List curated answers")
        listing.add_argument("--project", required=True, help="Project name")
        listing.add_argument("--json", action="store_true", help="Print JSON")
        retire = sub.add_parser("retire", help="Retire a curated answer (leaves the index now)")
        retire.add_argument("--project", required=True, help="Project name")
        retire.add_argument("id", type=int)

    def handle(self, *args: object, **options: Any) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"No project named {options['project']!r}.")
        action = options["action"]
        if action == "add":
            try:
                curated = curated_answer_save(
                    project=project,
                    phrasings=list(options["question"]),
                    answer=str(options["answer"]),
                    url=str(options["url"]),
                    topic=str(options["topic"]),
                )
            except CuratedAnswerInvalid as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(self.style.SUCCESS(f"Curated answer {curated.pk} is served now."))
            return
        answers = CuratedAnswer.objects.filter(source__project=project)
        if action == "list":
            rows = [
                {
                    "id": c.pk,
                    "active": c.active,
                    "phrasings": c.phrasings,
                    "answer": c.answer,
                    "url": c.url,
                    "answered": c.answered_count,
                }  # fmt: skip
                for c in answers
            ]
            if options["json"]:
                self.stdout.write(json.dumps(rows, indent=2))
                return
            for row in rows:
                state = "active " if row["active"] else "retired"
                self.stdout.write(
                    f"{row['id']:>5}  {state}  answered {row['answered']:>4}  {row['phrasings'][0]}"
                )
            return
        found = answers.filter(pk=options["id"]).first()
        if found is None:
            raise CommandError(f"No curated answer {options['id']} in project {project.name!r}.")
        curated_answer_retire(curated=found)
        self.stdout.write(self.style.SUCCESS(f"Curated answer {found.pk} retired."))
