"""Run inside a throwaway data folder (see workdir.py) by `bench`:

    python -m measuring.benchmark.child '<arguments as JSON>' <report.json>

It indexes the corpus into a project through the product's ingestion path (a JSONL files
source and `source_sync`, as `ingest_jsonl` does), times that and an unchanged re-sync, and
asks questions twice through `services.ask_stream` to time the repeated question. The project
is left in place, with an allowed origin, for the ASGI server that `bench` starts next.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

PROJECT = "bench"


def main(argv: list[str]) -> None:
    import django

    django.setup()
    from django.core.management import call_command

    arguments = json.loads(argv[1])
    call_command("migrate", verbosity=0, interactive=False)
    project, source = _project(
        Path(arguments["corpus"]), arguments["origin"], arguments.get("candidates")
    )
    report: dict[str, Any] = {"project_key": project.public_key}
    report["ingest"] = _ingest(source)
    questions = [tuple(q) for q in arguments["questions"]]
    if arguments.get("cache") and questions:
        report["cache"] = _repeat(project, source, questions, arguments["runs"])
    if arguments.get("recall"):
        report["recall"] = _recall(project)
    Path(argv[2]).write_text(json.dumps(report))


def _recall(project: Any) -> dict[str, Any]:
    """The demo help centre (22 chunks) joins the corpus's project as a source of its own; then
    every source must still find its own chunks (measuring/benchmark/recall.py)."""
    from assistant.demo import demo_export
    from ingestion.models import Source
    from measuring.benchmark.recall import source_recall

    small, _ = Source.objects.get_or_create(
        project=project, name="help centre",
        defaults={"kind": Source.Kind.FILES, "config": {"jsonl": str(demo_export())}},
    )  # fmt: skip
    _sync(small)
    return source_recall(project_id=project.pk)


def _project(corpus: Path, origin: str, candidates: int | None) -> tuple[Any, Any]:
    from assistant.models import Project
    from ingestion.models import Source

    project, _ = Project.objects.get_or_create(name=PROJECT)
    project.allowed_origins = [origin]
    if candidates:
        project.num_candidates = candidates
    project.full_clean()
    project.save()
    source, _ = Source.objects.get_or_create(
        project=project, name=corpus.name,
        defaults={"kind": Source.Kind.FILES, "config": {"jsonl": str(corpus)}},
    )  # fmt: skip
    return project, source


def _sync(source: Any) -> tuple[Any, float]:
    from ingestion.models import SyncRun
    from ingestion.sync import source_sync

    started = time.perf_counter()
    run = source_sync(source=source, trigger="bench")
    elapsed = time.perf_counter() - started
    if run.status == SyncRun.Status.FAILED:
        raise RuntimeError(f"sync failed: {run.message}")
    return run, elapsed


def _ingest(source: Any) -> dict[str, Any]:
    from assistant.wiring import runtime

    runtime.embedder().embed_documents(["warm up"])  # model loading is start-up, not ingestion
    first, first_s = _sync(source)
    again, again_s = _sync(source)
    return {
        "documents": first.seen,
        "chunks": first.chunks_embedded,
        "seconds": round(first_s, 2),
        # A folder kept from an earlier bench holds the corpus already: nothing to time.
        "chunks_per_s": round(first.chunks_embedded / first_s, 2)
        if first.chunks_embedded
        else None,
        "documents_per_s": round(first.added / first_s, 2) if first.added else None,
        "resync_s": round(again_s, 2),
        "resync_unchanged": again.unchanged,
        "resync_embedded": again.chunks_embedded,
    }


def _ask(project: Any, question: str, topic: str) -> tuple[float, float, float | None]:
    """(ms to the sources event, i.e. retrieve + rerank + gate + prompt; ms to done; cache hit
    as the pipeline reports it in timings_ms, None when it reports none)."""
    from assistant.ask.intake import let_in
    from assistant.ask.services import ask_stream

    started = time.perf_counter()
    to_sources = 0.0
    hit = None
    for event in ask_stream(let_in(project, question=question, topic=topic)):
        if event.kind == "sources":
            to_sources = (time.perf_counter() - started) * 1000
        elif event.kind == "done":
            hit = event.data["timings_ms"].get("cache_hit")
        elif event.kind == "error":
            raise RuntimeError(f"{question!r}: {event.data}")
    return to_sources, (time.perf_counter() - started) * 1000, hit


def _repeat(
    project: Any, source: Any, questions: list[tuple[str, str]], runs: int
) -> dict[str, Any]:
    from measuring.benchmark.stats import over_runs, ratio

    _ask(project, "warm up the reranker", "")
    first: list[float] = []
    first_whole: list[float] = []
    repeat_runs: list[list[float]] = []
    repeat_whole: list[float] = []
    hits: list[float] = []
    for question, topic in questions:
        retrieve_ms, whole_ms, _ = _ask(project, question, topic)
        first.append(retrieve_ms)
        first_whole.append(whole_ms)
    for _ in range(runs):
        times = []
        for question, topic in questions:
            # Another spelling of the same question: the key is the normalised question.
            retrieve_ms, whole_ms, hit = _ask(project, f"  {question.upper()} ", topic)
            times.append(retrieve_ms)
            repeat_whole.append(whole_ms)
            if hit is not None:
                hits.append(hit)
        repeat_runs.append(times)
    _sync(source)  # unchanged; a sync of any kind may invalidate the cache
    after_sync = [_ask(project, q, t)[2] for q, t in questions]
    first_stats, repeat_stats = over_runs([first]), over_runs(repeat_runs)
    return {
        "questions": len(questions),
        "first_ms": first_stats,
        "repeat_ms": repeat_stats,
        "first_whole_answer_ms": over_runs([first_whole]),
        "repeat_whole_answer_ms": over_runs([repeat_whole]),
        "repeat_to_first": ratio(
            (repeat_stats or {}).get("median"), (first_stats or {}).get("median")
        ),
        "hit_rate": round(statistics.mean(hits), 3) if hits else None,
        "hit_rate_after_sync": (
            round(statistics.mean(h for h in after_sync if h is not None), 3)
            if any(h is not None for h in after_sync)
            else None
        ),
    }


if __name__ == "__main__":
    main(sys.argv)
