"""Retrieval: `(topic) question` (and the bare question) -> vector (+ lexical) search, fused ->
cross-encoder rerank -> gate. A follow-up that leans on the previous question and finds nothing
as asked ("Which privileges does it need?") is tried joined to it, and that form is kept only
when what it finds still fits the question as asked."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assistant.rag.ports import ChunkLookup, Embedder, LexicalIndex, Reranker, VectorStore
from assistant.rag.types import Candidate, Chunk, Question, Retrieval, Settings

#: How many earlier user messages a follow-up carries into its retrieval query.
HISTORY_QUESTIONS = 1
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
#: Words by which a question points back at an earlier one. Only such a question is tried with
#: the previous question: a question that names its subject is judged exactly as if asked
#: alone, so an earlier question can neither let it through the gate nor keep it out.
POINTERS = frozenset(
    "it its it's they them their theirs this that these those one ones there he she him her "
    "his same such former latter else".split()
)
_LEADS = ("and ", "also ", "what about ", "how about ", "but ", "or ", "so ")
#: A passage kept for the follow-up form must still score this much against the question as
#: asked (cross-encoder, sigmoid). Joined to a docs question, anything reads as relevant ("When
#: do tokens expire? Write me a poem about it" scores 0.996), while the question alone tells:
#: an elliptical follow-up scores about 1e-2 to 1e-1 against the passage it points at ("Which
#: privileges does it need?" 0.04, "and how long do they last" 0.10), an unrelated request
#: about 1e-5 ("Write me a poem about it", "what is the weather like there").
FOLLOW_UP_FLOOR = 0.002
#: How much more relevant (in logits) a kept passage must read for the earlier question joined
#: to the follow-up than for the earlier question alone, for a follow-up the cross-encoder
#: cannot read by itself to keep its joined form (Retriever._fits_the_question).
FOLLOW_UP_GAIN = 1.0
#: Requests no documentation answers, each joined to the earlier question as a follow-up would
#: be: how relevant a passage still reads then is what the earlier question alone carries.
UNRELATED = ("Write me a poem about it.", "What's the weather like there?",
             "Tell me a joke about that.")  # fmt: skip
#: How much more relevant (in logits) a passage must read for the earlier question joined to
#: the follow-up than joined to an unrelated request (the mean over UNRELATED), for the
#: follow-up to count as about that passage. Dev sets (site_realistic conversations): the
#: elliptical follow-ups read their passages 1.4 to 10 logits above; unrelated requests
#: (prices, the weather, a rash, a translation) -3.5 to +1, "how much memory do I have left
#: on this phone" +3.8 after a question about prefetching. Ray conversations (held out): the
#: out-of-scope requests after a docs question -2.9 to +1.2, "read text" +3.2.
FOLLOW_UP_MARGIN = 2.0
#: How many of the joined form's best passages the earlier question reads again when the
#: joined form keeps none (Retriever._previous_subject).
PREVIOUS_SUBJECT_READ = 3
#: The margin over unrelated requests (see FOLLOW_UP_MARGIN) such a passage needs: twice the
#: joined form's, as it is kept against what the two turns read together. Flower's usage
#: section after "how do I start flower? can it listen on another port?": +7.0; a Ray passage
#: on linear algebra threads after "how can i enable datadog on my ray cluster? can you tell
#: me how to solve simple algebraic equations with one variable": +2.1.
PREVIOUS_SUBJECT_MARGIN = 4.0
_WORDS = re.compile(r"[a-z']+")
#: How far (in logits) a passage of an API reference or a changelog is put behind a guide's:
#: the cross-encoder rates a reference entry that names the question's words about as high
#: as the guide section that explains them, and the reader is served better by the guide.
#: Only the order changes; the gate still reads the relevance as scored.
PAGE_KIND_PENALTY = {"reference": 1.0, "changelog": 2.0}


def retrieval_query(question: Question) -> str:
    """The text that is embedded and reranked. The page topic goes first, in parentheses,
    because it carries what a short question leaves out ("When does it expire?")."""
    return search_queries(question)[0]


def search_queries(question: Question) -> list[str]:
    """The texts searched for the question as asked: the retrieval query first and, when a
    topic is given, the question without it. The topic rescues a vague question, but a question
    that already says what it is about is found better without it (Ray dev set: hit@5 0.613
    without the topic, 0.595 with it); the two searches are fused, so each question gets the
    better of both."""
    text = " ".join(question.text.split())
    topic = " ".join(question.topic.split())
    return [f"({topic}) {text}", text] if topic else [text]


def leans_on_history(text: str) -> bool:
    """Does the question point back at something said before ("How do I revoke one?", "What
    about annual plans?")? Only then may the previous question help find its passages."""
    lowered = " ".join(text.lower().split())
    return bool(POINTERS.intersection(_WORDS.findall(lowered))) or lowered.startswith(_LEADS)


def follow_up_query(question: Question) -> str | None:
    """The question joined to the previous user question(s), topic first; None when there is
    no history or the question does not lean on it."""
    if not leans_on_history(question.text):
        return None
    return joined_query(question, question.text)


def joined_query(question: Question, text: str) -> str | None:
    """`text` after the previous user question(s), topic first; None without history."""
    earlier = [t.content for t in question.history if t.role == "user"][-HISTORY_QUESTIONS:]
    if not earlier:
        return None
    joined = " ".join([*(" ".join(e.split()) for e in earlier), " ".join(text.split())])
    topic = " ".join(question.topic.split())
    return f"({topic}) {joined}" if topic else joined


_SENTENCE = re.compile(r"(?<=[\w)\]\"'`][?.!])\s+(?=[A-Za-z\"'(\[`])")
#: A request sentence shorter than this (in words) leans on what came before ("Why?").
REQUEST_WORDS = 5


def request_query(question: Question) -> str | None:
    """The question's request without the situation told before it, topic first ("Our API
    wants the token in an X-Api-Key header. How do I write my own auth class?" -> "How do I
    write my own auth class?"): the cross-encoder, trained on short queries, reads a passage
    against a long story less well than against the request it ends with. The request may
    point back at the story ("My beat schedule fires at the wrong hour. How do I make it use
    Europe/London time?": the time zone section reads 0.21 against the whole question, 0.96
    against its request): the whole question is read too, and a passage counts as relevant as
    the better reading. None when the question is one sentence or its request is too short to
    say anything alone ("... Why?")."""
    sentences = [s for s in _SENTENCE.split(" ".join(question.text.split())) if s]
    if len(sentences) < 2:
        return None
    asks = [s for s in sentences if s.endswith("?")] or sentences[-1:]
    request = asks[-1]
    if len(request.split()) < REQUEST_WORDS:
        return None
    topic = " ".join(question.topic.split())
    return f"({topic}) {request}" if topic else request


def earlier_query(question: Question) -> str:
    """The previous question as a query of its own, topic first ("" when none)."""
    earlier = previous_question(question)
    topic = " ".join(question.topic.split())
    return f"({topic}) {earlier}" if topic and earlier else earlier


def previous_question(question: Question) -> str:
    """The user's previous question, as the follow-up form joins it ("" when none)."""
    earlier = [t.content for t in question.history if t.role == "user"]
    return " ".join(earlier[-1].split()) if earlier else ""


def passage_text(chunk: Chunk) -> str:
    """What the embedder and the reranker see of a chunk: its title path, then its text."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def gate(candidates: list[Candidate], settings: Settings) -> None:
    """Mark the best candidates at or above the threshold as kept, at most `max_kept`. A
    curated answer (written by the team) that passes leads: it is kept first and put first."""
    for candidate in candidates:
        candidate.kept = False
    ranked = [
        c for c in candidates if c.relevance is not None and c.relevance >= settings.threshold
    ]
    ranked.sort(key=lambda c: not c.chunk.curated)  # stable: otherwise best first
    for candidate in ranked[: settings.max_kept]:
        candidate.kept = True
    if any(c.kept and c.chunk.curated for c in candidates):
        candidates.sort(key=lambda c: not (c.kept and c.chunk.curated))


def _regate(candidates: list[Candidate], settings: Settings) -> None:
    """After relevances changed: the candidates the cross-encoder read back in the order of
    relevance (the unread tail stays behind them), and the gate run again."""
    head = [c for c in candidates if c.relevance is not None]
    head.sort(key=_order, reverse=True)
    candidates[: len(head)] = head
    gate(candidates, settings)


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
        self._read_in_context(
            joined, question, settings, points_back=leans_on_history(question.text)
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

    def _read_in_context(
        self, joined: Retrieval, question: Question, settings: Settings, *, points_back: bool
    ) -> None:
        """The joined form keeps a passage only when the follow-up is about the previous
        subject and the passage fits one of the two turns; any other passage is read as the
        follow-up alone reads it, and the gate runs again.

        About the previous subject: the follow-up as asked reads a passage above
        FOLLOW_UP_FLOOR; or joined to it, the earlier question reads a passage FOLLOW_UP_GAIN
        logits more relevant than alone ("how do I start flower? can it listen on another
        port?" lifts the port options); or FOLLOW_UP_MARGIN logits more relevant than joined
        to an unrelated request (UNRELATED). The cross-encoder reads nothing of a pronoun
        ("and if it's already running?" reads the revoking section at 0.001, as low as "Write
        me a poem about it"), but a follow-up about the previous subject keeps its passages
        relevant where an unrelated request pulls them down: after "how do I revoke a task by
        its id?", the revoking section reads 4.5 logits above the unrelated requests with
        "and if it's already running?", 0.3 with "i have a rash, what can i use for it".

        Fits a turn: the follow-up reads it above FOLLOW_UP_FLOOR, or the earlier question
        alone passes the gate with it. A passage only the two read together find relevant is
        answered from by neither.

        The kept passages are put in the order of both readings (the mean of the logits):
        joined to "When does it expire?", "How do I revoke one?" finds the expiry passage
        first, but the revoking one speaks to it as asked."""
        if not joined.kept:
            if points_back:
                self._previous_subject(joined, question, settings)
            return
        started = self.clock()
        # Read best first until enough fit: one put back makes room for the next.
        eligible = [
            c for c in joined.candidates
            if c.relevance is not None and c.relevance >= settings.threshold
        ]  # fmt: skip
        fit: dict[int, float] = {}  # the follow-up as asked
        earlier: dict[int, float] = {}  # the earlier question alone, where the first is low

        def fits_a_turn(candidate: Candidate) -> bool:
            return earlier.get(id(candidate), 1.0) >= settings.threshold

        done = fitting = 0
        while done < len(eligible) and fitting < settings.max_kept:
            batch = eligible[done : done + settings.max_kept - fitting]
            done += len(batch)
            scores = self.reranker.score(
                retrieval_query(question), [passage_text(c.chunk) for c in batch]
            )
            fit.update(zip(map(id, batch), scores, strict=True))
            low = [c for c in batch if fit[id(c)] < FOLLOW_UP_FLOOR]
            if low:
                scores = self.reranker.score(
                    earlier_query(question), [passage_text(c.chunk) for c in low]
                )
                earlier.update(zip(map(id, low), scores, strict=True))
            fitting += sum(1 for c in batch if fits_a_turn(c))
        read = eligible[:done]
        fits = [c for c in read if fits_a_turn(c)]
        # A question that does not point back shows that it is about the previous subject only
        # by the margin: read as asked with its topic, or joined, a request of another subject
        # can read a passage above the floor ("when will microsoft drop support for windows 7"
        # after "How to cancel job from UI?", 0.005 with the page topic first).
        about = points_back and (
            len(earlier) < len(read)
            or any(
                _logit(c.relevance or 0.0) - _logit(earlier[id(c)]) >= FOLLOW_UP_GAIN for c in fits
            )
        )
        for candidate in fits if not about else ():
            if self._about_unlike_an_unrelated_request(candidate, question):
                about = True
                break
        if not about:  # every passage is read as the follow-up alone reads it
            rest = eligible[done:]
            scores = self.reranker.score(
                retrieval_query(question), [passage_text(c.chunk) for c in rest]
            ) if rest else []  # fmt: skip
            fit.update(zip(map(id, rest), scores, strict=True))
            fits, read = [], eligible
        kept_ids = {id(c) for c in fits}
        for candidate in read:
            if id(candidate) not in kept_ids:
                candidate.relevance = fit[id(candidate)]
        _regate(joined.candidates, settings)
        now = joined.kept
        both = {id(c): _logit(c.relevance or 0.0) + _logit(fit.get(id(c), 0.0)) for c in now}
        joined.candidates[: len(now)] = sorted(now, key=lambda c: -both[id(c)])
        joined.timings_ms["follow_up_check_ms"] = _ms(started, self.clock())

    def _previous_subject(self, joined: Retrieval, question: Question, settings: Settings) -> None:
        """The joined form keeps nothing, though the follow-up points back: joined, the two
        can read the passage that answers both lower than the earlier question alone ("how do
        I start flower? can it listen on another port?" reads Flower's usage section, with
        its `--port` option, at 0.22; "how do I start flower?" alone at 0.75). The best few
        are read by the earlier question alone, and one it passes the gate with, and that the
        follow-up is about as no unrelated request is (PREVIOUS_SUBJECT_MARGIN), is kept at
        that relevance."""
        started = self.clock()
        head = [c for c in joined.candidates if c.relevance is not None][:PREVIOUS_SUBJECT_READ]
        if not head:
            return
        earlier = self.reranker.score(
            earlier_query(question), [passage_text(c.chunk) for c in head]
        )
        for candidate, relevance in zip(head, earlier, strict=True):
            if relevance >= settings.threshold and self._about_unlike_an_unrelated_request(
                candidate, question, margin=PREVIOUS_SUBJECT_MARGIN
            ):
                candidate.relevance = float(relevance)
        _regate(joined.candidates, settings)
        joined.timings_ms["follow_up_check_ms"] = _ms(started, self.clock())

    def _about_unlike_an_unrelated_request(
        self, passage: Candidate, question: Question, *, margin: float = FOLLOW_UP_MARGIN
    ) -> bool:
        """Joined to the follow-up, does the earlier question read the passage `margin` logits
        more relevant than joined to an unrelated request (the mean over UNRELATED)?"""
        text = passage_text(passage.chunk)
        unrelated = [
            _logit(self.reranker.score(joined_query(question, request) or request, [text])[0])
            for request in UNRELATED
        ]
        return _logit(passage.relevance or 0.0) - sum(unrelated) / len(unrelated) >= margin

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
            scores = self.reranker.score(query, passages)
            # Other readings, each passage counting as relevant as its best: the question
            # without its page's topic (`bare`: a question that names a subject of its own is
            # read on its words, not on a page's it was asked from: "how do I switch to the
            # readthedocs theme?" on a page about tokens reads the theme's section 0.41 with
            # the topic first, 0.99 without, while a vague one keeps what the topic gives it),
            # and the request without the situation told before it (`also`).
            for reading in (bare, also):
                if reading:
                    other = self.reranker.score(reading, passages)
                    scores = [max(a, b) for a, b in zip(scores, other, strict=True)]
            for candidate, score in zip(head, scores, strict=True):
                candidate.relevance = float(score)
            head.sort(key=_order, reverse=True)
            candidates[: len(head)] = head
            timings["rerank_ms"] = _ms(started, self.clock())
            gate(candidates, settings)
        else:  # search order (fused when hybrid) stands
            for candidate in candidates[: settings.max_kept]:
                candidate.kept = True

        return Retrieval(
            query=query, candidates=candidates, timings_ms=timings, searched=texts,
            threshold=settings.threshold,
        )  # fmt: skip


def _order(candidate: Candidate) -> tuple[float, float]:
    """Best first: relevance in logits, a reference or changelog passage put behind a guide's
    that scores about as high; the relevance itself orders those the logit's clamp makes equal."""
    relevance = candidate.relevance or 0.0
    return _logit(relevance) - PAGE_KIND_PENALTY.get(candidate.chunk.kind, 0.0), relevance


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 2)
