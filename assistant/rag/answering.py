"""The whole pipeline for one question: retrieve, gate, check that the kept passages hold an
answer, and either refuse or generate."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from assistant.rag.answerability import Answerability, Verdict
from assistant.rag.ports import Generator, Retrieves
from assistant.rag.prompting import build_prompt
from assistant.rag.types import SORRY, Prompt, Question, Retrieval, Settings


@dataclass(slots=True)
class Answer:
    """Retrieval is done; `tokens` is consumed lazily by whoever streams the answer."""

    retrieval: Retrieval
    prompt: Prompt | None
    tokens: Iterator[str]
    generator_id: str
    #: What the answerability check said (None: it did not run, e.g. nothing was kept).
    verdict: Verdict | None = None

    @property
    def refused_before_generation(self) -> bool:
        return self.prompt is None


class Pipeline:
    def __init__(
        self,
        *,
        retriever: Retrieves,
        generator: Generator,
        answerability: Answerability | None = None,
    ) -> None:
        self.retriever = retriever
        self.generator = generator
        self.answerability = answerability

    def answer(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None = None
    ) -> Answer:
        return self.respond(question, self.retriever.retrieve(question, settings, where))

    def respond(self, question: Question, retrieval: Retrieval) -> Answer:
        """Everything after retrieval (the evaluation runner calls it with its own)."""
        kept = retrieval.kept
        if not kept:
            # Nothing relevant: say so plainly and never ask a generator to improvise.
            return Answer(retrieval, None, iter([SORRY]), generator_id="")
        verdict = None
        if self.answerability is not None:
            verdict = self.answerability.judge(question, kept)
            retrieval.timings_ms["answerability_ms"] = verdict.ms
            if not verdict.answerable:
                # On topic, but no sentence answers: refusing beats quoting a near miss.
                return Answer(retrieval, None, iter([SORRY]), generator_id="", verdict=verdict)
        prompt = build_prompt(question, kept)
        return Answer(
            retrieval, prompt, self.generator.stream(prompt), self.generator.id, verdict=verdict
        )


def is_refusal(text: str) -> bool:
    """An LLM may answer with the sorry-sentence itself, sometimes with trailing words."""
    return text.strip().startswith(SORRY.rstrip("."))
