"""Answerability: do the kept passages hold an answer, or are they only on topic?

The relevance gate reads whole passages, so a passage about the right thing passes it even
when no sentence in it answers the question ("When was X born?" against X's biography without
a date). This check reads single sentences with the same cross-encoder, and combines what it
sees in a small logistic model:

- the best sentence's relevance: an answer lives in a sentence, not in a passage's topic;
- the best passage's relevance: the gate's own evidence;
- how many of the question's content words the best sentence covers, and the kept passages
  cover: a question whose key terms appear nowhere is asking about something that is absent.

Each holds for any corpus. The coefficients live in `answerability.json`, fitted on dev data
by `manage.py fit_answerability` (assistant/measuring/evaluation/answerability_fit.py); pure
Python here.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from assistant.rag.judge.unsaid import unsaid
from assistant.rag.reading.scoring import (
    SentenceScorer,
    asked,
    in_context,
    logit,
    passage_text,
    sentence_query,
)
from assistant.rag.reading.units import MAX_PASSAGES, units_of
from assistant.rag.reading.words import content_words
from assistant.rag.types import Candidate, Question

MODEL_FILE = Path(__file__).with_name("answerability.json")
FEATURES = ("sentence_logit", "passage_logit", "sentence_coverage", "kept_coverage")


@dataclass(frozen=True, slots=True)
class Model:
    coefficients: dict[str, float]
    intercept: float
    #: Refuse below this probability of "answerable".
    threshold: float

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> Model:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            coefficients={k: float(data["coefficients"][k]) for k in FEATURES},
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
        )

    def probability(self, features: dict[str, float]) -> float:
        z = self.intercept + sum(w * features[k] for k, w in self.coefficients.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True, slots=True)
class Verdict:
    answerable: bool
    #: The model's probability that the kept passages answer the question.
    score: float
    #: Why it refused, in words an admin can act on ("" when it answered).
    reason: str
    features: dict[str, float] = field(default_factory=dict)
    best_sentence: str = ""
    ms: float = 0.0
    #: What the question names that the documents do not (assistant/rag/judge/unsaid.py).
    missing: tuple[str, ...] = ()
    #: The model that was asked for a second opinion on a refusal (model_judge.py), "" when
    #: none was; `answerable` is then what it said.
    judged_by: str = ""
    #: The model's draft the passages were found and read by, when the question as asked found
    #: nothing to answer from (answering.py, the second reading); "" otherwise.
    read_as: str = ""


#: Key words a passage must share with a question for full coverage. Questions of the dev
#: sets the check was fitted on have a median of 4 (ClapNQ) to 5 (Ray) content words; a
#: question that tells its situation first has 9 or more ("In our docker container the
#: worker prints OK and exits ... could running as root be the cause?"), most of them context
#: no documentation repeats. Past this many, covering this many is covering the question.
COVERAGE_WORDS = 8


def coverage(question_words: set[str], text: str) -> float:
    if not question_words:
        return 1.0
    covered = len(question_words & content_words(text))
    return min(1.0, covered / min(len(question_words), COVERAGE_WORDS))


class Answerability:
    def __init__(
        self,
        *,
        scorer: SentenceScorer,
        model: Model | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.scorer = scorer
        self.model = model or Model.load()
        self.clock = clock

    def features(
        self, question: Question, kept: Sequence[Candidate]
    ) -> tuple[dict[str, float], str]:
        # The same sentences the quoting answerer reads: their scores are computed once.
        units = units_of(kept)
        scores = self.scorer(sentence_query(question), in_context(units, kept))
        best = max(range(len(units)), key=lambda i: scores[i])
        words = content_words(asked(question))
        features = {
            "sentence_logit": logit(scores[best]),
            "passage_logit": logit(kept[0].relevance if kept[0].relevance is not None else 0.5),
            "sentence_coverage": coverage(words, units[best].text),
            "kept_coverage": coverage(words, " ".join(c.chunk.text for c in kept[:MAX_PASSAGES])),
        }
        return features, units[best].text

    def judge_part(
        self, part: Question, kept: Sequence[Candidate], *, threshold: float
    ) -> Verdict | None:
        """One request of a question that asks several (`question_parts`). The passages were
        found and gated for the whole question, so each is read again against this part alone
        (the cross-encoder, as the gate reads it); None when none reaches the gate's
        `threshold` for it, else the check's verdict on the part and its own passages."""
        started = self.clock()
        own = self.gate_part(part, kept, threshold=threshold)
        spent = (self.clock() - started) * 1000
        if not own:
            return None
        verdict = self.judge(part, own)
        return replace(verdict, ms=round(verdict.ms + spent, 2))

    def gate_part(
        self, part: Question, candidates: Sequence[Candidate], *, threshold: float
    ) -> list[Candidate]:
        """The candidates that pass the gate for one request of a question that asks several,
        each read against the part alone (the cross-encoder, as the gate reads it), best first,
        with the part's relevance."""
        if not candidates:
            return []
        texts = [passage_text(c.chunk) for c in candidates]
        relevance = self.scorer(sentence_query(part), texts)
        return sorted(
            (
                replace(c, relevance=r, kept=True)
                for c, r in zip(candidates, relevance, strict=True)
                if r >= threshold
            ),
            key=lambda c: -(c.relevance or 0.0),
        )

    def judge(
        self, question: Question, kept: Sequence[Candidate], found: Sequence[Candidate] = ()
    ) -> Verdict:
        """`found`: every candidate the search found, where a name the question gives is looked
        for (assistant/rag/judge/unsaid.py); without it only versions, money and accounts are."""
        started = self.clock()
        features, sentence = self.features(question, kept)
        score = self.model.probability(features)
        answerable = score >= self.model.threshold
        reason = "" if answerable else _reason(features)
        missing = unsaid(question.text, kept, found)
        if answerable and missing:
            answerable, reason = False, f"Not in the documents: {'; '.join(missing)}."
        ms = round((self.clock() - started) * 1000, 2)
        rounded = {k: round(v, 4) for k, v in features.items()}
        return Verdict(answerable, round(score, 4), reason, rounded, sentence, ms, tuple(missing))


def _reason(features: dict[str, float]) -> str:
    best = 1.0 / (1.0 + math.exp(-features["sentence_logit"]))
    share = features["sentence_coverage"]
    return (
        "The passages are on topic, but no sentence in them answers the question "
        f"(best sentence {best:.2f}; it has {share:.0%} of the question's key words)."
    )
