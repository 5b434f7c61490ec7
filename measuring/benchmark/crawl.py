"""`bench --only crawl`: answers beside a website crawl, on the embedded default.

One daphne process on a throwaway data folder (SQLite, the embedded vector store, syncs on the
process's own sync lane), the demo project seeded and a static site served by
`python -m http.server` in a process of its own. Each round asks `conversations` demo
questions at once over WebSockets (as the widget does) with no sync running, then starts a
fresh crawl of the site from the console (as staff press "Sync now"), waits until it has
read and embedded its first pages, asks the same questions again while it runs (the retrieval
cache off, so that none is answered from it), and lets the crawl end (its `run_seconds`)
before the next round, so that the two halves of a round see the same noise from the rest of
the machine. Reported, not asserted: the whole answer's and the first token's median and p90
with and without the crawl, their ratios (the target is 1.3) and what the crawl did meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from measuring.benchmark.concurrency import _conversations, socket_url
from measuring.benchmark.local import DEMO_QUESTIONS
from measuring.benchmark.server import AsgiServer, free_port
from measuring.benchmark.workdir import child_env, manage

ORIGIN = "http://127.0.0.1:8000"  # the demo project's
STAFF = ("bench", "bench-crawl-password-1")
TARGET = 1.3


@contextmanager
def _site(folder: Path, root: Path) -> Iterator[str]:
    port = free_port()
    log = (folder / "site.log").open("wb")
    server = subprocess.Popen(  # noqa: S603 - the standard library's file server
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(root)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the site's http.server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


class _Console:
    """Staff in the console: "Sync now" on a source, as a person presses it."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.client = httpx.Client(base_url=base, timeout=60, follow_redirects=False)
        self.client.get("/admin/login/")
        response = self.client.post(
            "/admin/login/",
            data={"username": STAFF[0], "password": STAFF[1], "csrfmiddlewaretoken": self._csrf()},
        )
        if response.status_code != 302:
            raise RuntimeError(f"staff login failed: HTTP {response.status_code}")

    def _csrf(self) -> str:
        return str(self.client.cookies.get("csrftoken", ""))

    def sync_now(self, source_id: int) -> None:
        response = self.client.post(
            f"/admin/sources/{source_id}/sync/", data={"csrfmiddlewaretoken": self._csrf()},
            headers={"Referer": f"{self.base}/admin/sources/{source_id}/"},
        )  # fmt: skip
        if response.status_code != 302:
            raise RuntimeError(f"Sync now failed: HTTP {response.status_code}")


def _run_state(database: Path, source_id: int) -> dict[str, Any] | None:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as db:
        row = db.execute(
            "SELECT status, done, added, chunks_embedded FROM ingestion_syncrun "
            "WHERE source_id = ? ORDER BY id DESC LIMIT 1",
            (source_id,),
        ).fetchone()
    if row is None:
        return None
    return dict(zip(("status", "pages", "added", "chunks_embedded"), row, strict=True))


