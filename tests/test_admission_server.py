"""A flood on the embedded server (one daphne process, as `.bin/run` serves it) is answered,
not cut: what cannot be answered within ASKDOCS_ANSWER_DEADLINE_SECONDS gets a JSON 503
`busy` with Retry-After at once (before any stream), no connection is reset, and another
project's question is still answered during one project's flood. Real sockets, each from an
address of its own, against a real daphne; the embedding server at the edge is a fake Ollama
that takes a second to embed a question, so that an answer holds its slot for about that
long (a question's CPU work, on a loaded machine)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from measuring.benchmark.flood import ORIGIN, flood
from tests.fake_ollama import FakeOllama
from tests.ingestion.processes import REPO, environment, free_port, manage, stop

DEADLINE = 3.0


@dataclass
class Served:
    port: int
    demo: str  # the demo project's key: the flooding project
    other: str  # another project's key


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder: Path = tmp_path_factory.mktemp("flood")
    with FakeOllama() as ollama:
        env = environment(
            folder, OLLAMA_HOST=ollama.url, ASKDOCS_EMBEDDER="ollama", ASKDOCS_ANSWER_SLOTS="2",
            ASKDOCS_ANSWER_DEADLINE_SECONDS=str(DEADLINE), ASKDOCS_RETRIEVAL_CACHE_SECONDS="0",
        )  # fmt: skip
        manage(env, "migrate", "-v", "0")
        keys = manage(env, "shell", "-v", "0", "-c", (
            "from assistant.demo import demo_seed; from assistant.models import Project; "
            "print(demo_seed().project.public_key); print(Project.objects.create(name='Other', "
            f"allowed_origins=['{ORIGIN}']).public_key)"
        )).split()  # fmt: skip
        ollama.stall_before_embedding = 1.0  # the index is built: each question waits
        port = free_port()
        log = folder / "daphne.log"
        server = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
             "config.asgi:application"],
            cwd=REPO, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).is_success:
                        break
                except httpx.HTTPError:
                    time.sleep(0.3)
            yield Served(port, keys[-2], keys[-1])
        finally:
            stop(server)


def test_the_server_listens_with_room_for_a_burst(served: Served) -> None:
    listening = subprocess.run(
        ["ss", "-ltnH", f"sport = :{served.port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    # For a listening socket, ss shows the backlog as Send-Q: daphne's own is 50.
    assert int(listening[2]) == 1024, listening


def test_a_flood_is_answered_with_503s_and_another_project_is_still_served(
    served: Served,
) -> None:
    question = {"project": served.demo, "question": "How do I get my money back?"}
    bodies = [question] * 60
    bodies.insert(30, {"project": served.other, "question": "Where is the manual?"})
    streams = [question] * 5  # the widget's SSE door, in the same flood
    started = time.monotonic()

    async def run() -> tuple[list[dict], list[dict]]:
        return await asyncio.gather(
            flood(served.port, bodies, seconds=60),
            flood(served.port, streams, seconds=60, first_client=100, path="/api/v1/ask/stream"),
        )

    outcomes, streamed = asyncio.run(run())
    took = time.monotonic() - started
    other = outcomes.pop(30)
    assert other["status"] == 200, other  # its share was kept for it
    everything = outcomes + streamed
    # Every connection got an answer: none reset, none closed without a word.
    assert {o["status"] for o in everything} <= {200, 503}, [o["status"] for o in everything]
    refused = [o for o in everything if o["status"] == 503]
    answered = [o for o in outcomes if o["status"] == 200]
    assert refused and answered
    for outcome in refused:
        assert outcome["json"] and outcome["code"] == "busy", outcome
        assert int(outcome["retry_after"]) >= 1
    # Told at once, not after waiting for a slot: every refusal came before the last answer
    # (how fast is the bench's to measure, `bench --only flood`, not a timed test's).
    assert max(o["s"] for o in refused) < max(o["s"] for o in answered)
    assert took < 60  # the flood's own bound: nothing waited for ever
