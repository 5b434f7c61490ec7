"""A follow-up: the question joined to the previous one is kept only when the follow-up is
about the previous subject and each passage it keeps fits one of the two turns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from assistant.rag.ports import Reranker
from assistant.rag.reading.scoring import logit, passage_text
from assistant.rag.retrieve.gate import regate
from assistant.rag.retrieve.queries import earlier_query, joined_query, retrieval_query
from assistant.rag.types import Candidate, Question, Retrieval, Settings

#: A passage kept for the follow-up form must still score this much against the question as
#: asked (cross-encoder, sigmoid). Joined to a docs question, anything reads as relevant ("When
#: do tokens expire? Write me a poem about it" scores 0.996), while the question alone tells:
#: an elliptical follow-up scores about 1e-2 to 1e-1 against the passage it points at ("Which
#: privileges does it need?" 0.04, "and how long do they last" 0.10), an unrelated request
#: about 1e-5 ("Write me a poem about it", "what is the weather like there").
FOLLOW_UP_FLOOR = 0.002
#: How much more relevant (in logits) a kept passage must read for the earlier question joined
#: to the follow-up than for the earlier question alone, for a follow-up the cross-encoder
#: cannot read by itself to keep its joined form (`read_in_context`).
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
#: joined form keeps none (`previous_subject`).
PREVIOUS_SUBJECT_READ = 3
#: The margin over unrelated requests (see FOLLOW_UP_MARGIN) such a passage needs: twice the
#: joined form's, as it is kept against what the two turns read together. Flower's usage
#: section after "how do I start flower? can it listen on another port?": +7.0; a Ray passage
#: on linear algebra threads after "how can i enable datadog on my ray cluster? can you tell
#: me how to solve simple algebraic equations with one variable": +2.1.
PREVIOUS_SUBJECT_MARGIN = 4.0


def read_in_context(
    joined: Retrieval,
    question: Question,
    settings: Settings,
    *,
    reranker: Reranker,
    clock: Callable[[], float],
    points_back: bool,
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
            previous_subject(joined, question, settings, reranker=reranker, clock=clock)
        return
    started = clock()
    # Read best first until enough fit: one put back makes room for the next.
    eligible = [
        c for c in joined.candidates
        if c.relevance is not None and c.relevance >= settings.threshold
    ]  # fmt: skip
    fit, earlier, done = _read_until_enough_fit(eligible, question, settings, reranker)
    read = eligible[:done]
    fits = [c for c in read if _fits_a_turn(c, earlier, settings)]
    # A question that does not point back shows that it is about the previous subject only
    # by the margin: read as asked with its topic, or joined, a request of another subject
    # can read a passage above the floor ("when will microsoft drop support for windows 7"
    # after "How to cancel job from UI?", 0.005 with the page topic first).
    about = points_back and (
        len(earlier) < len(read)
        or any(logit(c.relevance or 0.0) - logit(earlier[id(c)]) >= FOLLOW_UP_GAIN for c in fits)
    )
    for candidate in fits if not about else ():
        if about_unlike_an_unrelated_request(candidate, question, reranker=reranker):
            about = True
            break
    if not about:  # every passage is read as the follow-up alone reads it
        rest = eligible[done:]
        scores = reranker.score(
            retrieval_query(question), [passage_text(c.chunk) for c in rest]
        ) if rest else []  # fmt: skip
        fit.update(zip(map(id, rest), scores, strict=True))
        fits, read = [], eligible
    kept_ids = {id(c) for c in fits}
    for candidate in read:
        if id(candidate) not in kept_ids:
            candidate.relevance = fit[id(candidate)]
    regate(joined.candidates, settings)
    now = joined.kept
    both = {id(c): logit(c.relevance or 0.0) + logit(fit.get(id(c), 0.0)) for c in now}
    joined.candidates[: len(now)] = sorted(now, key=lambda c: -both[id(c)])
    joined.timings_ms["follow_up_check_ms"] = _ms(started, clock())


def _fits_a_turn(candidate: Candidate, earlier: dict[int, float], settings: Settings) -> bool:
    return earlier.get(id(candidate), 1.0) >= settings.threshold


def _read_until_enough_fit(
    eligible: list[Candidate], question: Question, settings: Settings, reranker: Reranker
) -> tuple[dict[int, float], dict[int, float], int]:
    """The passages read best first by the follow-up as asked (and, where it reads one low,
    by the earlier question alone) until `max_kept` fit a turn: those two readings by the
    candidate's id, and how many were read."""
    fit: dict[int, float] = {}  # the follow-up as asked
    earlier: dict[int, float] = {}  # the earlier question alone, where the first is low
    done = fitting = 0
    while done < len(eligible) and fitting < settings.max_kept:
        batch = eligible[done : done + settings.max_kept - fitting]
        done += len(batch)
        scores = reranker.score(retrieval_query(question), [passage_text(c.chunk) for c in batch])
        fit.update(zip(map(id, batch), scores, strict=True))
        low = [c for c in batch if fit[id(c)] < FOLLOW_UP_FLOOR]
        if low:
            scores = reranker.score(earlier_query(question), [passage_text(c.chunk) for c in low])
            earlier.update(zip(map(id, low), scores, strict=True))
        unfit = [c for c in low if earlier[id(c)] < settings.threshold]
        if unfit and question.topic.strip():
            for candidate, score in _fits_both_without_topic(question, unfit, settings, reranker):
                earlier[id(candidate)] = score
        fitting += sum(1 for c in batch if _fits_a_turn(c, earlier, settings))
    return fit, earlier, done


