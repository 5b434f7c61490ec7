"""Retrieval: `(topic) question` -> vector search -> cross-encoder rerank -> relevance gate."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from assistant.rag.ports import ChunkLookup, Embedder, Reranker, VectorStore
from assistant.rag.types import Candidate, Chunk, Question, Retrieval, Settings

#: How many earlier user messages a follow-up carries into the retrieval query.
HISTORY_QUESTIONS = 1


def retrieval_query(question: Question) -> str:
    """The text that is embedded and reranked. The page topic goes first, in parentheses,
    because it carries what a short question leaves out ("When does it expire?")."""
    text = " ".join(question.text.split())
    earlier = [t.content for t in question.history if t.role == "user"][-HISTORY_QUESTIONS:]
    if earlier:
        text = " ".join([*(" ".join(e.split()) for e in earlier), text])
    topic = " ".join(question.topic.split())
    return f"({topic}) {text}" if topic else text


def passage_text(chunk: Chunk) -> str:
    """What the embedder and the reranker see of a chunk: its title path, then its text."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def gate(candidates: list[Candidate], settings: Settings) -> None:
    """Mark the best candidates at or above the threshold as kept, at most `max_kept`."""
    for candidate in candidates:
        candidate.kept = False
    ranked = [
        c for c in candidates if c.relevance is not None and c.relevance >= settings.threshold
    ]
    for candidate in ranked[: settings.max_kept]:
        candidate.kept = True


class Retriever:
    def __init__(
        self,
        *,
        embedder: Embedder,
        store: VectorStore,
        reranker: Reranker,
        chunks: ChunkLookup,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.embedder = embedder
        self.store = store
        self.reranker = reranker
        self.chunks = chunks
        self.clock = clock

    def retrieve(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None = None
    ) -> Retrieval:
        timings: dict[str, float] = {}
        query = retrieval_query(question)

        started = self.clock()
        vector = self.embedder.embed_query(query)
        timings["embed_ms"] = _ms(started, self.clock())

        started = self.clock()
        hits = self.store.query(vector, k=settings.num_candidates, where=where)
        timings["search_ms"] = _ms(started, self.clock())

        started = self.clock()
        # A vector without a row (a sync that died between writes) is skipped, not shown.
        found = self.chunks([hit.id for hit in hits])
        candidates = [Candidate(found[h.id], h.similarity) for h in hits if h.id in found]
        timings["lookup_ms"] = _ms(started, self.clock())

        if settings.rerank and candidates:
            started = self.clock()
            scores = self.reranker.score(query, [passage_text(c.chunk) for c in candidates])
            for candidate, score in zip(candidates, scores, strict=True):
                candidate.relevance = float(score)
            candidates.sort(key=lambda c: c.relevance or 0.0, reverse=True)
            timings["rerank_ms"] = _ms(started, self.clock())
            gate(candidates, settings)
        else:
            candidates.sort(key=lambda c: c.similarity, reverse=True)
            for candidate in candidates[: settings.max_kept]:
                candidate.kept = True

        return Retrieval(query=query, candidates=candidates, timings_ms=timings)


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 2)
