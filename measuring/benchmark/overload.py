"""`bench --only overload`: the scale-out stack asked more than its connections can serve.

Builds the stack of docs/scaling-out.md on this machine, each part a process of its own: a
throwaway PostgreSQL database (dropped after), Redis under a key prefix of its own (its keys
deleted after), a `chroma run` server and N daphne processes, each with a connection pool of
DATABASE_POOL_SIZE. The demo project is seeded, then every ask (the demo questions in turn,
the retrieval cache off so that each goes the whole way) is sent at once, spread over the web
processes. Reported, not asserted: how many were answered, how many got 503 and
whether each carried `Retry-After`, the answers' times, the peak of connections PostgreSQL
held, and the lines each web process wrote on the `askdocs.overload` logger, by cause.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from measuring.benchmark.load import _median
from measuring.benchmark.local import DEMO_QUESTIONS
from measuring.benchmark.server import AsgiServer, free_port
from measuring.benchmark.workdir import child_env, manage

#: The demo project lets this origin ask (assistant/demo.py).
ORIGIN = "http://127.0.0.1:8000"
#: A line of assistant/overload.py: "503 for <where>: <cause> (<error>)".
OVERLOAD_LINE = re.compile(r"503 for (?P<where>[^:]+): (?P<cause>pool exhausted|database down)")


def _admin(server: str, command: str) -> None:
    import psycopg

    with psycopg.connect(f"{server.rstrip('/')}/postgres", autocommit=True) as connection:
        connection.execute(command)


class _PeakConnections:
    """Samples pg_stat_activity for one database until stopped."""

    def __init__(self, server: str, database: str) -> None:
        self.server, self.database = server, database
        self.peak = self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(f"{self.server.rstrip('/')}/postgres", autocommit=True) as db:
            while not self._stop.is_set():
                row = db.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.database,)
                ).fetchone()
                self.peak = max(self.peak, int(row[0]) if row else 0)
                self.samples += 1
                self._stop.wait(0.2)

    def __enter__(self) -> _PeakConnections:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


@contextmanager
def _chroma(folder: Path) -> Iterator[str]:
    port = free_port()
    log = (folder / "chroma.log").open("wb")
    server = subprocess.Popen(  # noqa: S603 - the chromadb package's own CLI
        [str(Path(sys.executable).parent / "chroma"), "run", "--path", str(folder / "chroma"),
         "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chroma run did not start; see {folder / 'chroma.log'}")
            time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


async def _all_at_once(urls: list[str], key: str, count: int) -> list[dict[str, Any]]:
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=900, limits=limits) as client:

        async def one(n: int) -> dict[str, Any]:
            text, topic = DEMO_QUESTIONS[n % len(DEMO_QUESTIONS)]
            started = time.perf_counter()
            try:
                response = await client.post(
                    f"{urls[n % len(urls)]}/api/v1/ask", headers={"Origin": ORIGIN},
                    json={"project": key, "question": text, "topic": topic},
                )  # fmt: skip
            except httpx.HTTPError as exc:
                return {"status": type(exc).__name__, "s": time.perf_counter() - started}
            return {
                "status": response.status_code,
                "s": time.perf_counter() - started,
                "retry_after": response.headers.get("Retry-After"),
                "json": response.headers.get("content-type", "").startswith("application/json"),
            }

        return list(await asyncio.gather(*(one(n) for n in range(count))))


def measure_overload(
    *,
    folder: Path,
    postgres: str,
    redis: str,
    asks: int,
    webs: int,
    pool: int,
    pool_timeout: float,
    server: str,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    name = f"askdocs_bench_{uuid.uuid4().hex[:8]}"
    _admin(postgres, f'CREATE DATABASE "{name}"')
    try:
        with ExitStack() as stack:
            chroma = stack.enter_context(_chroma(folder))
            extra = {
                "DATABASE_URL": f"{postgres.rstrip('/')}/{name}", "REDIS_URL": redis,
                "ASKDOCS_REDIS_KEY_PREFIX": name, "CHROMA_URL": chroma,
                "DATABASE_POOL_SIZE": str(pool), "DATABASE_POOL_TIMEOUT": str(pool_timeout),
                "ASKDOCS_STREAM_WORDS_PER_SECOND": "0",
                "ASKDOCS_HTTPS": "0",  # plain http on 127.0.0.1, as .bin/run serves it
                # Each ask goes the whole way, as many visitors' different questions would:
                # a repeated question is otherwise served from the retrieval cache in Redis.
                "ASKDOCS_RETRIEVAL_CACHE_SECONDS": "0",
            }  # fmt: skip
            env = {**child_env(folder), **extra}
            extra["DJANGO_SECRET_KEY"] = env["DJANGO_SECRET_KEY"]  # the web processes' too
            progress(f"database {name}: migrate, seed the demo project ...")
            manage(env, "migrate", "-v", "0")
            manage(env, "seed_demo")
            key = manage(env, "shell", "-v", "0", "-c", (
                "from assistant.models import Project; "
                "print(Project.objects.get(name='Demo').public_key)"
            )).strip()  # fmt: skip
            servers = [
                stack.enter_context(
                    AsgiServer(folder, kind=server, env=extra, log_name=f"web{n}.log")
                )
                for n in range(1, webs + 1)
            ]
            urls = [f"http://127.0.0.1:{s.port}" for s in servers]
            for url in urls:  # one ask each: the models load before the burst
                warm = {"project": key, "question": DEMO_QUESTIONS[0][0]}
                httpx.post(
                    f"{url}/api/v1/ask", headers={"Origin": ORIGIN}, json=warm, timeout=600
                ).raise_for_status()
            logs = [folder / f"web{n}.log" for n in range(1, webs + 1)]
            before = [log.stat().st_size for log in logs]
            progress(f"{asks} asks at once on {webs} web processes (pool {pool} each) ...")
            started = time.perf_counter()
            with _PeakConnections(postgres, name) as watch:
                outcomes = asyncio.run(_all_at_once(urls, key, asks))
            wall = time.perf_counter() - started
            lines = [
                line
                for log, offset in zip(logs, before, strict=True)
                for line in log.read_bytes()[offset:].decode(errors="replace").splitlines()
                if OVERLOAD_LINE.search(line)
            ]
    finally:
        _admin(postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _forget_redis(redis, name)
    config = {"asks": asks, "webs": webs, "pool": pool, "pool_timeout": pool_timeout}
    return {**config, **_figures(outcomes, lines), "wall_s": round(wall, 1),
            "peak_connections": watch.peak}  # fmt: skip


def _forget_redis(url: str, prefix: str) -> None:
    import redis

    store = redis.Redis.from_url(url)
    for key in store.scan_iter(f"*{prefix}*"):
        store.delete(key)


def _figures(outcomes: list[dict[str, Any]], lines: list[str]) -> dict[str, Any]:
    statuses = Counter(str(o["status"]) for o in outcomes)
    refused = [o for o in outcomes if o["status"] == 503]
    causes = Counter(m["cause"] for line in lines if (m := OVERLOAD_LINE.search(line)))
    answered = sorted(o["s"] for o in outcomes if o["status"] == 200)
    return {
        "statuses": dict(statuses),
        "answered": len(answered),
        "answer_median_s": _median(answered),
        "answer_max_s": round(answered[-1], 1) if answered else None,
        "refused_503": len(refused),
        "refused_503_with_retry_after": sum(1 for o in refused if o["retry_after"]),
        "refused_503_json": sum(1 for o in refused if o["json"]),
        "refused_median_s": _median(sorted(o["s"] for o in refused)),
        "overload_log_lines": len(lines),
        "overload_log_causes": dict(causes),
        "overload_log_sample": lines[:3],
    }


def table(report: dict[str, Any]) -> list[str]:
    return [
        "",
        f"Overload: {report['asks']} asks at once on {report['webs']} web processes, "
        f"PostgreSQL pool {report['pool']} each (timeout {report['pool_timeout']} s), Redis",
        f"statuses {report['statuses']} in {report['wall_s']} s; answered {report['answered']} "
        f"(median {report['answer_median_s']} s, max {report['answer_max_s']} s)",
        f"503: {report['refused_503']} ({report['refused_503_with_retry_after']} with Retry-After,"
        f" {report['refused_503_json']} JSON, median {report['refused_median_s']} s); peak "
        f"{report['peak_connections']} connections in PostgreSQL",
        f"askdocs.overload: {report['overload_log_lines']} lines {report['overload_log_causes']}",
        *(f"  {line}" for line in report["overload_log_sample"]),
    ]