def previous_subject(
    joined: Retrieval,
    question: Question,
    settings: Settings,
    *,
    reranker: Reranker,
    clock: Callable[[], float],
) -> None:
    """The joined form keeps nothing, though the follow-up points back: joined, the two
    can read the passage that answers both lower than the earlier question alone ("how do
    I start flower? can it listen on another port?" reads Flower's usage section, with
    its `--port` option, at 0.22; "how do I start flower?" alone at 0.75). The best few
    are read by the earlier question alone, and one it passes the gate with, and that the
    follow-up is about as no unrelated request is (PREVIOUS_SUBJECT_MARGIN), is kept at
    that relevance."""
    started = clock()
    head = [c for c in joined.candidates if c.relevance is not None][:PREVIOUS_SUBJECT_READ]
    if not head:
        return
    earlier = reranker.score(earlier_query(question), [passage_text(c.chunk) for c in head])
    for candidate, relevance in zip(head, earlier, strict=True):
        if relevance >= settings.threshold and about_unlike_an_unrelated_request(
            candidate, question, reranker=reranker, margin=PREVIOUS_SUBJECT_MARGIN
        ):
            candidate.relevance = float(relevance)
    regate(joined.candidates, settings)
    joined.timings_ms["follow_up_check_ms"] = _ms(started, clock())


def _fits_both_without_topic(
    question: Question, unfit: list[Candidate], settings: Settings, reranker: Reranker
) -> list[tuple[Candidate, float]]:
    """The passages that fit both turns read without the page's topic, with the earlier
    question's relevance so read: the conversation's subject need not be the page's ("How do
    I export my data?" then "How long does it take?" on the tokens page: with the tokens topic
    first, the export-time section reads 0.09 for the first question and 0.0005 for the
    second; without it, 0.995 and 0.82). Both turns, not one, where the topic is left out: an
    unrelated request after a docs question ("how much memory do i have left on this phone"
    after "what ray stack show?") must not fit by the earlier question alone."""
    untopiced = replace(question, topic="")
    texts = [passage_text(c.chunk) for c in unfit]
    asked = reranker.score(retrieval_query(untopiced), texts)
    both = [(c, t) for c, a, t in zip(unfit, asked, texts, strict=True) if a >= FOLLOW_UP_FLOOR]
    if not both:
        return []
    earlier = reranker.score(earlier_query(untopiced), [t for _, t in both])
    return [
        (c, float(score))
        for (c, _), score in zip(both, earlier, strict=True)
        if score >= settings.threshold
    ]


def about_unlike_an_unrelated_request(
    passage: Candidate,
    question: Question,
    *,
    reranker: Reranker,
    margin: float = FOLLOW_UP_MARGIN,
) -> bool:
    """Joined to the follow-up, does the earlier question read the passage `margin` logits
    more relevant than joined to an unrelated request (the mean over UNRELATED)?"""
    text = passage_text(passage.chunk)
    unrelated = [
        logit(reranker.score(joined_query(question, request) or request, [text])[0])
        for request in UNRELATED
    ]
    return logit(passage.relevance or 0.0) - sum(unrelated) / len(unrelated) >= margin


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 2)
