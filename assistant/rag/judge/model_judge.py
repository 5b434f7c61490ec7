"""A second opinion before a refusal: the project's model judges, where one is configured.

The answerability check (answerability.py) reads passages with a cross-encoder trained on web
search, and its four features put two things in one place: a documentation answer asked in the
reader's words (sentence and passage logits of 1 to 4, a quarter of the question's words in the
sentence) and an on-topic passage without the answer ("How many students use the discount?"
against "Students get 50% off the Team plan."). No threshold separates them (docs/measuring,
history, 2026-11-28 night). A model reading the question and the passages does: so a question
the check would refuse, but not by far, is put to the project's model, and answered only if the
model says the passages hold the answer. Far under the threshold, on the gate's own refusal, or
on a name the documents lack (unsaid.py), nothing is asked.

The same model drafts, for a question that would be refused, its one-sentence answer in the
documents' terms (`ModelJudge.drafts`): the second reading searches and reads that draft
(answering.py), and the model then judges what it found against the question as asked.

The model is asked through the `Generator` port, as it is asked to write (a local model, an
Ollama server or an OpenAI-compatible one), for one word, under a time budget: a model that is
busy, down or slow leaves the check's refusal standing.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence

from assistant.rag.judge.answerability import Verdict
from assistant.rag.ports import Generator, GeneratorUnavailable
from assistant.rag.reading.scoring import asked
from assistant.rag.reading.words import content_words
from assistant.rag.types import Candidate, Prompt, Question, Turn

#: Asked only of a refusal scoring at least this share of the check's threshold. The check's
#: refusals of documentation answers the gate had kept scored 0.17 to 0.28 against a threshold
#: of 0.29 on the dev sites; ClapNQ's unanswerable questions mostly score far below.
ASK_FROM_SHARE_OF_THRESHOLD = 0.5
#: What the model reads of the best kept passages, best first.
PASSAGES = 2
PASSAGE_CHARS = 900

SYSTEM = (
    "You check whether documentation passages answer a user's question. Reply with one word: "
    "yes if the passages contain the answer to the question, no if they do not (for example, "
    "they are on the same subject but do not give what is asked)."
)
_WORD = re.compile(r"[a-z]+")

#: Asked for a draft: the answer in one sentence, in the documents' own terms, which the
#: reader's words often are not ("keep my own schema version number" for `user_version`).
DRAFT_SYSTEM = (
    "Answer the user's question about the software in one short sentence, naming the exact "
    "command, option, setting, statement or function to use."
)
#: A draft longer than this stops there: the terms come first, and a long draft is slow.
DRAFT_CHARS = 240
_SENTENCE_END = re.compile(r"[.!?](\s|$)|\n")
#: The same while the model still writes: a stop at the end of what came so far may be the
#: start of a name (".html", ".dump"), so only a stop with a space or line after it counts.
_SENTENCE_ENDED = re.compile(r"[.!?]\s|\n")
_YES_OR_NO = re.compile(r"^(yes|no)\b[\s,.!:;-]*", re.IGNORECASE)

logger = logging.getLogger(__name__)


def worth_asking(verdict: Verdict, threshold: float) -> bool:
    """A refusal by the check's score, not far under its threshold, and not for a name the
    documents lack."""
    return (
        not verdict.answerable
        and not verdict.missing
        and verdict.score >= threshold * ASK_FROM_SHARE_OF_THRESHOLD
    )


def judge_prompt(question: Question, passages: Sequence[Candidate]) -> Prompt:
    """The question and the best passages, for a yes or a no."""
    shown = passages[:PASSAGES]
    body = "\n\n".join(
        f"[{n}] {c.chunk.title}\n{c.chunk.text[:PASSAGE_CHARS]}".strip()
        for n, c in enumerate(shown, start=1)
    )
    ask = (
        f"Passages:\n{body}\n\nQuestion: {asked(question)}\n\n"
        "Do the passages answer the question? Reply yes or no."
    )
    return Prompt(
        system=SYSTEM, messages=(Turn("user", ask),), question=question, passages=tuple(shown)
    )


def draft_prompt(question: Question) -> Prompt:
    """The question alone, for a one-sentence answer in the documents' terms."""
    return Prompt(
        system=DRAFT_SYSTEM, messages=(Turn("user", asked(question)),), question=question,
        passages=(),
    )  # fmt: skip


