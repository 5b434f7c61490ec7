"""The one place a project's answer pipeline is built. Every door (widget, REST, SSE, SMS, MCP,
the CLI), the search, the console sandbox and the answer checks use it, so what staff test is
what visitors get: the same retriever, gate, answerability check, generator, custom
instructions, model server and section reading."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assistant.models import Project
from assistant.rag.answer import Answer
from assistant.rag.answering import Pipeline
from assistant.rag.ports import Retrieves
from assistant.rag.types import Question, Retrieval, Settings
from assistant.wiring import answer_path, runtime
from ingestion.selectors import chunks_by_vector_id, passages_in_scope, search_scope, section_chunks


@dataclass(frozen=True, slots=True)
class ProjectSearch:
    """A project's retriever over its own documents (`where` selects them)."""

    retriever: Retrieves
    where: Mapping[str, Any]

    def retrieve(self, question: Question, settings: Settings) -> Retrieval:
        return self.retriever.retrieve(question, settings, self.where)


@dataclass(frozen=True, slots=True)
class ProjectPipeline:
    """A project's whole answer path, bound to its documents."""

    pipeline: Pipeline
    where: Mapping[str, Any]

    def answer(self, question: Question, settings: Settings) -> Answer:
        return self.pipeline.answer(question, settings, self.where)


def project_search(project: Project, *, cached: bool = True) -> ProjectSearch:
    """`cached`: visitors' repeated questions come from the retrieval cache until the project's
    index changes; the sandbox and the checks pass False, to watch the pipeline itself run."""
    # First: a write by another process reaches this one before anything is read or cached.
    scope = search_scope(project_id=project.id)
    runtime.index_seen(project_id=project.id, stamp=scope.stamp)
    if cached:
        retriever = runtime.answer_retriever(
            project_id=project.id, chunks=chunks_by_vector_id, passages=passages_in_scope
        )
    else:
        retriever = runtime.retriever(chunks=chunks_by_vector_id, passages=passages_in_scope)
    return ProjectSearch(retriever, scope.where)


def project_pipeline(project: Project, *, cached: bool = True) -> ProjectPipeline:
    """The project's pipeline with its own generator, answerability setting, custom
    instructions and model server; a kept passage's section is read on past its chunk."""
    search = project_search(project, cached=cached)
    pipeline = answer_path.pipeline(
        retriever=search.retriever,
        generator_choice=project.generator,
        check_llm_answers=project.check_llm_answers,
        sections=section_chunks,
        instructions=project.custom_instructions,
        server=project_server(project),
        origins=tuple(project.allowed_origins),
    )
    return ProjectPipeline(pipeline, search.where)


def project_server(project: Project) -> dict[str, str] | None:
    """The project's own model-server fields, unsealed only when its generator uses them."""
    if project.generator != Project.Generator.OPENAI:
        return None
    return project.openai_endpoint_fields()
