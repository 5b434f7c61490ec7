"""A throwaway data folder for the sections that need a project with indexed documents:
ingestion, the repeated question and the ASGI server. It gets its own SQLite database and
embedded vector store, so a bench never writes into the real ones (whatever DATABASE_URL,
CHROMA_URL or REDIS_URL say), and its processes are started with this environment."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings

#: Settings that would point a child at real, shared services.
_SHARED = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CHROMA_URL", "ASKDOCS_TESTING")
BENCH_ORIGIN = "http://bench.localhost"
UNLIMITED = "1000000/m"


def child_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SHARED}
    env.update(
        ASKDOCS_DATA_DIR=str(folder),
        ASKDOCS_MODEL_CACHE=str(settings.ASKDOCS_MODEL_CACHE),
        DJANGO_SECRET_KEY=secrets.token_urlsafe(32),
        DJANGO_SETTINGS_MODULE="config.settings",
        ASKDOCS_RATE_ASK_PER_CLIENT=UNLIMITED,
        ASKDOCS_RATE_ASK_PER_CONVERSATION=UNLIMITED,
        ASKDOCS_INPROCESS_SCHEDULER="0",
        # A site evaluated from a folder is served on 127.0.0.1 by the measuring command.
        ASKDOCS_ALLOWED_PRIVATE_HOSTS=",".join(
            [*settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS, "127.0.0.1"]
        ),
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env


@contextmanager
def throwaway_folder(keep: Path | None, *, prefix: str) -> Iterator[Path]:
    """`keep` (`--workdir`, kept for next time) or a new temporary folder, removed after."""
    folder = keep or Path(tempfile.mkdtemp(prefix=prefix))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def repo_root() -> Path:
    return Path(settings.BASE_DIR)


def run_child(
    folder: Path,
    arguments: dict[str, Any],
    *,
    timeout: float,
    module: str = "measuring.benchmark.child",
    show_progress: bool = False,
) -> dict[str, Any]:
    """Run `module` (a bench or evaluation child) in the folder's environment; its JSON
    report. With `show_progress` the child's standard error (its progress) is passed through."""
    out = folder / "child-report.json"
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", module, json.dumps(arguments), str(out)]
    done = subprocess.run(  # noqa: S603 - our own interpreter and module
        command, cwd=repo_root(), env=child_env(folder), text=True, timeout=timeout,
        check=False, stdout=subprocess.PIPE, stderr=None if show_progress else subprocess.PIPE,
    )  # fmt: skip
    if done.returncode != 0 or not out.is_file():
        raise RuntimeError(
            f"the child {module} failed (exit {done.returncode}):\n{(done.stderr or '')[-3000:]}"
        )
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def manage(env: dict[str, str], *args: str) -> str:
    """Run one of our management commands in a child process with `env`; its output."""
    done = subprocess.run(  # noqa: S603 - our own interpreter and manage.py
        [sys.executable, "manage.py", *args], cwd=repo_root(), env=env, text=True,
        capture_output=True, timeout=1800, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout
