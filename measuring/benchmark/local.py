"""`bench --only local`: the local model answering demo questions through the real pipeline.

The demo help centre is indexed (as `evaluate` indexes a corpus) and each question goes the
whole way: retrieval, the gate, the prompt with the passages the local model is given, and the
model. Timed from the question's start, as a visitor waits: the first token and the whole
answer; and llama.cpp's own figures for one answer at a time (prompt and answer tokens a
second, prompt tokens read from its cache). Then N questions at once, which the model answers
one after another, so the N-th waits for the others.
"""

from __future__ import annotations

import itertools
import resource
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from assistant.rag.answering import Pipeline
from assistant.rag.types import Outcome, Question, Settings, Waiting
from measuring.benchmark.stats import over_runs

#: Questions a visitor of the demo product asks, each on its page's topic; each is asked once
#: per measurement, so no answer is read from the model's cache of an earlier identical prompt.
DEMO_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("How do I get my money back?", "Billing"),
    ("How long does an export take?", "Exporting your data"),
    ("How do I install the command-line tool?", "Acme CLI"),
    ("When does a retrieval token expire?", "Retrieval endpoint tokens"),
    ("How do I turn on two-factor authentication?", "Account"),
    ("How do I rotate an API key?", "API keys"),
    ("How do I reset my password?", "Account"),
    ("What are the rate limits of the API?", "API keys"),
    ("How do I log in from the command line?", "Acme CLI"),
    ("Which formats can I export to?", "Exporting your data"),
    ("How do I change my plan?", "Billing"),
    ("How do I return a hardware device?", "Refunds"),
    ("How long does delivery take?", "Shipping"),
    ("How do I track my order?", "Shipping"),
    ("What cannot be refunded?", "Refunds"),
    ("How do I revoke a retrieval token?", "Retrieval endpoint tokens"),
    ("How do I create an API key?", "API keys"),
    ("What happens when I delete my account?", "Account"),
    ("Who pays customs duties?", "Shipping"),
    ("How can I pay my invoices?", "Billing"),
    ("How do I keep my API keys safe?", "API keys"),
    ("What do I do if my parcel arrived damaged?", "Shipping"),
    ("How do I export data with the CLI?", "Acme CLI"),
    ("How do I generate a retrieval endpoint token?", "Retrieval endpoint tokens"),
)


def _one(pipeline: Pipeline, question: Question, settings: Settings) -> dict[str, Any]:
    started = time.perf_counter()
    answer = pipeline.answer(question, settings)
    first = None
    tokens = waited = 0
    generator = answer.generator_id
    for part in answer.parts:
        if isinstance(part, Waiting):
            waited = max(waited, part.ahead)
            continue
        if isinstance(part, Outcome):
            generator = part.generator
            continue
        if first is None:
            first = time.perf_counter() - started
        tokens += 1
    total = time.perf_counter() - started
    outcome: dict[str, Any] = {
        "first_token_s": first,
        "answer_s": total,
        "tokens": tokens,
        "most_ahead": waited,
        "generator": generator,
        "passages": len(answer.prompt.passages) if answer.prompt else 0,
    }
    if first is not None and tokens > 1 and total > first:
        outcome["tokens_per_s"] = (tokens - 1) / (total - first)
    return outcome


def all_at_once(
    ask: Callable[[Question], dict[str, Any]], questions: Sequence[Question]
) -> list[dict[str, Any]]:
    """Each question asked on a thread of its own, all released together; outcomes in order."""
    outcomes: list[dict[str, Any]] = [{} for _ in questions]
    start = threading.Barrier(len(questions))

    def run(number: int) -> None:
        start.wait()
        outcomes[number] = ask(questions[number])

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(questions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def _at_once(
    pipeline: Pipeline, questions: Sequence[Question], settings: Settings
) -> list[dict[str, Any]]:
    return all_at_once(lambda question: _one(pipeline, question, settings), questions)


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def measure_local(
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
    rss_before = _rss_mb()
    started = time.perf_counter()
    generator.model.server()
    report: dict[str, Any] = {
        "generator": generator.id,
        "model": str(generator.settings.path),
        "threads": generator.settings.threads,
        "batch": generator.settings.batch,
        "passages": pipeline.max_passages,
        "load_s": round(time.perf_counter() - started, 2),
        "rss_before_mb": rss_before,
    }
    asked = [Question(text, topic) for text, topic in questions]
    drawn = iter(itertools.cycle(asked))
    progress("warming up (the rules enter the prompt cache)")
    _one(pipeline, Question("How do I warm up?", "Warm-up"), settings)
    report["rss_after_mb"] = _rss_mb()

    singles: list[dict[str, Any]] = []
    for run in range(runs):
        for _ in range(asked_per_run):
            outcome = _one(pipeline, next(drawn), settings)
            outcome["llama"] = dict(generator.last_timings)
            singles.append(outcome)
        progress(f"one at a time: run {run + 1} of {runs}")
    report["single"] = _summary([singles])
    llama = [o["llama"] for o in singles if o.get("llama")]
    for key in ("prompt_n", "cache_n", "prompt_per_second", "predicted_n", "predicted_per_second"):
        values = [float(t[key]) for t in llama if key in t]
        report["single"][key] = round(statistics.median(values), 1) if values else None

    report["levels"] = {}
    for level in levels:
        per_run = []
        for _ in range(runs):
            per_run.append(_at_once(pipeline, [next(drawn) for _ in range(level)], settings))
        report["levels"][str(level)] = _summary(per_run)
        progress(f"{level} at once: done")
    return report


def _summary(per_run: Sequence[Sequence[dict[str, Any]]], kind: str = "local") -> dict[str, Any]:
    def figures(key: str) -> dict[str, float] | None:
        return over_runs([[o[key] for o in run if o.get(key) is not None] for run in per_run])

    outcomes = [o for run in per_run for o in run]
    return {
        "first_token_s": figures("first_token_s"),
        "answer_s": figures("answer_s"),
        "tokens_per_s": figures("tokens_per_s"),
        "tokens": figures("tokens"),
        "answers": len(outcomes),
        "fell_back": sum(1 for o in outcomes if not str(o["generator"]).startswith(f"{kind}:")),
        "refused_before_model": sum(1 for o in outcomes if not o["passages"]),
    }


def table(local: dict[str, Any]) -> list[str]:
    single = local["single"]

    def cell(stats: dict[str, float] | None) -> str:
        return f"{'-':>9}{'-':>9}" if not stats else f"{stats['median']:>9.1f}{stats['p95']:>9.1f}"

    lines = [
        "",
        f"Local model {local['generator']} ({local['threads']} threads, batch {local['batch']}, "
        f"{local['passages']} passages at most): loaded in {local['load_s']} s, RSS "
        f"{local['rss_before_mb']} -> {local['rss_after_mb']} MB",
        f"one at a time: prompt {single['prompt_n']} tokens ({single['cache_n']} from the cache) "
        f"read at {single['prompt_per_second']} tokens/s, answer {single['predicted_n']} tokens "
        f"at {single['predicted_per_second']} tokens/s",
        f"{'at once':<10}{'first tok s':>18}{'whole answer s':>18}{'tok/s':>9}{'fell back':>11}",
        f"{'':<10}{'median':>9}{'p95':>9}{'median':>9}{'p95':>9}",
        f"{'1 (seq.)':<10}{cell(single['first_token_s'])}{cell(single['answer_s'])}"
        f"{(single['tokens_per_s'] or {}).get('median', 0):>9.1f}{single['fell_back']:>11}",
    ]
    for level, figures in local["levels"].items():
        lines.append(
            f"{level:<10}{cell(figures['first_token_s'])}{cell(figures['answer_s'])}"
            f"{(figures['tokens_per_s'] or {}).get('median', 0):>9.1f}{figures['fell_back']:>11}"
        )
    return lines
