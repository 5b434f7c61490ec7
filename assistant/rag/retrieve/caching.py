"""Repeated questions: serve a retrieval (search + rerank) from a cache instead of the models.

The key holds everything that changes the ranked candidate list: a scope string from the
caller (the project's index version: any change to its chunks makes a new scope, so old
entries are never read again and expire), the embedder and reranker, the number of
candidates, whether to rerank and how many, the vector-store filter, and the normalised
retrieval query (which carries the topic) and, for a follow-up that leans on the previous
question, that form of the query too.
The relevance gate is applied again on every hit, so a new threshold or `max_kept` needs no
new entry."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from assistant.rag.ports import RetrievalCache
from assistant.rag.retrieve.gate import gate
from assistant.rag.retrieve.queries import joined_query, retrieval_query
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Candidate, Chunk, Question, Retrieval, Settings

#: Part of every key: a change to what is stored, or to how a question is read (7: a
#: follow-up's previous question read without the page's topic too), makes old entries
#: unreadable, not wrong.
FORMAT = 7


def normalise(query: str) -> str:
    """Spelling that does not change what the question asks shares one entry: case, runs of
    whitespace, trailing '?', '!' or '.', and surrounding quotes."""
    text = " ".join(query.casefold().split())
    return text.strip("\"'`“”‘’").rstrip(" ?!.").strip()


def cache_key(
    *,
    scope: str,
    query: str,
    settings: Settings,
    where: Mapping[str, Any] | None,
    embedder_id: str,
    reranker_id: str,
) -> str:
    parts = [
        FORMAT,
        scope,
        embedder_id,
        reranker_id if settings.rerank else "",
        settings.num_candidates,
        settings.rerank,
        settings.rerank_top if settings.rerank else 0,
        sorted((where or {}).items()),
        normalise(query),
    ]
    digest = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()
    return f"askdocs:retrieval:{digest}"


def select(candidates: list[Candidate], settings: Settings) -> None:
    """Mark what reaches the prompt, as `Retriever.retrieve` does: the relevance gate when
    reranked, otherwise the most similar few."""
    if settings.rerank:
        gate(candidates, settings)
        return
    for number, candidate in enumerate(candidates):
        candidate.kept = number < settings.max_kept


class CachingRetriever:
    """A `Retriever` in front of a cache. Same `retrieve` signature, so `Pipeline` takes it."""

    def __init__(
        self,
        inner: Retriever,
        *,
        cache: RetrievalCache,
        scope: str,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.scope = scope
        self.clock = clock

    def retrieve(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None = None
    ) -> Retrieval:
        if question.draft:
            # A second reading in the model's words is one question's last try, not a
            # repeated question: the model says it differently every time.
            return self.inner.retrieve(question, settings, where)
        started = self.clock()
        query = retrieval_query(question)
        # A question after another may be read after it (a follow-up, or a question that finds
        # nothing as asked), so its result also depends on the previous question.
        follow_up = joined_query(question, question.text)
        key = cache_key(
            scope=self.scope,
            query=f"{query}\n{follow_up}" if follow_up else query,
            settings=settings,
            where=where,
            embedder_id=self.inner.embedder.id,
            reranker_id=self.inner.reranker.id,
        )
        stored = self.cache.get(key)
        entry = _entry(stored) if stored is not None else None
        if entry is not None:
            timings = {"cache_hit": 1.0, "cache_ms": _ms(started, self.clock())}
            return _restored(entry, settings, timings)

        lookup_ms = _ms(started, self.clock())
        retrieval = self.inner.retrieve(question, settings, where)
        started = self.clock()
        self.cache.put(key, _stored(retrieval))
        retrieval.timings_ms["cache_hit"] = 0.0
        retrieval.timings_ms["cache_ms"] = round(lookup_ms + _ms(started, self.clock()), 2)
        return retrieval


# Entries are plain lists, not pickled dataclasses: readable by any version of this code
# that has the same FORMAT, and small.


def _stored(retrieval: Retrieval) -> dict[str, Any]:
    candidates = [
        [
            c.chunk.id,
            c.chunk.text,
            c.chunk.title,
            c.chunk.url,
            c.chunk.source_id,
            c.similarity,
            c.relevance,
            c.chunk.document,
            c.chunk.ordinal,
            c.chunk.kind,
            c.chunk.curated,
        ]
        for c in retrieval.candidates
    ]
    alternative = retrieval.alternative
    return {
        "query": retrieval.query,
        "form": retrieval.query_form,
        "candidates": candidates,
        "alternative": _stored(alternative) if alternative is not None else None,
    }


def _restored(
    entry: tuple[str, str, list[Candidate], object], settings: Settings, timings: dict[str, float]
) -> Retrieval:
    winner, form, candidates, alternative = entry
    select(candidates, settings)
    retrieval = Retrieval(
        winner, candidates, timings_ms=timings, query_form=form, threshold=settings.threshold
    )
    other = _entry(alternative) if alternative is not None else None
    if other is not None:
        retrieval.alternative = _restored(other, settings, {})
    return retrieval


def _entry(stored: object) -> tuple[str, str, list[Candidate], object] | None:
    """(winning query, its form, candidates, the stored alternative form or None); None (a
    miss) for anything that is not an entry this code wrote."""
    if not isinstance(stored, dict) or not isinstance(stored.get("candidates"), list):
        return None
    try:
        candidates = [
            Candidate(
                Chunk(
                    id=cid,
                    text=text,
                    title=title,
                    url=url,
                    source_id=source_id,
                    document=str(document),
                    ordinal=int(ordinal),
                    kind=str(kind),
                    curated=bool(curated),
                ),
                similarity=None if similarity is None else float(similarity),
                relevance=None if relevance is None else float(relevance),
            )  # fmt: skip
            for (
                cid,
                text,
                title,
                url,
                source_id,
                similarity,
                relevance,
                document,
                ordinal,
                kind,
                curated,
            ) in stored["candidates"]
        ]
    except (TypeError, ValueError):
        return None
    query, form = str(stored.get("query", "")), str(stored.get("form", "question"))
    return query, form, candidates, stored.get("alternative")


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 2)
