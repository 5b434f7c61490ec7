"""Simultaneous widget conversations over real WebSockets, and the memory idle sockets hold.

Each conversation is a socket of its own asking one question, as the widget does
(static/widget/widget.js): all N sockets connect first, then all send at the same moment.
Time to first token runs from the send to the first `token` frame; tokens per second counts the
`token` frames after the first over the time from the first to the last (the server merges
tokens into one frame when the client falls behind, so this is a floor on the real rate).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from websockets.asyncio.client import ClientConnection, connect

from measuring.benchmark.stats import over_runs

TIMEOUT = 300.0


@dataclass(slots=True)
class Conversation:
    first_token_ms: float
    whole_ms: float
    tokens: int
    tokens_per_s: float | None
    refused: bool


def socket_url(base: str, project_key: str) -> str:
    return f"{base}/ws/ask/?project={quote(project_key)}"


async def _ask(ws: ClientConnection, question: str, topic: str) -> Conversation:
    started = time.perf_counter()
    await ws.send(json.dumps({"question": question, "topic": topic}))
    first = last = 0.0
    tokens = 0
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
        now = time.perf_counter()
        if frame["type"] == "token":
            tokens += 1
            first = first or now
            last = now
        elif frame["type"] == "error":
            raise RuntimeError(f"{question!r}: {frame.get('code')}: {frame.get('message')}")
        elif frame["type"] == "done":
            span = last - first
            return Conversation(
                first_token_ms=((first or now) - started) * 1000,
                whole_ms=(now - started) * 1000,
                tokens=tokens,
                tokens_per_s=(tokens - 1) / span if tokens > 1 and span > 0 else None,
                refused=bool(frame.get("refused")),
            )


async def _conversations(
    url: str, origin: str, questions: Sequence[tuple[str, str]]
) -> list[Conversation]:
    sockets = [await connect(url, origin=origin, open_timeout=60) for _ in questions]  # type: ignore[arg-type]
    try:
        return list(
            await asyncio.gather(
                *(_ask(ws, q, t) for ws, (q, t) in zip(sockets, questions, strict=True))
            )
        )
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets))


def measure_concurrency(
    *,
    url: str,
    origin: str,
    questions: Sequence[tuple[str, str]],
    levels: Sequence[int],
    runs: int,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    asyncio.run(_conversations(url, origin, questions[:1]))  # models load on the first question
    report: dict[str, Any] = {}
    offset = 0
    for n in levels:
        first_token: list[list[float]] = []
        whole: list[list[float]] = []
        rates: list[list[float]] = []
        refused = 0
        wall: list[float] = []
        for _ in range(runs):
            # Different questions each time: a repeated one could come from a cache.
            asked = [questions[(offset + i) % len(questions)] for i in range(n)]
            offset += n
            started = time.perf_counter()
            done = asyncio.run(_conversations(url, origin, asked))
            wall.append(time.perf_counter() - started)
            first_token.append([c.first_token_ms for c in done])
            whole.append([c.whole_ms for c in done])
            rates.append([c.tokens_per_s for c in done if c.tokens_per_s is not None])
            refused += sum(c.refused for c in done)
        report[str(n)] = {
            "conversations": n * runs,
            "refused": refused,
            "first_token_ms": over_runs(first_token),
            "whole_answer_ms": over_runs(whole),
            "tokens_per_s": over_runs(rates),
            "wall_s": round(statistics.median(wall), 3),
        }
        progress(f"{n} simultaneous conversations done")
    return report


async def _hold(url: str, origin: str, count: int, measure: Callable[[], int]) -> dict[str, Any]:
    sockets: list[ClientConnection] = []
    before = measure()
    try:
        for start in range(0, count, 50):
            batch = min(50, count - start)
            sockets += await asyncio.gather(
                *(connect(url, origin=origin, open_timeout=60) for _ in range(batch))  # type: ignore[arg-type]
            )
        await asyncio.sleep(1.0)
        # Every socket still answers a ping: they are open, not merely counted.
        await asyncio.gather(*[await ws.ping() for ws in sockets])
        after = measure()
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return {
        "sockets": len(sockets),
        "rss_before_kb": before,
        "rss_after_kb": after,
        "kb_per_socket": round((after - before) / max(1, len(sockets)), 1),
    }


def measure_idle(*, url: str, origin: str, count: int, rss_kb: Callable[[], int]) -> dict[str, Any]:
    return asyncio.run(_hold(url, origin, count, rss_kb))
