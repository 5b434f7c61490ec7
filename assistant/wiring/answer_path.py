"""The answer path as every door runs it, built from the models (runtime.py) and the project's
chosen generator (generators.py). ask/pipelines.py binds it to a project; the measuring lab
builds it on its own retriever."""

from __future__ import annotations

from collections.abc import Mapping

from assistant.rag.answer import Fallback
from assistant.rag.answering import Pipeline
from assistant.rag.ports import Retrieves, SectionLookup
from assistant.rag.quote.generator import ExtractiveGenerator
from assistant.wiring import runtime
from assistant.wiring.generators import generator_for, passages_for


def pipeline(
    *,
    retriever: Retrieves,
    generator_choice: str,
    check_llm_answers: bool = False,
    sections: SectionLookup | None = None,
    instructions: str = "",
    server: Mapping[str, str] | None = None,
    origins: tuple[str, ...] = (),
) -> Pipeline:
    """The answerability check always guards the extractive answerer (it would quote a near
    miss); an LLM can say it does not know, so for it the check is the project's choice
    (`Project.check_llm_answers`). With an LLM, the extractive answerer quotes first (with the
    check) and the written answer follows (rag/written.py); `instructions` are the project's
    own notes for the LLM. `sections` reads the rest of a kept passage's section (ingestion's
    selector); `server` the project's own model-server fields; `origins` the sites a written
    answer may link to besides its passages' (the project's allowed origins)."""
    generator = generator_for(generator_choice, server=server)
    check = generator.id == ExtractiveGenerator.id or check_llm_answers
    return Pipeline(
        retriever=retriever,
        generator=generator,
        answerability=runtime.answerability() if check else None,
        fallback=Fallback(runtime.extractive_generator(), runtime.answerability()),
        max_passages=passages_for(generator_choice),
        sections=sections,
        instructions=instructions,
        origins=origins,
    )
