"""Retrieval: `(topic) question` (and the bare question) -> vector (+ lexical) search, fused ->
cross-encoder rerank -> gate. A follow-up that leans on the previous question and finds nothing
as asked ("Which privileges does it need?") is tried joined to it, and that form is kept only
when what it finds still fits the question as asked."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assistant.rag.ports import ChunkLookup, Embedder, LexicalIndex, Reranker, VectorStore
from assistant.rag.reading.scoring import (
    best_reading,
    draft_reading,
    draft_terms,
    passage_text,
)
from assistant.rag.retrieve.follow_ups import read_in_context
from assistant.rag.retrieve.gate import best_first, gate
from assistant.rag.retrieve.queries import (
    follow_up_query,
    joined_query,
    leans_on_history,
    request_query,
    retrieval_query,
    search_queries,
)
from assistant.rag.types import Candidate, Question, Retrieval, Settings

#: How many passages the word search adds to those the cross-encoder reads: the best of the
#: vector and BM25 lists fused (each FUSION_DEPTH deep) that the vector search did not already
#: put among those it reads. They join the reading, not the search order, so a word match never
#: pushes a passage the vector search found out of the cross-encoder's reach.
LEXICAL_EXTRA = 4
#: How deep the vector and the lexical lists go before they are fused.
FUSION_DEPTH = 30
#: Reciprocal rank fusion's damping constant (Cormack et al. 2009): 60 lets a passage that
#: both searches rank fairly high beat one that only one of them ranks first.
RRF_K = 60


def fuse(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion: each list gives 1 / (k + rank) to its ids; best total first,
    ties in order of first appearance."""
    totals: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            totals[item] = totals.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(totals, key=lambda item: -totals[item])


