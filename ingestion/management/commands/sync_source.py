"""Sync one source (or every source of a project) now, in this process, with a progress bar."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingestion.management.progress import ProgressBar, run_summary
from ingestion.models import Source, SyncRun
from ingestion.sync import SyncAlreadyRunning, source_sync


class Command(BaseCommand):
    help = "Sync a source now: SOURCE is its id or its name (with --project when names repeat)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", nargs="?", help="source id or name")
        parser.add_argument("--project", help="project name")
        parser.add_argument("--all", action="store_true", help="every source (of --project)")
        parser.add_argument(
            "--confirm-removals", action="store_true",
            help="remove the documents the source no longer lists even when that is all or "
            "most of them (a sync refuses that otherwise: the source may just be unreadable)",
        )  # fmt: skip

    def handle(self, *args: object, **options: object) -> None:
        sources = self._sources(options)
        failed = 0
        for source in sources:
            self.stdout.write(f"Syncing {source.project} / {source.name} ({source.kind})")
            bar = ProgressBar(self.stdout)
            started = time.monotonic()
            try:
                run = source_sync(
                    source=source, trigger="command", on_progress=bar,
                    confirm_removals=bool(options["confirm_removals"]),
                )  # fmt: skip
            except SyncAlreadyRunning as error:
                bar.close()
                self.stderr.write(str(error))
                failed += 1
                continue
            bar.close()
            self.stdout.write(run_summary(run, time.monotonic() - started))
            failed += run.status == SyncRun.Status.FAILED
        if failed:
            raise CommandError(f"{failed} of {len(sources)} source(s) failed to sync.")

    def _sources(self, options: dict[str, object]) -> list[Source]:
        query = Source.objects.select_related("project")
        if options["project"]:
            query = query.filter(project__name=options["project"])
        if options["all"]:
            found = list(query)
        elif options["source"]:
            key = str(options["source"])
            found = list(query.filter(pk=int(key)) if key.isdigit() else query.filter(name=key))
            if len(found) > 1:
                raise CommandError(f"Several sources are named {key!r}; add --project.")
        else:
            raise CommandError("Name a source (id or name), or pass --all.")
        if not found:
            raise CommandError("No such source.")
        return found
