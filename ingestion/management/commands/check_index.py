"""Report (and with --repair fix) chunk rows and vectors that do not match."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.models import Project
from ingestion.index import index_check


class Command(BaseCommand):
    help = "Compare the chunk rows in the database with the vectors in the vector store."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--repair", action="store_true", help="fix what does not match")
        parser.add_argument("--json", action="store_true", help="machine-readable report")
        parser.add_argument("--project", help="only this project (by name)")

    def handle(self, *args: object, **options: object) -> None:
        project_id = None
        if options["project"]:
            project = Project.objects.filter(name=options["project"]).first()
            if project is None:
                raise CommandError(f"No project named {options['project']!r}.")
            project_id = project.pk
        report = index_check(repair=bool(options["repair"]), project_id=project_id)
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "rows": report.rows,
                        "vectors": report.vectors,
                        "vectors_without_rows": report.vectors_without_rows,
                        "rows_without_vectors": report.rows_without_vectors,
                        "repaired": bool(options["repair"]),
                    }
                )
            )
            return
        self.stdout.write(f"{report.rows} chunk rows, {report.vectors} vectors")
        self.stdout.write(f"  vectors without rows: {len(report.vectors_without_rows)}")
        self.stdout.write(f"  rows without vectors: {len(report.rows_without_vectors)}")
        if report.consistent:
            self.stdout.write("Database and vector store agree.")
        elif options["repair"]:
            self.stdout.write(
                "Repaired: orphan vectors deleted; documents missing vectors will be "
                "re-embedded by their next sync."
            )
        else:
            raise CommandError("Database and vector store disagree; run with --repair.")
