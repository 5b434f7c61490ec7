"""Helpers for tests that run the product in separate processes (sync commands, a Celery
worker, a Chroma server), each with a data folder of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.servers import free_port, start_chroma, stop  # noqa: F401 - re-exported

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("process_driver.py")


def environment(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CHROMA_URL")
    }
    env.update(
        ASKDOCS_DATA_DIR=str(data_dir),
        ASKDOCS_TESTING="1",
        DJANGO_SETTINGS_MODULE="config.test_settings",
        ASKDOCS_MODEL_THREADS="1",
        ASKDOCS_ALLOWED_PRIVATE_HOSTS="127.0.0.1",  # the tests' local sites
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        **extra,
    )
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        )
    return result.stdout


def drive(env: dict[str, str], *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, str(DRIVER), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"driver {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])
