"""Paraphrase recall: how many right passages the relevance gate loses, and what a second
reading of each candidate would win back against what it lets out of scope.

For every question the real retrieval runs (as `evaluate` runs it); each candidate the
cross-encoder read is kept with its relevance, its vector similarity, whether it is a gold
section, and the cross-encoder's score under other readings:

- `bare`: the question without the page topic (the gate reads `(topic) question`);
- `keywords`: the question's content words only ("switch cheaper plan middle month"), the form
  the cross-encoder (trained on search queries) may match better for a paraphrase;
- `title`: the question against the passage's heading path alone ("Plans > Changing plans");
- and the vector similarity itself, which the search already computed.

`curve` then replays the gate with each recovery rule over a range of thresholds: the share of
answerable questions passing, of out-of-scope ones refused, and of answerable questions
refused although a gold passage was among the candidates (`lost_with_gold`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from assistant.rag.ports import Reranker
from assistant.rag.reading.scoring import passage_text
from assistant.rag.reading.words import content_words
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Question, Settings
from measuring.evaluation.dataset import Query, known_areas, topic_for
from measuring.evaluation.index import EvalIndex
from measuring.evaluation.runner import history_of

Rule = Callable[[dict[str, Any], float], bool]
THRESHOLDS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Cosine similarities (bge-small-en-v1.5) for the rule that trusts the embedding: it reads a
#: paraphrase the cross-encoder misses ("switch to a cheaper plan" / "downgrade": relevance
#: 0.00005, similarity 0.65; a poem request 0.35 against the same help centre).
SIMILARITIES = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def keyword_form(text: str) -> str:
    """The question's content words, in its order, once each."""
    words = [w for w in text.lower().replace("?", " ").split() if content_words(w)]
    return " ".join(dict.fromkeys(words))


def probe(
    *,
    index: EvalIndex,
    retriever: Retriever,
    reranker: Reranker,
    queries: Sequence[Query],
    settings: Settings,
    progress: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per question: its kind, whether answerable, and its read candidates."""
    areas = known_areas(list(queries))
    rows = []
    for query in queries:
        question = Question(
            query.question, topic_for(query, areas, "auto"), history=history_of(query)
        )
        retrieval = retriever.retrieve(question, settings)
        head = [c for c in retrieval.candidates if c.relevance is not None]
        passages = [passage_text(c.chunk) for c in head]
        bare = " ".join(query.question.split())
        forms = {
            "bare": reranker.score(bare, passages) if question.topic else None,
            "keywords": reranker.score(keyword_form(bare), passages),
            "title": reranker.score(bare, [c.chunk.title or c.chunk.text for c in head]),
        }
        candidates = []
        for number, candidate in enumerate(head):
            section = index.chunks[candidate.chunk.id].section_id
            row = {
                "relevance": candidate.relevance,
                "similarity": candidate.similarity,
                "gold": section in query.relevant_ids,
                **{
                    k: (v[number] if v is not None else candidate.relevance)
                    for k, v in forms.items()
                },
            }
            candidates.append(row)
        rows.append({"id": query.id, "kind": query.kind, "answerable": query.answerable,
                     "form": retrieval.query_form, "candidates": candidates})  # fmt: skip
        if progress:
            progress()
    return rows


def rules(threshold: float) -> dict[str, Rule]:
    """Each recovery: does this candidate pass the gate at parameter `t`? All keep what the
    gate keeps today (relevance at or above `threshold`)."""

    def gate(c: dict[str, Any]) -> bool:
        return float(c["relevance"]) >= threshold

    return {
        "gate threshold": lambda c, t: float(c["relevance"]) >= t,
        "+ bare question": lambda c, t: gate(c) or float(c["bare"]) >= t,
        "+ keywords": lambda c, t: gate(c) or float(c["keywords"]) >= t,
        "+ heading path": lambda c, t: gate(c) or float(c["title"]) >= t,
        "+ max(bare, keywords, heading)": lambda c, t: (
            gate(c) or max(float(c["bare"]), float(c["keywords"]), float(c["title"])) >= t
        ),
        "+ vector similarity": lambda c, t: gate(c) or float(c["similarity"] or 0.0) >= t,
    }


def curve(rows: Sequence[dict[str, Any]], threshold: float = 0.5) -> dict[str, list[dict]]:
    """For each rule and parameter: shares answered (answerable passing), refused (the
    unanswerable refused, per kind), lost_with_gold."""
    report: dict[str, list[dict]] = {}
    for name, rule in rules(threshold).items():
        points = []
        for t in SIMILARITIES if name == "+ vector similarity" else THRESHOLDS:
            point: dict[str, Any] = {"t": t}
            groups: dict[str, list[dict[str, Any]]] = {}
            for row in rows:
                key = ("answerable" if row["answerable"] else "unanswerable") + (
                    f" ({row['kind']})" if row["kind"] else ""
                )
                groups.setdefault(key, []).append(row)
            for key, group in sorted(groups.items()):
                passed = [any(rule(c, t) for c in row["candidates"]) for row in group]
                if key.startswith("answerable"):
                    point[f"answered {key[10:].strip()}".strip()] = _share(passed)
                    lost = [
                        not ok and any(c["gold"] for c in row["candidates"])
                        for row, ok in zip(group, passed, strict=True)
                    ]
                    point[f"lost_with_gold {key[10:].strip()}".strip()] = _share(lost)
                else:
                    point[f"refused {key[12:].strip()}".strip()] = _share([not p for p in passed])
            points.append(point)
        report[name] = points
    return report


def _share(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
