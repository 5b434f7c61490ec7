"""`bench --only load`: first grounded words and whole answers, idle and under load.

Each generator (the quoting answerer, the local model) answers demo questions through the real
pipeline, 1 and N visitors at once, first on an idle machine and then with two CPU-bound
processes running beside it (started and stopped here), as on a busy two-core server. Timed
from the question's start, as a visitor waits: the first grounded words (the first text part:
the quote with a model that writes) and the whole answer (the written answer's end, or when
the quote stood instead), and how each written answer ended.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from assistant.rag.answering import Pipeline
from assistant.rag.types import Outcome, Question, Settings
from measuring.benchmark.local import DEMO_QUESTIONS, all_at_once

HOGS = 2
_SPIN = "while True: pass"


@contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """`count` processes that each keep a core busy, for as long as the block runs."""
    hogs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(count)]  # noqa: S603
    try:
        time.sleep(1.0)  # let the scheduler see them
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def one(pipeline: Pipeline, question: Question, settings: Settings) -> dict[str, Any]:
    started = time.perf_counter()
    answer = pipeline.answer(question, settings)
    first: float | None = None
    ended = Outcome(answer.generator_id)
    for part in answer.parts:
        if isinstance(part, Outcome):
            ended = part
        elif isinstance(part, str) and first is None:
            first = time.perf_counter() - started
    return {
        "first_words_s": first,
        "answer_s": time.perf_counter() - started,
        "written": ended.written,
        "generator": ended.generator,
    }


def at_once(
    pipeline: Pipeline, questions: Sequence[Question], settings: Settings
) -> list[dict[str, Any]]:
    return all_at_once(lambda question: one(pipeline, question, settings), questions)


def measure_load(
    *,
    pipelines: Mapping[str, Pipeline],
    settings: Settings,
    levels: Sequence[int],
    runs: int,
    progress: Callable[[str], None],
    hogs: int = HOGS,
    questions: Sequence[tuple[str, str]] = DEMO_QUESTIONS,
) -> dict[str, Any]:
    drawn = itertools.cycle([Question(text, topic) for text, topic in questions])
    rows: list[dict[str, Any]] = []
    for name, pipeline in pipelines.items():
        one(pipeline, Question("How do I warm up?", "Warm-up"), settings)  # models loaded
        for load in ("idle", f"{hogs} CPU hogs"):
            with cpu_hogs(hogs if load != "idle" else 0):
                for level in levels:
                    outcomes = []
                    for _ in range(runs):
                        outcomes += at_once(pipeline, [next(drawn) for _ in range(level)], settings)
                    rows.append(_row(name, load, level, outcomes))
                    progress(f"{name}, {load}, {level} at once: done")
    return {"hogs": hogs, "runs": runs, "rows": rows}


def _row(name: str, load: str, level: int, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    firsts = sorted(o["first_words_s"] for o in outcomes if o["first_words_s"] is not None)
    wholes = sorted(o["answer_s"] for o in outcomes)
    ends: dict[str, int] = {}
    for outcome in outcomes:
        if outcome["written"]:
            ends[outcome["written"]] = ends.get(outcome["written"], 0) + 1
    return {
        "generator": name,
        "load": load,
        "visitors": level,
        "answers": len(outcomes),
        "first_words_median_s": _median(firsts),
        "first_words_max_s": round(firsts[-1], 2) if firsts else None,
        "answer_median_s": _median(wholes),
        "answer_max_s": round(wholes[-1], 2) if wholes else None,
        "written": ends,
    }


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    middle = len(values) // 2
    value = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return round(value, 2)


def table(report: Mapping[str, Any]) -> list[str]:
    lines = [
        "",
        f"Under load ({report['runs']} run(s); first grounded words and whole answer, seconds)",
        "| generator | load | visitors | first words median / max | whole answer median / max "
        "| written answers |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in report["rows"]:
        ends = ", ".join(f"{k} {v}" for k, v in sorted(row["written"].items())) or "-"
        lines.append(
            f"| {row['generator']} | {row['load']} | {row['visitors']} | "
            f"{row['first_words_median_s']} / {row['first_words_max_s']} | "
            f"{row['answer_median_s']} / {row['answer_max_s']} | {ends} |"
        )
    return lines
