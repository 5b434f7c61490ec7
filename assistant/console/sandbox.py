"""The RAG sandbox: run the real pipeline on one question and keep every intermediate step.

Nothing is written to the interaction log: an admin's experiments would skew the metrics.
With `stream=True` the answer is not generated here: the prompt is kept in the cache under a
random token and `sandbox_answer_stream` generates it while the browser shows it arriving."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from django.core.cache import cache
from django.utils.safestring import mark_safe

from assistant.ask.intake import settings_for
from assistant.ask.services import UNAVAILABLE, verdict_log
from assistant.markdown import render
from assistant.models import Project
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.quote.generator import ExtractiveGenerator
from assistant.rag.retrieve.related import RelatedPage, related_pages
from assistant.rag.types import Part, Prompt, Question, Turn
from assistant.wiring import runtime
from ingestion.selectors import chunks_by_vector_id, passages_in_scope, search_scope, section_chunks

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
_CACHE_PREFIX = "console:sandbox-prompt:"


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
    settings = settings_for(project, threshold=threshold)
    history = tuple(Turn("user", text.strip()) for text in previous if text.strip())
    asked = Question(text=question.strip(), topic=topic.strip(), history=history)
    try:
        pipeline = runtime.pipeline(
            retriever=runtime.retriever(chunks=chunks_by_vector_id, passages=passages_in_scope),
            generator_choice=project.generator,
            check_llm_answers=project.check_llm_answers,
            sections=section_chunks,
            instructions=project.custom_instructions,
            openai=project.openai_endpoint_fields(),
        )
        scope = search_scope(project_id=project.id)
        runtime.index_seen(project_id=project.id, stamp=scope.stamp)
        answer = pipeline.answer(asked, settings, scope.where)
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
    error = text = token = ""
    if stream and prompt is not None:
        getattr(answer.parts, "close", lambda: None)()  # not started: nothing to stop upstream
        token = secrets.token_hex(16)
        cache.set(
            _CACHE_PREFIX + token,
            {"project_id": project.pk, "generator": project.generator, "prompt": prompt},
            STREAM_TTL_SECONDS,
        )
    else:
        try:
            text = "".join(answer.tokens)
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
        generator=answer.generator_id,
        fallback=answer.fallback,
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


def sandbox_answer_stream(*, token: str) -> Iterator[Part]:
    """The answer to a prompt `sandbox_run` kept, as the generator writes it. Raises
    UnknownStream at once, or GeneratorUnavailable when the first token is asked for."""
    kept = cache.get(_CACHE_PREFIX + token) if len(token) == 32 else None
    if kept is None or not isinstance(kept.get("prompt"), Prompt):
        raise UnknownStream("This sandbox answer has expired; ask again.")
    # The project's server key is read again here, never kept in the cache with the prompt.
    project = Project.objects.filter(pk=kept["project_id"]).first()
    fields = project.openai_endpoint_fields() if project is not None else None
    return runtime.generator_for(kept["generator"], openai=fields).stream(kept["prompt"])
