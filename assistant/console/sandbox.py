"""The RAG sandbox: run the project's own pipeline (ask/pipelines.py, the one every door uses)
on one question and keep every intermediate step.

Nothing is written to the interaction log: an admin's experiments would skew the metrics.
With `stream=True` the answer is not generated here: the question is kept in the cache under a
random token and `sandbox_answer_stream` asks it again through the same pipeline while the
browser shows the answer arriving, as a visitor would see it (the quote, then a model's
written answer, checked)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.core.cache import cache
from django.utils.safestring import mark_safe

from assistant.ask.answer_log import verdict_log
from assistant.ask.intake import settings_for
from assistant.ask.pipelines import project_pipeline
from assistant.errors import UNAVAILABLE
from assistant.markdown import render
from assistant.models import Project
from assistant.rag.answer import Answer
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.quote.generator import ExtractiveGenerator
from assistant.rag.retrieve.related import RelatedPage, related_pages
from assistant.rag.types import Question, Settings, Turn

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
    rerank_top: int
    candidates: list[SandboxCandidate]
    prompt_system: str
    prompt_messages: list[tuple[str, str]]
    answer: str
    refused: bool
    generator: str
    error: str = ""
    #: Why another generator answered (the project's LLM server could not start an answer).
    fallback: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: Every text that was searched: the query, and the question without its topic.
    searched: list[str] = field(default_factory=list)
    #: Set when the answer is left to `sandbox_answer_stream`.
    stream_token: str = ""
    #: The answerability check ({} when it did not run): score, reason, best sentence.
    answerability: dict[str, object] = field(default_factory=dict)
    #: Which form of the query won: "question", or "with_history" for a follow-up.
    query_form: str = "question"
    #: With a refusal: the pages the visitor is offered under it ("These pages may help").
    related: list[RelatedPage] = field(default_factory=list)

    @property
    def kept_count(self) -> int:
        return sum(1 for c in self.candidates if c.kept)

    @property
    def refused_by_check(self) -> bool:
        """The answerability check found no sentence of the kept passages that answers."""
        return bool(self.answerability) and not self.answerability.get("answerable")

    @property
    def added_by_words(self) -> int:
        """Candidates the cross-encoder read beyond the search's best `rerank_top`: those the
        word search (BM25) added to its reading."""
        read = sum(1 for c in self.candidates if c.relevance is not None)
        return max(0, read - self.rerank_top) if self.rerank_top else 0

    @property
    def quoted(self) -> bool:
        """The extractive answerer wrote the answer: it quotes the kept passages, and no
        model reads a prompt."""
        return self.generator == ExtractiveGenerator.id

    @property
    def answer_html(self) -> str:
        """The Markdown answer as sanitised HTML (no raw HTML gets through)."""
        return mark_safe(render(self.answer))  # noqa: S308 - render() sanitises with nh3


STREAM_TTL_SECONDS = 600


def _answer(project: Project, asked: Question, settings: Settings) -> Answer:
    """The project's own pipeline, without the retrieval cache: the sandbox watches it run."""
    return project_pipeline(project, cached=False).answer(asked, settings)


_CACHE_PREFIX = "console:sandbox-question:"


def sandbox_run(
    *,
    project: Project,
    question: str,
    topic: str,
    threshold: float,
    stream: bool = False,
    previous: Sequence[str] = (),
) -> SandboxRun:
    """`previous`: the earlier questions of a conversation to replay, oldest first (user turns
    of the history, as the log gives them to a follow-up)."""
    history = tuple(Turn("user", text.strip()) for text in previous if text.strip())
    asked = Question(text=question.strip(), topic=topic.strip(), history=history)
    try:
        answer = _answer(project, asked, settings_for(project, threshold=threshold))
    except Exception:  # noqa: BLE001 - any failing model or store is shown the same way
        logger.exception("sandbox retrieval failed for project %s", project.pk)
        return SandboxRun(
            query="", threshold=threshold, max_kept=project.max_kept,
            rerank_top=project.rerank_top, candidates=[],
            prompt_system="", prompt_messages=[], answer="", refused=False, generator="",
            error=UNAVAILABLE,
        )  # fmt: skip
    retrieval = answer.retrieval
    prompt = answer.prompt
    error = text = token = fallback = ""
    generator = answer.generator_id
    if stream and prompt is not None:
        getattr(answer.parts, "close", lambda: None)()  # not started: nothing to stop upstream
        token = secrets.token_hex(16)
        asked_again = {"question": question, "topic": topic, "previous": list(previous)}
        cache.set(
            _CACHE_PREFIX + token,
            {"project_id": project.pk, "threshold": threshold, **asked_again},
            STREAM_TTL_SECONDS,
        )
    else:
        try:
            reading = answer.read()
            text, generator = reading.text, reading.outcome.generator
            fallback = reading.outcome.fallback
        except GeneratorUnavailable as exc:
            logger.warning("sandbox generator unavailable: %s", exc)
            text, error = "", UNAVAILABLE
    return SandboxRun(
        query=retrieval.query,
        threshold=threshold,
        max_kept=project.max_kept,
        rerank_top=project.rerank_top,
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
        generator=generator,
        fallback=fallback,
        error=error,
        timings_ms=retrieval.timings_ms,
        searched=retrieval.searched,
        stream_token=token,
        answerability=verdict_log(answer.verdict),
        query_form=retrieval.query_form,
        related=related_pages(retrieval) if answer.refused_before_generation else [],
    )


class UnknownStream(LookupError):
    """The token is unknown or expired (the page was left open for over ten minutes)."""


def sandbox_answer_stream(*, token: str) -> Answer:
    """The answer to the question `sandbox_run` kept, asked again through the project's
    pipeline: its parts stream as the widget's do. Raises UnknownStream at once; a model that
    cannot start raises GeneratorUnavailable, or its quote stands, when the parts are read."""
    kept = cache.get(_CACHE_PREFIX + token) if len(token) == 32 else None
    project = Project.objects.filter(pk=kept["project_id"]).first() if kept else None
    if kept is None or project is None:
        raise UnknownStream("This sandbox answer has expired; ask again.")
    history = tuple(Turn("user", str(text).strip()) for text in kept["previous"] if text)
    asked = Question(text=kept["question"].strip(), topic=kept["topic"].strip(), history=history)
    return _answer(project, asked, settings_for(project, threshold=kept["threshold"]))
