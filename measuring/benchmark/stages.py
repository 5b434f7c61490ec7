"""Latency per stage of one answer, through the real `Pipeline`, next to the raw floor.

For each question, the pipeline runs first (retrieve, rerank, gate, the answerability check where
the product runs it, prompt, generate), then the
same inputs go through the bare libraries (floor.py) at once, so both see the same moment of a
noisy machine. Stage names come from the retriever's own timings, so a stage added later
(lexical search, say) shows up without a change here; `gate_prompt` is whatever the pipeline
spends outside its timed stages before the first token can be asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from assistant.rag.answering import Pipeline
from assistant.rag.reading.scoring import passage_text
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Question, Retrieval, Settings
from measuring.benchmark.floor import RawFloor
from measuring.benchmark.stats import over_runs, ratio

#: Stages with a floor, and the retriever timing each one is compared with.
FLOORED = {"embed": "embed_ms", "search": "search_ms", "rerank": "rerank_ms"}
FIXED_STAGES = (
    "embed", "search", "lookup", "rerank", "rerank_per_chunk", "answerability", "gate_prompt",
    "retrieve_rerank_gate", "retrieve_to_verdict", "first_token", "whole_answer",
)  # fmt: skip


class _TimedRetriever:
    """Records the wall time of each `retrieve` the pipeline makes."""

    def __init__(self, inner: Retriever) -> None:
        self.inner = inner
        self.last_ms = 0.0

    def retrieve(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None = None
    ) -> Retrieval:
        started = time.perf_counter()
        try:
            return self.inner.retrieve(question, settings, where)
        finally:
            self.last_ms = (time.perf_counter() - started) * 1000


def measure_stages(
    *,
    retriever: Retriever,
    pipeline_for: Callable[[Retriever], Pipeline],
    floor: RawFloor,
    questions: Sequence[Question],
    settings: Settings,
    runs: int,
    progress: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """`pipeline_for(retriever)` builds the answer path as the product does (the answerability
    check included where the product runs it) around the timed retriever."""
    timed = _TimedRetriever(retriever)
    pipeline = pipeline_for(cast(Retriever, timed))
    per_run: list[dict[str, list[float]]] = []
    refused = 0
    # Model sessions load on first use; that is start-up, not latency.
    _ask(pipeline, timed, questions[0], settings)
    _floor(floor, retriever, questions[0], retriever.retrieve(questions[0], settings), settings)
    for run in range(runs):
        samples: dict[str, list[float]] = {}
        for question in questions:
            measured, retrieval = _ask(pipeline, timed, question, settings)
            if run == 0 and not retrieval.kept:
                refused += 1
            for stage, ms in measured.items():
                samples.setdefault(stage, []).append(ms)
            for stage, ms in _floor(floor, retriever, question, retrieval, settings).items():
                samples.setdefault(f"floor:{stage}", []).append(ms)
            progress()
        per_run.append(samples)

    def summary(stage: str) -> dict[str, float] | None:
        return over_runs([samples.get(stage, []) for samples in per_run])

    names = sorted({s for samples in per_run for s in samples if not s.startswith("floor:")})
    latency = {stage: summary(stage) for stage in [*FIXED_STAGES, *names]}
    floors = {stage: summary(f"floor:{stage}") for stage in [*FLOORED, "retrieve_rerank_gate"]}
    ratios = {
        stage: ratio((latency[stage] or {}).get("median"), (floors[stage] or {}).get("median"))
        for stage in floors
    }
    return {
        "questions": len(questions),
        "runs": runs,
        "refused": refused,
        "latency_ms": latency,
        "floor_ms": floors,
        "ratio_to_floor": ratios,
    }


def _ask(
    pipeline: Pipeline, timed: _TimedRetriever, question: Question, settings: Settings
) -> tuple[dict[str, float], Retrieval]:
    started = time.perf_counter()
    answer = pipeline.answer(question, settings)
    ready = time.perf_counter()
    first = end = ready
    said = False
    for part in answer.parts:
        if not isinstance(part, str):
            continue
        end = time.perf_counter()
        if not said:
            first, said = end, True
    retrieval = answer.retrieval
    stages = {
        k.removesuffix("_ms"): v for k, v in retrieval.timings_ms.items() if k.endswith("_ms")
    }
    retrieve_ms = timed.last_ms
    # The check runs after retrieval (it is in the same timings dict, but not inside retrieve).
    verdict_ms = stages.get("answerability", 0.0)
    outside_stages = retrieve_ms - sum(v for k, v in stages.items() if k != "answerability")
    before_first = (ready - started) * 1000 - retrieve_ms - verdict_ms
    reranked = sum(1 for c in retrieval.candidates if c.relevance is not None)
    if reranked and retrieval.readings and "rerank" in stages:
        # The cost of one more chunk read once by the cross-encoder: the project's *Reranked*
        # knob (each chunk is read with every reading: with and without the page's topic, and
        # the request alone when the question tells a situation first).
        stages["rerank_per_chunk"] = stages["rerank"] / reranked / len(retrieval.readings)
    measured = {
        **stages,
        "retrieve_rerank_gate": retrieve_ms,
        # Everything before the answer is decided: the figure the latency target is set on.
        "retrieve_to_verdict": retrieve_ms + verdict_ms,
        "gate_prompt": max(0.0, outside_stages) + before_first,
        "first_token": (first - started) * 1000,
        "whole_answer": (end - started) * 1000,
    }
    return measured, retrieval


def _floor(
    floor: RawFloor,
    retriever: Retriever,
    question: Question,
    retrieval: Retrieval,
    settings: Settings,
) -> dict[str, float]:
    embedder = retriever.embedder
    searched = retrieval.searched or [retrieval.query]  # with a topic, also the bare question
    times: dict[str, float] = {}
    if floor.embed is not None:
        times["embed"] = floor.embed.time_ms([floor.embed.prepare(t) for t in searched])
    if floor.search is not None:
        depth = retriever.search_depth(settings)
        vectors = embedder.embed_queries(searched)
        times["search"] = sum(floor.search.time_ms(vector, depth) for vector in vectors)
    reranked = [passage_text(c.chunk) for c in retrieval.candidates if c.relevance is not None]
    if floor.rerank is not None and reranked:
        # Each reading the retriever made (Retrieval.readings), of the chunks it scored.
        times["rerank"] = sum(
            floor.rerank.time_ms(floor.rerank.prepare(text, reranked))
            for text in retrieval.readings
        )
    if len(times) == len(FLOORED):
        times["retrieve_rerank_gate"] = sum(times.values())
    return times
