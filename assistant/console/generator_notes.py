"""What the project page says under "Generator": how fast each one answers on this server (from
the interaction log), and a warning where it will be slow or cannot answer."""

from __future__ import annotations

import os
from dataclasses import dataclass

from django.conf import settings

from assistant.ask.selectors import generator_last_failure, generator_speeds
from assistant.models import Project
from assistant.wiring import runtime
from assistant.wiring.generators import GENERATORS, GeneratorKind

#: Above this, a written answer feels slow in a chat: the note warns.
SLOW_ANSWER_S = 10.0


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
    """A note for each generator of the table (assistant/wiring/generators.py) a project can
    pick by name: how fast it answers here, or what its row says, and why it cannot answer on
    this server. `project`: also say how its OpenAI-compatible server is set, and why its
    last answer was quoted if the server failed it (a wrong key, a dead server)."""
    speeds = generator_speeds()
    notes = []
    for kind in GENERATORS:
        if kind.choice == Project.Generator.AUTO:
            continue  # not a generator of its own: Ollama or the quote
        special = _SPECIAL.get(kind.choice)
        if special is not None:
            notes.append(special(kind, project, speeds))
            continue
        problem = kind.problem()
        notes.append(
            GeneratorNote(
                kind.choice,
                _short(kind.label),
                _measured(kind.choice, speeds) or kind.about,
                f"{problem}: answers are quoted." if problem else "",
            )  # fmt: skip
        )
    return notes


def _short(label: str) -> str:
    """The label without its explanation in brackets: "Extractive (no LLM)" → "Extractive"."""
    return label.split(" (", 1)[0]


def _local_note(
    kind: GeneratorKind, project: Project | None, speeds: dict[str, dict[str, float]]
) -> GeneratorNote:
    local_answer_s = speeds.get(kind.choice, {}).get("answer_s")
    cores = os.cpu_count() or 1
    problem = kind.problem()
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
    speed = _measured(kind.choice, speeds) or f"Not measured on this server yet; {kind.about}."
    return GeneratorNote(kind.choice, "Local model", speed, warning)


def _openai_note(
    kind: GeneratorKind, project: Project | None, speeds: dict[str, dict[str, float]]
) -> GeneratorNote:
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
    measured = _measured(kind.choice, speeds) or kind.about
    return GeneratorNote(
        kind.choice,
        "OpenAI-compatible server",
        f"{speed} {measured}".strip(),
        warning,
    )


#: Generators whose note says more than their row: the local model's speed on this server's
#: cores, the project's own server.
_SPECIAL = {Project.Generator.LOCAL: _local_note, Project.Generator.OPENAI: _openai_note}
