"""Each sentence of the kept passages scored for the question, best first: a follow-up read
with the question it leans on and as asked, a question with a topic read with and without it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from assistant.rag.reading.scoring import SentenceScorer, asked, logit, read_for
from assistant.rag.reading.units import Unit
from assistant.rag.types import Question


def ranked(
    units: Sequence[Unit],
    texts: Sequence[str],
    question: Question,
    *,
    scorer: SentenceScorer,
    margin: float,
) -> list[tuple[Unit, float]]:
    """Each unit with its logit for the question, best first."""
    scores = read_for(question, texts, scorer)
    scores = _better_of_topic(question, texts, scores, scorer)
    if question.leans_on:
        # Read with the previous question, every sentence of its answer fits again: a
        # sentence must also speak to the follow-up as asked ("Click Revoke ..." for "How
        # do I revoke one?", not "Tokens expire after 90 days" again). Both count alike
        # (the mean of the logits); the follow-up alone is too vague to decide by itself.
        # It is read without the page's topic: what it points back to is the previous
        # question's subject, not the page's ("How long does it take?" after "How do I export
        # my data?", asked on a page about tokens, reads the token lifetime 7.0 logits with
        # the topic, the export time 1.1; -2.2 and 1.1 without).
        as_asked = scorer(asked(replace(question, leans_on="")), texts)
        scores = [_both(a, b) for a, b in zip(scores, as_asked, strict=True)]
        # Beside the best, only sentences about as close to the follow-up as asked: joined
        # to "When does it expire?", "Expired tokens return HTTP 401" still reads well.
        best = max(range(len(scores)), key=lambda i: scores[i])
        floor = logit(as_asked[best]) - margin
        scores = [
            p if i == best or logit(a) >= floor else 0.0
            for i, (p, a) in enumerate(zip(scores, as_asked, strict=True))
        ]
    # Ties go to the more relevant passage (they come best-first from the reranker).
    return sorted(
        zip(units, map(logit, scores), strict=True),
        key=lambda pair: (-pair[1], pair[0].passage),
    )


def _better_of_topic(
    question: Question, texts: Sequence[str], scores: list[float], scorer: SentenceScorer
) -> list[float]:
    """The topic helps find the page, but within a relevant passage it pulls towards the
    sentence that repeats the page's words ("To apply, open Billing > Plans" over "Students
    get 50% off" for "(Billing) Do you offer a student discount?"): a sentence counts as
    relevant as the better of the two forms of the question."""
    if not question.topic.strip():
        return scores
    bare = scorer(asked(question), texts)
    return [max(a, b) for a, b in zip(scores, bare, strict=True)]


def _both(p: float, q: float) -> float:
    """The probability whose logit is the mean of the two's."""
    return 1.0 / (1.0 + math.exp(-(logit(p) + logit(q)) / 2))
