"""The README's scale-out walk-through, run for real on this machine: PostgreSQL (a database of
its own), Redis (a db and key prefix of their own), a `chroma run` server, a Celery worker and
beat, and two daphne web processes, each a process of its own. Both web processes answer
(REST, a WebSocket conversation, and an MCP conversation asked of one and followed up on the
other), a sync the worker runs reaches both, then everything is stopped and dropped. Runs on
the PostgreSQL + Redis pass."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets

from tests.ingestion.processes import REPO, environment, free_port, manage, start_chroma, stop
from tests.test_mcp import run as run_mcp

pytestmark = pytest.mark.skipif(
    not (os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("REDIS_URL")),
    reason="the PostgreSQL + Redis pass",
)
ORIGIN = "http://127.0.0.1:8000"  # among the demo project's allowed origins


def postgres(command: str) -> None:
    import psycopg

    admin = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(command)


def started(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, cwd=REPO, env=env, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT)  # fmt: skip


def wait_until_up(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{url} did not come up:\n{log.read_text()[-3000:]}")


#: Connections each process may open (DATABASE_POOL_SIZE).
POOL = 8


@pytest.fixture(scope="module")
def scale_out(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tmp_path = tmp_path_factory.mktemp("scale-out")
    name = f"askdocs_scaleout_{uuid.uuid4().hex[:8]}"
    postgres(f'CREATE DATABASE "{name}"')
    chroma, chroma_url = start_chroma(tmp_path)
    database = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + f"/{name}"
    env = environment(
        tmp_path / "shared-data",  # the uploads folder every process shares
        DATABASE_URL=database, REDIS_URL="redis://127.0.0.1:6379/13", CHROMA_URL=chroma_url,
        ASKDOCS_REDIS_KEY_PREFIX=name, ASKDOCS_STREAM_WORDS_PER_SECOND="0",
        DATABASE_POOL_SIZE=str(POOL), DATABASE_POOL_TIMEOUT="60",
    )  # fmt: skip
    processes: list[subprocess.Popen[bytes]] = [chroma]
    try:
        manage(env, "migrate", "-v", "0")
        manage(env, "collectstatic", "--noinput", "-v", "0")
        manage({**env, "ASKDOCS_ADMIN_PASSWORD": "walk-through-1"}, "createadmin")
        manage(env, "seed_demo")
        celery = [sys.executable, "-m", "celery", "-A", "config"]
        processes.append(started([*celery, "worker", "--pool", "solo", "-l", "info"], env,
                                 tmp_path / "worker.log"))  # fmt: skip
        processes.append(started([*celery, "beat", "-s", str(tmp_path / "beat-schedule")], env,
                                 tmp_path / "beat.log"))  # fmt: skip
        webs = []
        for number in (1, 2):
            port = free_port()
            log = tmp_path / f"web{number}.log"
            web = started([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                           "config.asgi:application"], env, log)  # fmt: skip
            processes.append(web)
            webs.append((f"http://127.0.0.1:{port}", web, log))
        for url, web, log in webs:
            wait_until_up(url, web, log)
        yield {"env": env, "webs": [url for url, _, _ in webs], "processes": processes,
               "folder": tmp_path, "database": name}  # fmt: skip
    finally:
        for process in reversed(processes):
            stop(process)
        postgres(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        import redis

        keys = redis.Redis.from_url("redis://127.0.0.1:6379/13")
        for key in keys.scan_iter(f"*{name}*"):
            keys.delete(key)


def public_key(env: dict[str, str]) -> str:
    return manage(env, "shell", "-v", "0", "-c",
                  "from assistant.models import Project; "
                  "print(Project.objects.get(name='Demo').public_key)").strip()  # fmt: skip


def ask(url: str, key: str, question: str, topic: str = "") -> dict:
    response = httpx.post(f"{url}/api/v1/ask", json={"project": key, "question": question,
                          "topic": topic}, headers={"Origin": ORIGIN}, timeout=120)  # fmt: skip
    assert response.status_code == 200, response.text
    return response.json()


async def conversation(url: str, key: str, questions: list[str]) -> list[list[dict]]:
    answers = []
    socket_url = url.replace("http://", "ws://") + f"/ws/ask/?project={key}"
    async with websockets.connect(socket_url, origin=ORIGIN) as socket:
        conversation_id = None
        for question in questions:
            frame = {"question": question, "topic": "Billing"}
            if conversation_id:
                frame["conversation_id"] = conversation_id
            await socket.send(json.dumps(frame))
            frames = []
            while not frames or frames[-1]["type"] not in ("done", "error"):
                frames.append(json.loads(await asyncio.wait_for(socket.recv(), 120)))
            conversation_id = frames[-1].get("conversation_id")
            answers.append(frames)
    return answers


def test_two_web_processes_a_worker_and_beat_share_one_index(scale_out) -> None:  # noqa: ANN001
    env, (first, second) = scale_out["env"], scale_out["webs"]
    key = public_key(env)
    for url in (first, second):
        answer = ask(url, key, "How do I get my money back?", "Billing")
        assert not answer["refused"] and "refund" in answer["answer"].lower()

    turns = asyncio.run(conversation(second, key, ["How do I get my money back?",
                                                   "How long does it take?"]))  # fmt: skip
    assert [t[-1]["type"] for t in turns] == ["done", "done"]
    assert turns[0][-1]["conversation_id"] == turns[1][-1]["conversation_id"]
    assert not turns[0][-1]["refused"]

    # An AI tool's conversation over MCP (stateless, under daphne, which runs no ASGI lifespan)
    # spans both web processes: asked on the first, followed up on the second.
    secret = manage(env, "project_key", "--project", "Demo", "--rotate").strip()

    def mcp_ask(url: str, arguments: dict) -> dict:
        async def session(client) -> dict:  # noqa: ANN001
            return (await client.call_tool("ask", arguments)).structured_content

        return run_mcp(url, secret, session)

    first_turn = mcp_ask(first, {"question": "How do I get my money back?"})
    follow_up = mcp_ask(
        second,
        {"question": "How long does it take?", "conversation_id": first_turn["conversation_id"]},
    )
    assert not first_turn["refused"] and "refund" in first_turn["answer"].lower()
    assert follow_up["conversation_id"] == first_turn["conversation_id"]

    # A source synced by the worker (not by a web process) reaches both web processes.
    assert ask(first, key, "Do you offer a student discount?")["refused"]
    manage(env, "shell", "-v", "0", "-c", (
        "from assistant.models import Project; from ingestion.models import Source; "
        "from ingestion.dispatch import sync_enqueue; "
        "s = Source.objects.create(project=Project.objects.get(name='Demo'), kind='manual', "
        "name='Students', config={'title': 'Student discount', 'text': 'Students get 50% off "
        "any annual plan with a valid student email address.'}); sync_enqueue(source=s)"
    ))  # fmt: skip
    deadline = time.monotonic() + 180
    answers: dict[str, dict] = {}
    while time.monotonic() < deadline and len(answers) < 2:
        for url in (first, second):
            answer = ask(url, key, "Do you offer a student discount?")
            if not answer["refused"]:
                answers[url] = answer
        time.sleep(1)
    worker_log = (scale_out["folder"] / "worker.log").read_text()
    assert len(answers) == 2, worker_log[-3000:]
    assert all("50% off" in a["answer"] for a in answers.values())
    assert "source_sync_task" in worker_log  # the worker ran it
    assert scale_out["processes"][2].poll() is None  # beat still running


class PeakConnections:
    """The most connections to one database that pg_stat_activity shows, sampled every 20 ms
    on a thread of its own while the block runs."""

    def __init__(self, database: str) -> None:
        self.database, self.peak, self.samples = database, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        import psycopg

        admin = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as connection:
            while not self._stop.is_set():
                row = connection.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.database,)
                ).fetchone()
                self.peak, self.samples = max(self.peak, row[0] if row else 0), self.samples + 1
                time.sleep(0.02)

    def __enter__(self) -> PeakConnections:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(10)


async def many_asks(urls: list[str], key: str, count: int) -> list[httpx.Response]:
    questions = ["How do I get my money back?", "How do I rotate an API key?",
                 "Can I pay by invoice?", "When does my token expire?"]  # fmt: skip
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        return list(await asyncio.gather(*(
            client.post(f"{urls[n % len(urls)]}/api/v1/ask", headers={"Origin": ORIGIN},
                        json={"project": key, "question": questions[n % len(questions)]})
            for n in range(count)
        )))  # fmt: skip


def test_200_concurrent_asks_stay_within_the_pool_and_a_refusing_database_answers_json(
    scale_out,  # noqa: ANN001
) -> None:
    """The finding: 200 concurrent asks on two web processes opened 104 connections, and 89
    users got Django's HTML 500 ("too many clients"). With the pool each process opens at
    most POOL; the rest wait their turn. A database that refuses anyway answers JSON 503."""
    env, webs, database = scale_out["env"], scale_out["webs"], scale_out["database"]
    key = public_key(env)
    started = time.monotonic()
    with PeakConnections(database) as watch:
        responses = asyncio.run(many_asks(webs, key, 200))
    elapsed = time.monotonic() - started
    statuses = Counter(r.status_code for r in responses)
    print(f"200 concurrent asks: {dict(statuses)} in {elapsed:.1f} s; peak connections "
          f"{watch.peak} ({watch.samples} samples; pool {POOL} per process)")  # fmt: skip
    assert statuses == {200: 200}, [r.text[:200] for r in responses if r.status_code != 200][:3]
    # The two web processes, the worker and beat: each within its pool.
    assert watch.samples > 10 and watch.peak <= 4 * POOL

    postgres(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
    postgres(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'")
    try:
        body = {"project": key, "question": "How do I get my money back?"}
        # Each wait for a connection lasts the pool's timeout (60 s here): the CORS check's
        # (its cached origins may have expired) and the view's.
        refused = httpx.post(
            f"{webs[0]}/api/v1/ask", headers={"Origin": ORIGIN}, json=body, timeout=300
        )
        assert refused.status_code == 503, refused.text[:300]
        assert refused.headers["content-type"] == "application/json"
        assert refused.json()["error"]["code"] == "unavailable"

        async def socket_refused() -> tuple[dict, int | None]:
            address = webs[1].replace("http://", "ws://") + f"/ws/ask/?project={key}"
            async with websockets.connect(address, origin=ORIGIN) as socket:
                frame = json.loads(await asyncio.wait_for(socket.recv(), 300))
                with pytest.raises(websockets.ConnectionClosed):
                    await asyncio.wait_for(socket.recv(), 30)
                return frame, socket.close_code

        frame, code = asyncio.run(socket_refused())
        assert (frame["type"], frame["code"], code) == ("error", "unavailable", 4503)
    finally:
        postgres(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
    # It recovers by itself once the database takes connections again (the pool reconnects).
    deadline, status = time.monotonic() + 300, 0
    while time.monotonic() < deadline and status != 200:
        time.sleep(1)
        status = httpx.post(f"{webs[0]}/api/v1/ask", headers={"Origin": ORIGIN}, json=body,
                            timeout=300).status_code  # fmt: skip
    assert status == 200
