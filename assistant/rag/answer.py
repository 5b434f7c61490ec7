"""An answer as the pipeline hands it over, and reading it to its end.

The pipeline (answering.py) decides what to say and returns an `Answer` whose `parts` stream
lazily; the written-answer path (written.py) is one way of making those parts. Neither has
to import the other for these types. What happened is a value: the parts end with an
`Outcome` when they are read to their end, and `Answer.stopped` says what happened when
whoever read them closed them early."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from assistant.rag.judge.answerability import Answerability, Verdict
from assistant.rag.ports import Generator
from assistant.rag.types import SORRY, Outcome, Part, Prompt, Retrieval, Written


def is_refusal(text: str) -> bool:
    """An LLM may answer with the sorry-sentence itself, sometimes with trailing words."""
    return text.strip().startswith(SORRY.rstrip("."))


@dataclass(frozen=True, slots=True)
class Fallback:
    """What answers when the generator cannot start: a quoting generator, guarded by the
    answerability check (a quote of a near miss is worse than a refusal)."""

    generator: Generator
    answerability: Answerability


@dataclass(frozen=True, slots=True)
class Reading:
    """An answer read to its end: the text it gives in one piece and what happened."""

    text: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Answer:
    """Retrieval is done and the answer decided; `parts` is read lazily by whoever streams the
    answer (text deltas, `Waiting` while a generator keeps the question waiting, and with a
    model that writes, the quote, then `Written` and the written answer), and ends with the
    `Outcome`. Whoever wants it in one piece calls `read()` instead (one or the other, once)."""

    retrieval: Retrieval
    prompt: Prompt | None
    parts: Iterator[Part]
    #: The generator chosen to answer (its id).
    generator_id: str
    #: What the answerability check said (None: it did not run, e.g. nothing was kept).
    verdict: Verdict | None = None
    #: The quote comes first and a written answer follows (`Written` among the parts).
    quote_first: bool = False
    #: The quoting generator whose quote stands when a written answer does not replace it.
    quoter_id: str = ""

    @property
    def refused_before_generation(self) -> bool:
        return self.prompt is None

    def stopped(self, *, wrote: bool, late: bool = False) -> Outcome:
        """What happened when the parts were closed before their `Outcome` (the visitor left,
        the answer reached its length, or a door that answers in one piece stopped waiting
        for the written answer: `late`). `wrote`: text of the written answer was shown."""
        if not self.quote_first:
            return Outcome(self.generator_id)
        ended = "late" if late else "stopped"
        if wrote:
            return Outcome(self.generator_id, ended)
        why = "was not ready in time" if late else "stopped before it wrote"
        return Outcome(self.quoter_id, ended, f"{self.generator_id} {why}")

    def read(self) -> Reading:
        """Every part: the text (with a quote first, the written answer when it was completed,
        else the quote) and the outcome. Waits for the whole answer."""
        quote: list[str] = []
        written: list[str] = []
        said = quote
        outcome = Outcome(self.generator_id)
        for part in self.parts:
            if isinstance(part, Written):
                said = written
            elif isinstance(part, Outcome):
                outcome = part
            elif isinstance(part, str):
                said.append(part)
        if self.quote_first and outcome.written != "complete":
            return Reading("".join(quote), outcome)
        return Reading("".join(written if self.quote_first else quote), outcome)
