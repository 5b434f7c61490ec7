"""A terminal progress bar for sync runs (no dependency: one line redrawn with \\r)."""

from __future__ import annotations

import time
from typing import TextIO

from django.core.management.base import OutputWrapper

from ingestion.models import SyncRun


class ProgressBar:
    def __init__(self, out: TextIO | OutputWrapper, *, width: int = 30) -> None:
        # Django's OutputWrapper ends every write with a newline; draw on the stream below it.
        self.out = getattr(out, "_out", out)
        self.width = width
        self.started = time.monotonic()
        self.tty = out.isatty() if hasattr(out, "isatty") else False
        self._last_line = ""

    def __call__(self, run: SyncRun) -> None:
        total = max(run.total, run.done, 1)
        filled = int(self.width * run.done / total)
        elapsed = time.monotonic() - self.started
        rate = run.chunks_embedded / elapsed if elapsed > 0 else 0.0
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {run.done}/{run.total} items  "
            f"+{run.added} ~{run.changed} -{run.removed} !{run.failed}  "
            f"{run.chunks_embedded} chunks embedded ({rate:.1f}/s)"
        )
        if line == self._last_line:
            return
        if self.tty:
            self.out.write("\r" + line.ljust(len(self._last_line)))
        elif run.done == run.total or run.done % 256 < 16:
            self.out.write(line + "\n")
        self.out.flush()
        self._last_line = line

    def close(self) -> None:
        if self.tty:
            self.out.write("\n")
        self.out.flush()


def run_summary(run: SyncRun, seconds: float) -> str:
    rate = run.chunks_embedded / seconds if seconds > 0 else 0.0
    lines = [
        f"Run #{run.pk}: {run.get_status_display()} in {seconds:.1f} s",
        f"  seen {run.seen}, added {run.added}, changed {run.changed}, "
        f"unchanged {run.unchanged}, removed {run.removed}, failed {run.failed}",
        f"  chunks embedded {run.chunks_embedded} ({rate:.1f} chunks/s), "
        f"chunks removed {run.chunks_removed}",
    ]
    if run.message:
        lines.append(f"  {run.message}")
    lines += [f"  ! {error['url']}: {error['error']}" for error in run.errors[:20]]
    return "\n".join(lines)
