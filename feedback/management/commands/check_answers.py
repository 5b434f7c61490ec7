"""Run a project's checks (conversations kept as checks) for CI: exit status 1 when any fails."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.models import Project
from feedback.checks import check_run
from feedback.models import AnswerCheck, CheckRun


class Command(BaseCommand):
    help = "Ask every check of a project again through the real pipeline; fail when one fails."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="Project name")
        parser.add_argument("--json", metavar="OUT", help="Also write the results as JSON here")

    def handle(self, *args: object, **options: object) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"No project named {options['project']!r}.")
        out = Path(str(options["json"])) if options["json"] else None
        if out is not None:
            _check_writable(out)  # before minutes of checks, not after them
        started = time.perf_counter()

        def progress(run: CheckRun) -> None:
            self.stderr.write(f"\r{run.done}/{run.total}", ending="")

        run = check_run(project=project, on_progress=progress)
        seconds = time.perf_counter() - started
        self.stderr.write("")
        rows = []
        for check in AnswerCheck.objects.filter(project=project):
            result = check.last_result or {}
            rows.append({
                "id": check.pk, "question": check.question, "topic": check.topic,
                "expect": check.expect, "passed": bool(result.get("passed")),
                "problems": result.get("problems", []), "ms": result.get("ms"),
                "changed": check.changed,
            })  # fmt: skip
            mark = "PASS" if result.get("passed") else "FAIL"
            detail = "; ".join(result.get("problems", []))
            self.stdout.write(f"{mark}  {check.question}" + (f"  ({detail})" if detail else ""))
        summary = {"project": project.name, "total": run.total, "failed": run.failed,
                   "seconds": round(seconds, 2), "checks": rows}  # fmt: skip
        if out is not None:
            try:
                out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
            except OSError as error:
                raise CommandError(f"Cannot write {out}: {error.strerror or error}.") from None
        self.stdout.write(f"{run.total - run.failed} of {run.total} passed in {seconds:.1f} s")
        if run.failed:
            raise CommandError(f"{run.failed} check{'s' if run.failed != 1 else ''} failed.")


def _check_writable(path: Path) -> None:
    """Open the file as the end of the run will (a file made only for this is removed again):
    the system's own answer, whoever runs the command."""
    existed = path.exists()
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as error:
        raise CommandError(f"Cannot write {path}: {error.strerror or error}.") from None
    if not existed:
        path.unlink()
