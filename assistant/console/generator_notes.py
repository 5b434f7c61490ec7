"""What the project page says under "Generator": how fast each one answers on this server (from
the interaction log), and a warning where it will be slow or cannot answer."""

from __future__ import annotations

import os
from dataclasses import dataclass

from django.conf import settings

from assistant.ask.selectors import generator_last_failure, generator_speeds
from assistant.models import Project
from assistant.wiring import runtime

#: Above this, a written answer feels slow in a chat: the note warns.
SLOW_ANSWER_S = 10.0

#: The local model on the two-core machine it was measured on (`bench --only local`, README
#: "Written answers"): shown until this server has answers of its own.
REFERENCE = "about 3 s to the first words and 5 s for the whole answer on 2 cores"


@dataclass(frozen=True, slots=True)
class GeneratorNote:
    choice: str
    label: str
    speed: str
    warning: str = ""


def _measured(kind: str, speeds: dict[str, dict[str, float]]) -> str:
    figures = speeds.get(kind)
    if not figures:
        return ""
    return (
        f"Here: first words {figures['first_token_s']:g} s after the question, whole answer in "
        f"{figures['answer_s']:g} s (median of the last {figures['n']:g} answers)."
    )


def generator_notes(project: Project | None = None) -> list[GeneratorNote]:
    """`project`: also say how its OpenAI-compatible server is set, and why its last answer
    was quoted if the server failed it (a wrong key, a dead server)."""
    speeds = generator_speeds()
    cores = os.cpu_count() or 1
    notes = [
        GeneratorNote(
            Project.Generator.EXTRACTIVE,
            "Extractive",
            _measured("extractive", speeds)
            or "Quotes the best sentences: the quoting takes milliseconds, and with retrieval "
            "a visitor sees the first words about a second after asking (2 cores).",
        )
    ]
    local_speed = _measured("local", speeds)
    local_answer_s = speeds.get("local", {}).get("answer_s")
    problem = runtime.local_model_problem()
    if problem:
        warning = f"Cannot answer on this server ({problem}); answers are quoted until then."
    elif local_answer_s is not None and local_answer_s > SLOW_ANSWER_S:
        warning = (
            f"Slow here: {local_answer_s:g} s per answer, and questions are answered one at a "
            "time, so at busy times visitors wait in line (or get a quoted answer after "
            f"{settings.ASKDOCS_LOCAL_FIRST_TOKEN_TIMEOUT:g} s)."
        )
    elif local_answer_s is None and cores <= 4:
        warning = (
            f"This server has {cores} cores: expect seconds per answer, one question at a time."
        )
    else:
        warning = ""
    notes.append(
        GeneratorNote(
            Project.Generator.LOCAL,
            "Local model",
            local_speed or f"Not measured on this server yet; {REFERENCE}.",
            warning,
        )
    )
    ollama = _measured("ollama", speeds)
    notes.append(
        GeneratorNote(
            Project.Generator.OLLAMA,
            "Ollama",
            ollama or "Depends on your Ollama server and model.",
            "" if settings.OLLAMA_HOST else "OLLAMA_HOST is not set: answers are quoted.",
        )
    )
    notes.append(_openai_note(project, speeds))
    return notes


def _openai_note(project: Project | None, speeds: dict[str, dict[str, float]]) -> GeneratorNote:
    fields = project.openai_endpoint_fields() if project is not None else None
    endpoint = runtime.openai_endpoint(fields)
    if endpoint is None:
        speed = ""
        warning = "No server set (Server base URL below, or ASKDOCS_OPENAI_BASE_URL): "
        warning += "answers are quoted."
    else:
        model = f", model {endpoint.model}" if endpoint.model else ""
        speed = f"Asks {endpoint.chat_url.removesuffix('/chat/completions')}{model}."
        failure = generator_last_failure(project=project, kind="openai") if project else ""
        warning = f"The last answer was quoted instead: {failure}" if failure else ""
    measured = _measured("openai", speeds) or "Depends on your server and model."
    return GeneratorNote(
        Project.Generator.OPENAI,
        "OpenAI-compatible server",
        f"{speed} {measured}".strip(),
        warning,
    )
