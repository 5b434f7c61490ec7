"""Searching a project's documents without writing an answer: the REST retrieve door (which
logs nothing) and the MCP `search_docs` tool (logged like a question, so its misses show in the
metrics and blind spots)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from assistant.ask.answer_log import AnswerLog
from assistant.ask.intake import RetrieveRequest
from assistant.ask.pipelines import project_search
from assistant.errors import UNAVAILABLE
from assistant.models import Project
from assistant.rag.types import Question, Retrieval, Settings
from ingestion.selectors import chunk_places

logger = logging.getLogger(__name__)


class SearchUnavailable(Exception):
    """A model or the vector store failed; the message is the one every door shows."""

    def __init__(self) -> None:
        super().__init__(UNAVAILABLE)


def retrieve(*, project: Project, question: Question, settings: Settings) -> Retrieval:
    """Candidates for a question, scored and gated by the project's own pipeline."""
    return project_search(project).retrieve(question, settings)


@dataclass(frozen=True, slots=True)
class Passage:
    title: str
    heading_path: str
    url: str
    relevance: float | None
    text: str
    curated: bool = False


@dataclass(frozen=True, slots=True)
class SearchResult:
    passages: list[Passage]
    #: Why nothing is returned ("" when passages are): no passage passed the relevance gate.
    refusal: str
    best_relevance: float | None
    threshold: float
    answer_id: str


def search(*, asked: RetrieveRequest, channel: str) -> SearchResult:
    """The passages that pass the project's relevance gate, best first, and the interaction
    logged. Raises SearchUnavailable (logged too) when a model or the store fails."""
    started = time.perf_counter()
    question = Question(asked.question, asked.topic)
    log = AnswerLog(project=asked.project, channel=channel, conversation_id="", question=question)
    log.generator = "search"
    try:
        retrieval = retrieve(project=asked.project, question=question, settings=asked.settings)
    except Exception as exc:
        logger.exception("search failed for project %s", asked.project.pk)
        log.error = type(exc).__name__[:60]
        log.save(time.perf_counter() - started)
        raise SearchUnavailable from exc
    log.retrieval = retrieval
    interaction = log.save(time.perf_counter() - started)
    kept = retrieval.kept[: asked.num_results]
    places = chunk_places([c.chunk.id for c in kept])
    passages = [
        Passage(
            title=places[c.chunk.id].document_title if c.chunk.id in places else c.chunk.title,
            heading_path=places[c.chunk.id].heading_path if c.chunk.id in places else "",
            url=c.chunk.url,
            relevance=None if c.relevance is None else round(c.relevance, 4),
            text=c.chunk.text,
            curated=c.chunk.curated,
        )
        for c in kept
    ]
    best, threshold = retrieval.best_relevance, asked.settings.threshold
    return SearchResult(
        passages=passages,
        refusal="" if passages else refusal_reason(best, threshold),
        best_relevance=None if best is None else round(best, 4),
        threshold=threshold,
        answer_id=str(interaction.answer_id),
    )


def refusal_reason(best: float | None, threshold: float) -> str:
    if best is None:
        return "Nothing in this project's documents matches the query."
    return (
        f"No passage is relevant enough: the best one scored {best:.2f}, below this "
        f"project's relevance gate of {threshold:.2f}. The documents probably do not cover it."
    )