def _wait_for(
    database: Path, source_id: int, ready: Callable[[dict[str, Any] | None], bool], limit: float
) -> dict[str, Any] | None:
    deadline = time.monotonic() + limit
    while True:
        state = _run_state(database, source_id)
        if ready(state) or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def _threads(pid: int) -> dict[tuple[str, int], float]:
    """CPU seconds so far of each thread of `pid` (Linux /proc), by (name, niceness)."""
    seconds: dict[tuple[str, int], float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        # utime, stime are fields 14 and 15 of stat, niceness 19 (fields[0] is field 3).
        key = (re.sub(r"[_-]?\d+$", "", name), int(fields[16]))
        seconds[key] = seconds.get(key, 0.0) + (int(fields[11]) + int(fields[12])) / _TICKS
    return seconds


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_between(
    before: dict[tuple[str, int], float], after: dict[tuple[str, int], float]
) -> dict[str, float]:
    spent = {key: after[key] - before.get(key, 0.0) for key in after}
    return {f"{name} (nice {nice})": round(value, 1)
            for (name, nice), value in sorted(spent.items(), key=lambda kv: -kv[1])
            if value >= 0.1}  # fmt: skip


def _p(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)


def _figures(whole: Sequence[float], first: Sequence[float]) -> dict[str, float]:
    return {
        "answer_median_ms": round(statistics.median(whole), 1),
        "answer_p90_ms": _p(whole, 0.9),
        "first_token_median_ms": round(statistics.median(first), 1),
        "first_token_p90_ms": _p(first, 0.9),
    }


def measure_crawl(
    *,
    folder: Path,
    site: Path,
    conversations: int,
    runs: int,
    crawl_seconds: float,
    server: str,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    env = child_env(folder)
    extra = {
        "DJANGO_SECRET_KEY": env["DJANGO_SECRET_KEY"], "ASKDOCS_HTTPS": "0",
        # The same questions with and without the crawl: none may come from the cache.
        "ASKDOCS_RETRIEVAL_CACHE_SECONDS": "0",
    }  # fmt: skip
    env.update(extra)
    manage(env, "migrate", "-v", "0")
    manage(env, "seed_demo")
    manage({**env, "ASKDOCS_ADMIN_USER": STAFF[0], "ASKDOCS_ADMIN_PASSWORD": STAFF[1]},
            "createadmin")  # fmt: skip
    key = manage(env, "shell", "-v", "0", "-c", (
        "from assistant.models import Project; print(Project.objects.get(name='Demo').public_key)"
    )).strip()  # fmt: skip
    questions = [DEMO_QUESTIONS[n % len(DEMO_QUESTIONS)] for n in range(conversations)]
    database = folder / "db.sqlite3"
    rounds: list[dict[str, Any]] = []
    with ExitStack() as stack:
        start = stack.enter_context(_site(folder, site)) + "index.html"
        web = stack.enter_context(AsgiServer(folder, kind=server, env=extra))
        base = f"http://127.0.0.1:{web.port}"
        url = socket_url(web.ws_url, key)
        console = _Console(base)
        asyncio.run(_conversations(url, ORIGIN, questions[:2]))  # the models load
        for number in range(1, runs + 1):
            quiet = asyncio.run(_conversations(url, ORIGIN, questions))
            source_id = int(manage(env, "shell", "-v", "0", "-c", (
                "from assistant.models import Project; from ingestion.models import Source; "
                "project, _ = Project.objects.get_or_create(name='Crawled docs'); "
                f"print(Source.objects.create(project=project, kind='website', "
                f"name='site {number}', config={{'start_url': {start!r}, "
                f"'run_seconds': {crawl_seconds!r}}}).pk)"
            )).strip())  # fmt: skip
            console.sync_now(source_id)
            # Asked once the crawl is under way: its first pages read and embedded.
            state = _wait_for(database, source_id, lambda s: bool(s and s["pages"]), 180)
            if state is None or state["status"] != "running":
                raise RuntimeError(f"the crawl was not running with pages read: {state}")
            started, cpu = time.perf_counter(), _threads(web.pid)
            beside = asyncio.run(_conversations(url, ORIGIN, questions))
            asked_s = time.perf_counter() - started
            cpu_beside = _cpu_between(cpu, _threads(web.pid))
            during = _run_state(database, source_id) or {}
            final = _wait_for(database, source_id, lambda s: bool(s and s["status"] != "running"),
                              crawl_seconds + 600)  # fmt: skip
            rounds.append({
                "quiet": _figures([c.whole_ms for c in quiet], [c.first_token_ms for c in quiet]),
                "crawl": _figures([c.whole_ms for c in beside],
                                  [c.first_token_ms for c in beside]),
                "crawl_running_after_the_answers": during.get("status") == "running",
                "pages_when_answered": during.get("pages"), "answers_took_s": round(asked_s, 1),
                "crawl_final": final, "server_cpu_s_by_thread_beside_the_crawl": cpu_beside,
            })  # fmt: skip
            progress(f"round {number}: {rounds[-1]['quiet']} / {rounds[-1]['crawl']}")
    return _report(rounds, conversations=conversations, crawl_seconds=crawl_seconds)


def _report(rounds: list[dict[str, Any]], **config: Any) -> dict[str, Any]:
    def pooled(side: str, name: str) -> float:
        return round(statistics.median(r[side][name] for r in rounds), 1)

    names = ("answer_median_ms", "answer_p90_ms", "first_token_median_ms", "first_token_p90_ms")
    quiet = {name: pooled("quiet", name) for name in names}
    crawl = {name: pooled("crawl", name) for name in names}
    ratios = {name: round(crawl[name] / quiet[name], 2) if quiet[name] else None for name in names}
    per_round = [
        round(r["crawl"]["answer_median_ms"] / r["quiet"]["answer_median_ms"], 2) for r in rounds
    ]
    return {**config, "runs": len(rounds), "quiet": quiet, "crawl": crawl, "ratio": ratios,
            "answer_median_ratio_per_round": per_round, "target": TARGET,
            "rounds": rounds}  # fmt: skip


def table(report: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"Answers beside a crawl ({report['conversations']} conversations at once, "
        f"{report['runs']} round(s); medians over the rounds, ms)",
        "| | answer median | answer p90 | first token median | first token p90 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for side in ("quiet", "crawl", "ratio"):
        row = report[side]
        lines.append(f"| {side} | {row['answer_median_ms']} | {row['answer_p90_ms']} | "
                     f"{row['first_token_median_ms']} | {row['first_token_p90_ms']} |")  # fmt: skip
    lines.append(f"answer median ratio per round: {report['answer_median_ratio_per_round']} "
                 f"(target {report['target']})")  # fmt: skip
    for number, r in enumerate(report["rounds"], 1):
        final = r["crawl_final"] or {}
        lines.append(
            f"round {number}: crawl still running after the answers: "
            f"{r['crawl_running_after_the_answers']} ({r['pages_when_answered']} pages then, "
            f"answers took {r['answers_took_s']} s); the crawl ended "
            f"{final.get('status')} with {final.get('pages')} pages, "
            f"{final.get('chunks_embedded')} chunks embedded"
        )
        lines.append(f"  server CPU s meanwhile: {r['server_cpu_s_by_thread_beside_the_crawl']}")
    return lines
