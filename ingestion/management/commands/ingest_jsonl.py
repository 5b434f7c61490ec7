"""Load a JSON Lines corpus (id, title, text, url) into a project as a files source, and keep
it in sync: run it again after editing the file and only what changed is re-embedded."""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.models import Project
from ingestion.management.progress import ProgressBar, run_summary
from ingestion.models import Source, SyncRun
from ingestion.sync import SyncAlreadyRunning, source_sync


class Command(BaseCommand):
    help = "Index a JSONL corpus (one document a line: id, title, text, url) into a project."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        parser.add_argument("--project", required=True, help="project name (created if missing)")
        parser.add_argument("--source", help="source name (default: the file name)")

    def handle(self, *args: object, **options: str) -> None:
        path = Path(options["path"]).resolve()
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        project, _ = Project.objects.get_or_create(name=options["project"])
        source, _ = Source.objects.get_or_create(
            project=project,
            name=options["source"] or path.name,
            defaults={"kind": Source.Kind.FILES, "config": {"jsonl": str(path)}},
        )
        if source.config.get("jsonl") != str(path):
            raise CommandError(f"Source {source.name!r} of {project} reads another file.")
        bar = ProgressBar(self.stdout)
        started = time.monotonic()
        try:
            run = source_sync(source=source, trigger="command", on_progress=bar)
        except SyncAlreadyRunning as error:
            raise CommandError(str(error)) from error
        bar.close()
        self.stdout.write(run_summary(run, time.monotonic() - started))
        if run.status == SyncRun.Status.FAILED:
            raise CommandError(run.message)
