"""Run every question through the real retrieval path (query, vector search, rerank, gate)
and score it against the gold sections."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from assistant.rag.ports import Retrieves
from assistant.rag.types import Question, Retrieval, Settings, Turn
from measuring.evaluation.dataset import Query, known_areas, topic_for
from measuring.evaluation.index import EvalIndex
from measuring.evaluation.limits import GoldReading, Score, limits
from measuring.evaluation.metrics import (
    SHARES,
    dedupe,
    distribution,
    hit_at,
    median_p95,
    mrr_at,
    ndcg_at,
    recall_at,
    wilson,
)

#: Goes on from a question's retrieval to the answer (answers.answer_outcome); its outcome keys
#: join the question's, its `answered`/`refused` replacing the gate's. It also returns the
#: retrieval the answer was made from: for a follow-up, the answer may come from the form
#: joined to the previous question (Retrieval.alternative), and the ranking is scored on it.
#: Answers one question from its retrieval; the last argument retrieves for the question read
#: a second time (Pipeline.respond's `again`).
AnswerStep = Callable[
    [Query, Question, Retrieval, Callable[[Question], Retrieval]], tuple[dict[str, Any], Retrieval]
]


@dataclass(frozen=True, slots=True)
class RunConfig:
    topic: str = "auto"  # auto | none | other | given (dataset.topic_for)
    rerank: bool = True
    threshold: float = 0.5
    num_candidates: int = 20
    rerank_top: int = 8
    max_kept: int = 5


def evaluate(
    *,
    index: EvalIndex,
    retriever: Retrieves,
    queries: Sequence[Query],
    config: RunConfig,
    progress: Callable[[int, int], None] | None = None,
    answer: AnswerStep | None = None,
    reader: Score | None = None,
) -> dict[str, Any]:
    """Asks every question and scores it. With `reader` (the cross-encoder's `score`), an
    answerable question whose gold section was not kept has it read too, and the report
    counts where such misses stop (limits.py)."""
    settings = Settings(
        threshold=config.threshold,
        num_candidates=config.num_candidates,
        rerank_top=config.rerank_top,
        max_kept=config.max_kept,
        rerank=config.rerank,
    )
    areas = known_areas(list(queries))
    tally = _Tally()
    gold = GoldReading(index, reader) if reader is not None else None
    for number, query in enumerate(queries, start=1):
        question = Question(
            query.question, topic_for(query, areas, config.topic), history=history_of(query)
        )
        retrieval = _timed_retrieval(retriever, question, settings, tally.stages)
        answered: dict[str, Any] = {}
        if answer is not None:
            answered, retrieval = answer(
                query, question, retrieval, lambda asked: retriever.retrieve(asked, settings)
            )
        outcome = _outcome(query, retrieval, index=index, rerank=config.rerank, tally=tally)
        outcome.update(answered)
        if gold is not None and query.answerable and query.relevant_ids:
            outcome.update(gold.outcome(query, retrieval))
        tally.outcomes.append(outcome)
        if progress:
            progress(number, len(queries))
    return _report(tally, queries=queries, index=index, config=config)


@dataclass(slots=True)
class _Tally:
    """What the run gathers question by question, for the report."""

    graded: dict[str, list[float]] = field(
        default_factory=lambda: {k: [] for k in ("recall@5", "mrr@10", "ndcg@10")}
    )
    best: dict[str, list[float]] = field(
        default_factory=lambda: {"answerable": [], "unanswerable": []}
    )
    stages: dict[str, list[float]] = field(default_factory=dict)
    # One per question, with its yes/no outcomes (SHARES): the shares are read from these,
    # and `--baseline` compares them question by question.
    outcomes: list[dict[str, Any]] = field(default_factory=list)


def _timed_retrieval(
    retriever: Retrieves, question: Question, settings: Settings, stages: dict[str, list[float]]
) -> Retrieval:
    """Retrieves for the question, adding each stage's time and the total to `stages`."""
    started = time.perf_counter()
    retrieval = retriever.retrieve(question, settings)
    total = (time.perf_counter() - started) * 1000
    for stage, ms in {**retrieval.timings_ms, "total_ms": total}.items():
        stages.setdefault(stage, []).append(ms)
    return retrieval


def _outcome(
    query: Query, retrieval: Retrieval, *, index: EvalIndex, rerank: bool, tally: _Tally
) -> dict[str, Any]:
    """One question's outcomes, from the retrieval its answer was made from."""
    kept_any = bool(retrieval.kept) if rerank else None
    best_relevance = retrieval.best_relevance
    group = "answerable" if query.answerable else "unanswerable"
    if best_relevance is not None:
        tally.best[group].append(best_relevance)
    outcome: dict[str, Any] = {"id": query.id, "answerable": query.answerable,
                               "best_relevance": best_relevance}  # fmt: skip
    if query.kind:
        outcome["kind"] = query.kind
        outcome["query_form"] = retrieval.query_form
    if query.answerable:
        outcome.update(_ranking(query, retrieval, index=index, graded=tally.graded))
        if kept_any is not None:
            outcome["answered"] = kept_any
    elif kept_any is not None:
        outcome["refused"] = not kept_any
    return outcome


def _ranking(
    query: Query, retrieval: Retrieval, *, index: EvalIndex, graded: dict[str, list[float]]
) -> dict[str, Any]:
    """How an answerable question's gold sections rank: its hits, and its graded scores added
    to `graded`."""
    chunks = [index.chunks[c.chunk.id] for c in retrieval.candidates]
    sections = dedupe([c.section_id for c in chunks])
    relevant = query.relevant_ids
    ranking: dict[str, Any] = {
        "hit@1": bool(hit_at(sections, relevant, 1)),
        "hit@5": bool(hit_at(sections, relevant, 5)),
    }
    graded["recall@5"].append(recall_at(sections, relevant, 5))
    graded["mrr@10"].append(mrr_at(sections, relevant, 10))
    graded["ndcg@10"].append(ndcg_at(sections, relevant, 10))
    # The page kinds the top five sections come from ("" a guide, "reference",
    # "changelog"): how much the reference and the changelog crowd the guides.
    kind_of: dict[str, str] = {}
    for c in chunks:
        kind_of.setdefault(c.section_id, c.chunk.kind)
    ranking["top5_kinds"] = [kind_of[section] for section in sections[:5]]
    if query.gold_page:
        ranking["page_hit@5"] = query.gold_page in dedupe([c.page for c in chunks])[:5]
    return ranking


def _report(
    tally: _Tally, *, queries: Sequence[Query], index: EvalIndex, config: RunConfig
) -> dict[str, Any]:
    outcomes = tally.outcomes
    shares = {k: [float(o[k]) for o in outcomes if k in o] for k in SHARES}
    report: dict[str, Any] = {k: _avg(v) for k, v in (shares | tally.graded).items()}
    report["n_answerable"] = sum(1 for q in queries if q.answerable)
    report["n_unanswerable"] = sum(1 for q in queries if not q.answerable)
    report["ci95"] = {k: wilson(int(sum(v)), len(v)) for k, v in shares.items() if v}
    report["best_relevance"] = {g: distribution(v) for g, v in tally.best.items()}
    report["latency_ms"] = {stage: median_p95(v) for stage, v in tally.stages.items()}
    report["config"] = {
        "topic": config.topic, "rerank": config.rerank, "threshold": config.threshold,
        "num_candidates": config.num_candidates, "rerank_top": config.rerank_top,
        "index": index.key,
        "chunks": len(index.chunks),
    }  # fmt: skip
    kinds = [kind for o in outcomes for kind in o.get("top5_kinds", [])]
    report["top5_kinds"] = {
        kind or "guide": round(kinds.count(kind) / len(kinds), 4) for kind in sorted(set(kinds))
    }
    report["per_query"] = outcomes
    if any("gold_kept" in o for o in outcomes):
        report["limits"] = limits(outcomes, config.threshold)
    if any("kind" in o for o in outcomes):
        report["by_kind"] = by_kind(outcomes)
    return report


def history_of(query: Query) -> tuple[Turn, ...]:
    """The earlier questions as the widget sends them: user turns of the conversation. (The
    retrieval of a follow-up reads only the user's turns; the earlier answers would reach only
    an LLM's prompt.)"""
    return tuple(Turn("user", text) for text in query.history)


def by_kind(outcomes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The shares that apply, per kind of conversation: {kind: {n, answered, refused,
    page_hit@5, hit@5}}."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for outcome in outcomes:
        kinds.setdefault(outcome.get("kind", ""), []).append(outcome)
    report: dict[str, dict[str, Any]] = {}
    for kind, group in sorted(kinds.items()):
        row: dict[str, Any] = {"n": len(group)}
        for metric in ("answered", "refused", "page_hit@5", "hit@5", "key_facts_hit"):
            values = [float(o[metric]) for o in group if metric in o]
            if values:
                row[metric] = _avg(values)
        report[kind] = row
    return report


def _avg(values: list[float]) -> float | None:
    return round(mean(values), 4) if values else None
