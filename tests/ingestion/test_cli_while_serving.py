"""A CLI command that writes to the index while the server runs (embedded defaults: SQLite and
the in-process Chroma store, in separate processes) is seen by the server at its next question,
without a restart: a new source, and new documents in a source the server has already read."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.ingestion.processes import REPO, environment, free_port, manage, stop

DISCOUNT = {"id": "students", "title": "Student discount",
            "text": "Students get 50% off any annual plan with a valid student email address.",
            "url": "https://help.acme.example/students"}  # fmt: skip
GIFTS = {"id": "gift-cards", "title": "Gift cards",
         "text": "Gift cards never expire and can be redeemed on any plan from the billing page.",
         "url": "https://help.acme.example/gift-cards"}  # fmt: skip


@pytest.fixture
def served(tmp_path: Path):  # noqa: ANN201
    """The demo, migrated and seeded by the CLI, then served by uvicorn in its own process."""
    env = environment(tmp_path, ASKDOCS_STREAM_WORDS_PER_SECOND="0")
    manage(env, "migrate", "-v", "0")
    manage(env, "seed_demo")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(port),
         "--log-level", "warning"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
    else:
        stop(server)
        raise AssertionError("the server did not start")
    try:
        yield env, url, tmp_path
    finally:
        stop(server)


def ask(env: dict[str, str], url: str, question: str) -> dict:
    key = manage(env, "shell", "-v", "0", "-c",
                 "from assistant.models import Project; "
                 "print(Project.objects.get(name='Demo').public_key)").strip()  # fmt: skip
    response = httpx.post(
        f"{url}/api/v1/ask", json={"project": key, "question": question},
        headers={"Origin": "http://127.0.0.1:8000"}, timeout=120,
    )  # fmt: skip
    assert response.status_code == 200, response.text
    return response.json()


def test_cli_writes_reach_the_running_server_without_a_restart(served) -> None:  # noqa: ANN001
    env, url, folder = served
    assert ask(env, url, "Do you offer a student discount?")["refused"]  # the server read it

    export = folder / "extra.jsonl"
    export.write_text(json.dumps(DISCOUNT) + "\n")
    manage(env, "ingest_jsonl", str(export), "--project", "Demo", "--source", "Extra")
    answer = ask(env, url, "Do you offer a student discount?")
    assert not answer["refused"] and "50% off" in answer["answer"]

    # The same source again, with a document more: the server has this collection loaded.
    assert ask(env, url, "Do gift cards expire?")["refused"]
    export.write_text(json.dumps(DISCOUNT) + "\n" + json.dumps(GIFTS) + "\n")
    manage(env, "ingest_jsonl", str(export), "--project", "Demo", "--source", "Extra")
    answer = ask(env, url, "Do gift cards expire?")
    assert not answer["refused"] and "never expire" in answer["answer"]
