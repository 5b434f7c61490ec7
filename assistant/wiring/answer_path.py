"""The answer path as every door runs it, built from the models (runtime.py) and the project's
chosen generator (generators.py). ask/pipelines.py binds it to a project; the measuring lab
builds it on its own retriever."""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings

from assistant.rag.answer import Fallback
from assistant.rag.answering import Pipeline
from assistant.rag.judge.model_judge import ModelJudge
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
    judge_choice: str = "",
) -> Pipeline:
    """The answerability check always guards the extractive answerer (it would quote a near
    miss); an LLM can say it does not know, so for it the check is the project's choice
    (`Project.check_llm_answers`). With an LLM, the extractive answerer quotes first (with the
    check) and the written answer follows (rag/written.py); `instructions` are the project's
    own notes for the LLM. `sections` reads the rest of a kept passage's section (ingestion's
    selector); `server` the project's own model-server fields; `origins` the sites a written
    answer may link to besides its passages' (the project's allowed origins). A refusal the
    check is unsure of is put to the project's model (`judge_choice`, by default the model
    that writes; the measuring lab names one for quoted answers), and a would-be refusal is
    read a second time in the model's draft, all of it within ASKDOCS_JUDGE_WITHIN seconds."""
    generator = generator_for(generator_choice, server=server)
    check = generator.id == ExtractiveGenerator.id or check_llm_answers
    judging = generator_for(judge_choice, server=server) if judge_choice else generator
    within = settings.ASKDOCS_JUDGE_WITHIN
    judge = None
    if judging.id != ExtractiveGenerator.id and within > 0:
        judge = ModelJudge(judging, within=within)
    return Pipeline(
        retriever=retriever,
        generator=generator,
        answerability=runtime.answerability() if check else None,
        fallback=Fallback(runtime.extractive_generator(), runtime.answerability()),
        max_passages=passages_for(generator_choice),
        sections=sections,
        instructions=instructions,
        origins=origins,
        judge=judge,
    )
