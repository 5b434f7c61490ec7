"""`bench --only flood`: the embedded default (one daphne process, as `.bin/run` serves it)
asked more at once than it can answer.

Each ask is a real socket of its own from an address of its own (127.0.0.2, 127.0.0.3...: the
whole 127/8 reaches the loopback), so per-client limits do not apply, as with many visitors.
Counted: answered (200), refused with 503 (and how many carried `Retry-After` and a JSON
body), connections reset or closed without an answer, and the times of each; the slowest
admitted answer is what admission promises to bound. The same client is the tests' flood
(tests/test_admission_server.py).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: The demo project lets this origin ask (assistant/demo.py).
ORIGIN = "http://127.0.0.1:8000"


def source_address(n: int) -> str:
    """The n-th loopback address after 127.0.0.1 (127.0.0.2 ... 127.0.255.254 ...)."""
    n += 2
    return f"127.{(n // 254) // 256 % 256}.{(n // 254) % 256}.{n % 254 + 1}"


async def ask_once(
    port: int, body: dict[str, Any], *, client: str, seconds: float, path: str = "/api/v1/ask"
) -> dict[str, Any]:
    """POST the question to `path` over a socket of its own from `client`; the status (or
    what happened to the connection: reset, closed, timeout), Retry-After, the error code,
    the body, and the seconds taken."""
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {ORIGIN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    started = time.perf_counter()
    outcome: dict[str, Any] = {"status": "closed", "retry_after": None, "json": False}
    try:
        async with asyncio.timeout(seconds):
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(client, 0)
            )
            try:
                writer.write(head + payload)
                await writer.drain()
                answer = await reader.read()
            finally:
                writer.close()
        outcome.update(_parsed(answer))
    except ConnectionResetError:
        outcome["status"] = "reset"
    except TimeoutError:
        outcome["status"] = "timeout"
    except OSError as error:
        outcome["status"] = type(error).__name__
    outcome["s"] = time.perf_counter() - started
    return outcome


def _parsed(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 "):
        return {"status": "closed"}
    headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
    json_body = headers.get("content-type", "").startswith("application/json")
    try:
        code = json.loads(body).get("error", {}).get("code") if json_body else None
    except (ValueError, AttributeError):
        code = None
    return {
        "status": int(lines[0].split(" ")[1]), "retry_after": headers.get("retry-after"),
        "json": json_body, "code": code, "body": body,
    }  # fmt: skip


async def flood(
    port: int,
    bodies: Sequence[dict[str, Any]],
    *,
    seconds: float = 300,
    first_client: int = 0,
    path: str = "/api/v1/ask",
) -> list[dict[str, Any]]:
    """Every body asked at once, each from its own address."""
    return list(
        await asyncio.gather(*(
            ask_once(
                port, body, client=source_address(first_client + n), seconds=seconds, path=path
            )
            for n, body in enumerate(bodies)
        ))
    )  # fmt: skip


def figures(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    answered = sorted(o["s"] for o in outcomes if o["status"] == 200)
    refused = [o for o in outcomes if o["status"] == 503]
    lost = [o for o in outcomes if not isinstance(o["status"], int)]
    return {
        "asks": len(outcomes),
        "statuses": dict(Counter(str(o["status"]) for o in outcomes)),
        "answered": len(answered),
        "refused_503": len(refused),
        "refused_with_retry_after": sum(1 for o in refused if o["retry_after"]),
        "refused_json": sum(1 for o in refused if o["json"]),
        "refused_slowest_s": round(max((o["s"] for o in refused), default=0), 2),
        "reset_or_closed": len(lost),
        "answer_median_s": round(statistics.median(answered), 2) if answered else None,
        "answer_slowest_s": round(answered[-1], 2) if answered else None,
    }


def measure_flood(
    *, folder: Path, levels: list[int], deadline: float, progress: Callable[[str], None]
) -> dict[str, Any]:
    """A daphne on the demo project (SQLite, the in-process store, as `.bin/run`), warmed by
    one ask, then each level's asks at once (the demo questions in turn, the retrieval cache
    off so that each goes the whole way), with a pause between levels."""
    from measuring.benchmark.local import DEMO_QUESTIONS
    from measuring.benchmark.server import AsgiServer
    from measuring.benchmark.workdir import child_env, manage

    extra = {
        "ASKDOCS_HTTPS": "0", "ASKDOCS_STREAM_WORDS_PER_SECOND": "0",
        "ASKDOCS_RETRIEVAL_CACHE_SECONDS": "0",
        "ASKDOCS_ANSWER_DEADLINE_SECONDS": str(deadline),
    }  # fmt: skip
    env = {**child_env(folder), **extra}
    progress("migrate, seed the demo project ...")
    manage(env, "migrate", "-v", "0")
    manage(env, "seed_demo")
    key = manage(env, "shell", "-v", "0", "-c", (
        "from assistant.models import Project; print(Project.objects.get(name='Demo').public_key)"
    )).strip()  # fmt: skip
    rows = []
    with AsgiServer(folder, kind="daphne", env=extra) as server:
        warm = [{"project": key, "question": DEMO_QUESTIONS[0][0]}]
        asyncio.run(flood(server.port, warm, seconds=600))
        for asks in levels:
            bodies = [
                {"project": key, "question": q, "topic": t}
                for q, t in (DEMO_QUESTIONS[n % len(DEMO_QUESTIONS)] for n in range(asks))
            ]
            progress(f"{asks} asks at once ...")
            started = time.perf_counter()
            outcomes = asyncio.run(flood(server.port, bodies))
            rows.append({**figures(outcomes), "wall_s": round(time.perf_counter() - started, 1)})
            time.sleep(deadline)  # the admitted answers of the level before are done
    return {"deadline_s": deadline, "levels": rows}


def table(report: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"Flood on the embedded default (one daphne, deadline {report['deadline_s']} s)",
        f"{'asks':>5} {'answered':>8} {'503':>5} {'Retry-After':>11} {'reset':>5} "
        f"{'median s':>8} {'slowest s':>9} {'wall s':>6}",
    ]
    for row in report["levels"]:
        lines.append(
            f"{row['asks']:>5} {row['answered']:>8} {row['refused_503']:>5} "
            f"{row['refused_with_retry_after']:>11} {row['reset_or_closed']:>5} "
            f"{row['answer_median_s'] or '-':>8} {row['answer_slowest_s'] or '-':>9} "
            f"{row['wall_s']:>6}"
        )
    return lines