class Retriever:
    def __init__(
        self,
        *,
        embedder: Embedder,
        store: VectorStore,
        reranker: Reranker,
        chunks: ChunkLookup,
        lexical: LexicalIndex | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.embedder = embedder
        self.store = store
        self.lexical = lexical
        self.reranker = reranker
        self.chunks = chunks
        self.clock = clock

    def retrieve(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None = None
    ) -> Retrieval:
        if question.draft:
            return self._drafted(question, settings, where)
        texts = search_queries(question)
        follow_up = follow_up_query(question)
        started = self.clock()
        vectors = self.embedder.embed_queries([*texts, follow_up] if follow_up else texts)
        embed_ms = _ms(started, self.clock())
        alone = self._rank(
            texts[0], texts, vectors[: len(texts)], settings, where,
            also=request_query(question), bare=texts[1] if len(texts) > 1 else None,
        )  # fmt: skip
        alone.timings_ms = {"embed_ms": embed_ms, **alone.timings_ms}
        if not settings.rerank:
            return alone
        if follow_up is None and not alone.kept:
            # Nothing found as asked, though no word points back ("can connect and read be
            # different?" after a question about timeouts): the previous question may hold
            # the subject it leaves out, as it does for a pronoun.
            follow_up = joined_query(question, question.text)
            if follow_up is None:
                return alone
            started = self.clock()
            vectors = [*vectors, *self.embedder.embed_queries([follow_up])]
            embed_ms += _ms(started, self.clock())
        if follow_up is None:
            return alone
        # The joined form is searched by itself: what the question finds as asked is the other
        # form, kept beside it (Retrieval.alternative) or answered from when this one fails.
        joined = self._rank(follow_up, [follow_up], [vectors[-1]], settings, where)
        read_in_context(
            joined,
            question,
            settings,
            reranker=self.reranker,
            clock=self.clock,
            points_back=leans_on_history(question.text),
        )
        if not joined.kept:
            return alone
        joined.query_form = "with_history"
        if alone.kept:
            # Both forms pass the gate ("How long does it take?" finds the export-time passage
            # as asked, but no sentence of it answers without the export): the gate keeps the
            # question as asked, and the answerability check picks between the two.
            alone.alternative = joined
            alone.timings_ms = {
                **alone.timings_ms,
                **{f"with_history_{k}": v for k, v in joined.timings_ms.items()},
            }
            return alone
        joined.timings_ms = {"embed_ms": embed_ms, **joined.timings_ms}
        return joined

    def _drafted(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None
    ) -> Retrieval:
        """The second reading (answering.py): the model's draft, in the documents' terms, is
        searched by its vector and its words, and the cross-encoder reads what it finds against
        the draft, the names it marks as code before the question, and the question as asked,
        the best reading counting; the same gate keeps what passes."""
        draft = draft_reading(question)
        started = self.clock()
        vectors = self.embedder.embed_queries([draft])
        embed_ms = _ms(started, self.clock())
        found = self._rank(
            draft, [draft], vectors, settings, where,
            bare=draft_terms(question), also=retrieval_query(question),
        )  # fmt: skip
        found.query_form = "drafted"
        found.timings_ms = {"embed_ms": embed_ms, **found.timings_ms}
        return found

    def search_depth(self, settings: Settings) -> int:
        """How many vector hits a search text asks the store for: deeper beside the word
        search, whose list is fused with that many."""
        if self.lexical is not None:
            return max(settings.num_candidates, FUSION_DEPTH)
        return settings.num_candidates

    def _rank(
        self,
        query: str,
        texts: list[str],
        vectors: Sequence[Sequence[float]],
        settings: Settings,
        where: Mapping[str, Any] | None,
        also: str | None = None,
        bare: str | None = None,
    ) -> Retrieval:
        """Search with each text's vector and fuse; add the best of the vector and BM25 lists
        fused to the head; read chunk rows, rerank the head against `query` (and `bare`, the
        question without its page's topic, and `also`, its request alone: the better reading
        counts) and gate."""
        timings: dict[str, float] = {}
        depth = self.search_depth(settings)
        started = self.clock()
        rankings: list[list[str]] = []
        similarity: dict[str, float] = {}  # to the closest of the search texts
        for vector in vectors:
            hits = self.store.query(vector, k=depth, where=where)
            rankings.append([hit.id for hit in hits])
            for hit in hits:
                similarity[hit.id] = max(hit.similarity, similarity.get(hit.id, hit.similarity))
        timings["search_ms"] = _ms(started, self.clock())
        shallow = [ranking[: settings.num_candidates] for ranking in rankings]
        order = (fuse(shallow) if len(shallow) > 1 else shallow[0])[: settings.num_candidates]
        read = settings.rerank_top or len(order)

        if self.lexical is not None:
            started = self.clock()
            words = self.lexical.search(query, k=FUSION_DEPTH, where=where)
            timings["lexical_ms"] = _ms(started, self.clock())
            first = set(order[:read])
            fused = fuse([fuse(rankings), [chunk_id for chunk_id, _ in words]])
            extra = [i for i in fused if i not in first][:LEXICAL_EXTRA]
            order = [*order[:read], *extra, *(i for i in order[read:] if i not in extra)]
            read += len(extra)

        started = self.clock()
        # A vector without a row (a sync that died between writes) is skipped, not shown.
        found = self.chunks(order)
        candidates = [Candidate(found[i], similarity.get(i)) for i in order if i in found]
        timings["lookup_ms"] = _ms(started, self.clock())

        if settings.rerank and candidates:
            started = self.clock()
            # A cascade: search orders all candidates, the cross-encoder reads the head and
            # puts it in its order; the tail keeps search order and is never kept.
            head = candidates[:read]
            passages = [passage_text(c.chunk) for c in head]
            # Other readings, each passage counting as relevant as its best: the question
            # without its page's topic (`bare`: a question that names a subject of its own is
            # read on its words, not on a page's it was asked from: "how do I switch to the
            # readthedocs theme?" on a page about tokens reads the theme's section 0.41 with
            # the topic first, 0.99 without, while a vague one keeps what the topic gives it),
            # and the request without the situation told before it (`also`).
            readings = [query, *(reading for reading in (bare, also) if reading)]
            scores = best_reading(self.reranker.score, readings, passages)
            for candidate, score in zip(head, scores, strict=True):
                candidate.relevance = float(score)
            head.sort(key=best_first, reverse=True)
            candidates[: len(head)] = head
            timings["rerank_ms"] = _ms(started, self.clock())
            gate(candidates, settings)
        else:  # search order (fused when hybrid) stands
            readings = []
            for candidate in candidates[: settings.max_kept]:
                candidate.kept = True

        return Retrieval(
            query=query, candidates=candidates, timings_ms=timings, searched=texts,
            threshold=settings.threshold, readings=readings,
        )  # fmt: skip


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 2)
