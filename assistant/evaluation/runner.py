"""Run every question through the real retrieval path (query, vector search, rerank, gate)
and score it against the gold sections."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any

from assistant.evaluation.dataset import Query, known_areas, topic_for
from assistant.evaluation.index import EvalIndex
from assistant.evaluation.metrics import (
    dedupe,
    distribution,
    hit_at,
    median_p95,
    mrr_at,
    ndcg_at,
    recall_at,
    wilson,
)
from assistant.rag.retrieval import Retriever
from assistant.rag.types import Question, Settings


@dataclass(frozen=True, slots=True)
class RunConfig:
    topic: str = "auto"  # auto | none
    rerank: bool = True
    threshold: float = 0.5
    num_candidates: int = 20
    rerank_top: int = 8
    max_kept: int = 5


def evaluate(
    *,
    index: EvalIndex,
    retriever: Retriever,
    queries: Sequence[Query],
    config: RunConfig,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    settings = Settings(
        threshold=config.threshold,
        num_candidates=config.num_candidates,
        rerank_top=config.rerank_top,
        max_kept=config.max_kept,
        rerank=config.rerank,
    )
    areas = known_areas(list(queries))
    ranking_metrics = ("hit@1", "hit@5", "recall@5", "mrr@10", "ndcg@10")
    scores: dict[str, list[float]] = {k: [] for k in ranking_metrics}
    page_hits: list[float] = []
    answered: list[float] = []
    refused: list[float] = []
    best: dict[str, list[float]] = {"answerable": [], "unanswerable": []}
    stages: dict[str, list[float]] = {}
    outcomes: list[dict[str, Any]] = []  # one per question, for paired comparisons

    for number, query in enumerate(queries, start=1):
        question = Question(query.question, topic_for(query, areas, config.topic))
        started = time.perf_counter()
        retrieval = retriever.retrieve(question, settings)
        total = (time.perf_counter() - started) * 1000
        for stage, ms in {**retrieval.timings_ms, "total_ms": total}.items():
            stages.setdefault(stage, []).append(ms)

        kept_any = bool(retrieval.kept) if config.rerank else None
        best_relevance = retrieval.best_relevance
        group = "answerable" if query.answerable else "unanswerable"
        if best_relevance is not None:
            best[group].append(best_relevance)
        outcome: dict[str, Any] = {"id": query.id, "answerable": query.answerable,
                                   "best_relevance": best_relevance}  # fmt: skip

        if query.answerable:
            chunks = [index.chunks[c.chunk.id] for c in retrieval.candidates]
            sections = dedupe([c.section_id for c in chunks])
            relevant = query.relevant_ids
            scores["hit@1"].append(hit_at(sections, relevant, 1))
            scores["hit@5"].append(hit_at(sections, relevant, 5))
            scores["recall@5"].append(recall_at(sections, relevant, 5))
            scores["mrr@10"].append(mrr_at(sections, relevant, 10))
            scores["ndcg@10"].append(ndcg_at(sections, relevant, 10))
            outcome["hit@1"] = bool(scores["hit@1"][-1])
            outcome["hit@5"] = bool(scores["hit@5"][-1])
            if query.gold_page:
                top_pages = dedupe([c.page for c in chunks])[:5]
                page_hits.append(float(query.gold_page in top_pages))
                outcome["page_hit@5"] = query.gold_page in top_pages
            if kept_any is not None:
                answered.append(float(kept_any))
                outcome["answered"] = kept_any
        elif kept_any is not None:
            refused.append(float(not kept_any))
            outcome["refused"] = not kept_any
        outcomes.append(outcome)
        if progress:
            progress(number, len(queries))

    report: dict[str, Any] = {k: _avg(v) for k, v in scores.items()}
    report["page_hit@5"] = _avg(page_hits)
    report["answered"] = _avg(answered)
    report["refused"] = _avg(refused)
    report["n_answerable"] = sum(1 for q in queries if q.answerable)
    report["n_unanswerable"] = sum(1 for q in queries if not q.answerable)
    shares = {"hit@1": scores["hit@1"], "hit@5": scores["hit@5"], "page_hit@5": page_hits,
              "answered": answered, "refused": refused}  # fmt: skip
    report["ci95"] = {k: wilson(int(sum(v)), len(v)) for k, v in shares.items() if v}
    report["best_relevance"] = {g: distribution(v) for g, v in best.items()}
    report["latency_ms"] = {stage: median_p95(v) for stage, v in stages.items()}
    report["config"] = {
        "topic": config.topic, "rerank": config.rerank, "threshold": config.threshold,
        "num_candidates": config.num_candidates, "rerank_top": config.rerank_top,
        "index": index.key,
        "chunks": len(index.chunks),
    }  # fmt: skip
    report["per_query"] = outcomes
    return report


def _avg(values: list[float]) -> float | None:
    return round(mean(values), 4) if values else None
