"""The RAG sandbox: run the real pipeline on one question and keep every intermediate step.

Nothing is written to the interaction log: an admin's experiments would skew the metrics."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from assistant import runtime
from assistant.models import Project
from assistant.rag.answering import Pipeline
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.types import Question, Settings
from assistant.services import UNAVAILABLE

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class SandboxCandidate:
    title: str
    url: str
    text: str
    similarity: float | None  # None: found by lexical search only
    relevance: float | None
    kept: bool


@dataclass(slots=True)
class SandboxRun:
    query: str
    threshold: float
    max_kept: int
    candidates: list[SandboxCandidate]
    prompt_system: str
    prompt_messages: list[tuple[str, str]]
    answer: str
    refused: bool
    generator: str
    error: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def kept_count(self) -> int:
        return sum(1 for c in self.candidates if c.kept)


def sandbox_run(*, project: Project, question: str, topic: str, threshold: float) -> SandboxRun:
    settings = Settings(
        threshold=threshold,
        num_candidates=project.num_candidates,
        rerank_top=project.rerank_top,
        max_kept=project.max_kept,
    )
    asked = Question(text=question.strip(), topic=topic.strip())
    try:
        pipeline = Pipeline(
            retriever=runtime.retriever(), generator=runtime.generator_for(project.generator)
        )
        answer = pipeline.answer(asked, settings, {"project_id": project.id})
    except Exception:  # noqa: BLE001 - any failing model or store is shown the same way
        logger.exception("sandbox retrieval failed for project %s", project.pk)
        return SandboxRun(
            query="", threshold=threshold, max_kept=project.max_kept, candidates=[],
            prompt_system="", prompt_messages=[], answer="", refused=False, generator="",
            error=UNAVAILABLE,
        )  # fmt: skip
    retrieval = answer.retrieval
    error = ""
    try:
        text = "".join(answer.tokens)
    except GeneratorUnavailable as exc:
        logger.warning("sandbox generator unavailable: %s", exc)
        text, error = "", UNAVAILABLE
    prompt = answer.prompt
    return SandboxRun(
        query=retrieval.query,
        threshold=threshold,
        max_kept=project.max_kept,
        candidates=[
            SandboxCandidate(
                title=c.chunk.title,
                url=c.chunk.url,
                text=c.chunk.text,
                similarity=c.similarity,
                relevance=c.relevance,
                kept=c.kept,
            )  # fmt: skip
            for c in retrieval.candidates
        ],
        prompt_system=prompt.system if prompt else "",
        prompt_messages=[(t.role, t.content) for t in prompt.messages] if prompt else [],
        answer=text,
        refused=answer.refused_before_generation,
        generator=answer.generator_id,
        error=error,
        timings_ms=retrieval.timings_ms,
    )
