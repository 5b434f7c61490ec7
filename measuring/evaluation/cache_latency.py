"""How much the repeated-question cache saves: retrieval (search + rerank + gate) timed
without the cache, as the sandbox runs it, and for a repeated question, as users get it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from assistant.ask.intake import settings_for
from assistant.models import Project
from assistant.rag.types import Question
from assistant.wiring import runtime
from ingestion.selectors import chunks_by_vector_id, passages_in_scope
from measuring.evaluation.metrics import median_p95


def retrieval_cache_latency(
    *, project: Project, questions: Sequence[tuple[str, str]], rounds: int = 3
) -> dict[str, Any]:
    """`questions` are (topic, question) pairs. Each is retrieved `rounds` times without the
    cache, then asked once to fill the cache and `rounds` times more; the repeated time
    includes reading the project's index version. Milliseconds, median and p95."""
    settings = settings_for(project)
    where = {"project_id": project.id}
    asked = [Question(text, topic) for topic, text in questions]
    plain = runtime.retriever(chunks=chunks_by_vector_id, passages=passages_in_scope)
    plain.retrieve(asked[0], settings, where)  # load the models outside the timings
    uncached: list[float] = []
    repeated: list[float] = []
    hits = 0
    for question in asked:
        for _ in range(rounds):
            started = time.perf_counter()
            runtime.retriever(chunks=chunks_by_vector_id, passages=passages_in_scope).retrieve(
                question, settings, where
            )
            uncached.append((time.perf_counter() - started) * 1000)
        runtime.answer_retriever(
            project_id=project.id, chunks=chunks_by_vector_id, passages=passages_in_scope
        ).retrieve(question, settings, where)
        for _ in range(rounds):
            started = time.perf_counter()
            retrieval = runtime.answer_retriever(
                project_id=project.id, chunks=chunks_by_vector_id, passages=passages_in_scope
            ).retrieve(question, settings, where)
            repeated.append((time.perf_counter() - started) * 1000)
            hits += int(retrieval.timings_ms.get("cache_hit", 0))
    return {
        "questions": len(asked),
        "rounds": rounds,
        "uncached_ms": median_p95(uncached),
        "repeated_ms": median_p95(repeated),
        "hit_rate": round(hits / len(repeated), 3) if repeated else 0.0,
    }
