"""`bench --only openai`: an OpenAI-compatible server answering the same demo questions as
`--only local`, through the same pipeline, timed the same way (from the question's start, as a
visitor waits), so the two tables sit side by side. The server is whatever ASKDOCS_OPENAI_*
names; the figures include its network and HTTP, and its own load."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from assistant.rag.answering import Pipeline
from assistant.rag.types import Question, Settings
from measuring.benchmark.local import DEMO_QUESTIONS, _at_once, _one, _summary


def measure_endpoint(
    *,
    pipeline: Pipeline,
    settings: Settings,
    levels: Sequence[int],
    runs: int,
    progress: Callable[[str], None],
    questions: Sequence[tuple[str, str]] = DEMO_QUESTIONS,
    asked_per_run: int = 6,
) -> dict[str, Any]:
    generator: Any = pipeline.generator
    endpoint = generator.endpoint
    report: dict[str, Any] = {
        "generator": generator.id,
        "server": endpoint.chat_url,
        "max_tokens": endpoint.max_tokens,
        "passages": pipeline.max_passages,
    }
    drawn = iter(itertools.cycle([Question(text, topic) for text, topic in questions]))
    progress("warming up (the rules enter the server's prompt cache)")
    _one(pipeline, Question("How do I warm up?", "Warm-up"), settings)
    singles = []
    for run in range(runs):
        singles += [_one(pipeline, next(drawn), settings) for _ in range(asked_per_run)]
        progress(f"one at a time: run {run + 1} of {runs}")
    report["single"] = _summary([singles], kind="openai")
    report["levels"] = {}
    for level in levels:
        per_run = [
            _at_once(pipeline, [next(drawn) for _ in range(level)], settings) for _ in range(runs)
        ]
        report["levels"][str(level)] = _summary(per_run, kind="openai")
        progress(f"{level} at once: done")
    return report


def table(measured: dict[str, Any]) -> list[str]:
    single = measured["single"]

    def cell(stats: dict[str, float] | None) -> str:
        return f"{'-':>9}{'-':>9}" if not stats else f"{stats['median']:>9.1f}{stats['p95']:>9.1f}"

    lines = [
        "",
        f"OpenAI-compatible server {measured['server']} as {measured['generator']} "
        f"({measured['passages'] or 'all kept'} passages, {measured['max_tokens']} tokens at most)",
        f"{'at once':<10}{'first tok s':>18}{'whole answer s':>18}{'tok/s':>9}{'fell back':>11}",
        f"{'':<10}{'median':>9}{'p95':>9}{'median':>9}{'p95':>9}",
    ]
    rows = [("1 (seq.)", single), *measured["levels"].items()]
    for level, figures in rows:
        lines.append(
            f"{level:<10}{cell(figures['first_token_s'])}{cell(figures['answer_s'])}"
            f"{(figures['tokens_per_s'] or {}).get('median', 0):>9.1f}{figures['fell_back']:>11}"
        )
    return lines