def draft_of(text: str, question: Question | None = None) -> str:
    """The draft's first sentence or line, without a leading yes or no (its code marks name
    its terms: reading/scoring.py draft_terms); "" when it names nothing the question and the
    request for it did not already say ("Yes, requests can throw an exception when the
    response is a 404": read again, it is the question again)."""
    text = _YES_OR_NO.sub("", text.strip())
    end = _SENTENCE_END.search(text)
    if end is not None:
        text = text[: end.start() + 1]
    draft = " ".join(text.split())[:DRAFT_CHARS]
    if draft.count("`") % 2:
        draft = draft.rsplit("`", 1)[0].rstrip()  # cut inside a code span
    said = content_words(DRAFT_SYSTEM) | (content_words(asked(question)) if question else set())
    return draft if content_words(draft) - said else ""


def said_yes(text: str) -> bool | None:
    """The model's first word: True for yes, False for no, None for anything else."""
    word = _WORD.search(text.lower())
    if word is None:
        return None
    return {"yes": True, "no": False}.get(word.group(0))


class ModelJudge:
    """Asks `generator` whether the kept passages answer; None when it cannot say in time."""

    def __init__(
        self,
        generator: Generator,
        *,
        within: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.generator = generator
        self.id = generator.id
        self.within = within
        self.clock = clock

    def until(self) -> float:
        """The deadline of one question's asks, on `clock`: whatever the model is asked before
        a refusal stands (a second opinion, a draft, a judgement of what the draft found), it
        has `within` seconds for all of them, so a busy model holds a visitor that long at
        most, not that long for each."""
        return self.clock() + self.within

    def answers(
        self, question: Question, passages: Sequence[Candidate], until: float | None = None
    ) -> bool | None:
        said = self._ask(judge_prompt(question, passages), _first_word_said, until)
        return None if said is None else said_yes(said)

    def drafts(self, question: Question, until: float | None = None) -> str:
        """The model's one-sentence answer from what it knows, in the terms the documents
        would use: searched and read as a second reading of a question that found nothing
        (answering.py). "" when it says nothing in time."""
        said = self._ask(draft_prompt(question), _sentence_said, until)
        return draft_of(said or "", question)

    def _ask(
        self, prompt: Prompt, enough: Callable[[str], bool], until: float | None
    ) -> str | None:
        """What the model said until `enough` of it, by `until` (the question's deadline, or
        `within` from now); None when it could not say anything in time, and the model is not
        asked at all when no time is left."""
        deadline = self.until() if until is None else until
        left = deadline - self.clock()
        if left <= 0:
            return None
        replies: queue.Queue[str | None] = queue.Queue(maxsize=1)

        def ask() -> None:
            said: str | None = None
            parts = self.generator.stream(prompt)
            text = ""
            try:
                for part in parts:
                    if isinstance(part, str):
                        text += part
                        if enough(text):
                            break
                    if self.clock() > deadline:
                        break
                said = text
            except GeneratorUnavailable as exc:
                logger.info("%s could not answer: %s", self.id, exc)
            except Exception:  # noqa: BLE001 - a second opinion that fails leaves the refusal
                logger.exception("%s failed to answer", self.id)
            finally:
                close = getattr(parts, "close", None)
                if close is not None:
                    close()
                replies.put(said)

        threading.Thread(target=ask, name="model-judge", daemon=True).start()
        try:
            return replies.get(timeout=left)
        except queue.Empty:
            return None


def _first_word_said(text: str) -> bool:
    """A whole first word came (a word, then something that is no letter), or too much."""
    whole_word = bool(_WORD.search(text.lower())) and not text.rstrip()[-1:].isalpha()
    return whole_word or len(text) > 40


def _sentence_said(text: str) -> bool:
    return bool(_SENTENCE_ENDED.search(text.lstrip())) or len(text) > DRAFT_CHARS
