"""One table of the generators a project can choose: what builds each (from settings, and the
project's own model server where it has one), how many kept passages its prompt carries, what
it needs to answer on this server, and what the console says of it. `Project.generator`'s
choices, the pipeline (answer_path.py) and the console's notes read this table, so a new
generator is its adapter (wiring/adapters/), a factory in runtime.py, one row here and its
test (see wiring/README.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.conf import settings

from assistant.rag.ports import Generator
from assistant.wiring import runtime

#: The project's own model-server fields (base URL, model, API key), or None.
Server = Mapping[str, str] | None


@dataclass(frozen=True, slots=True)
class GeneratorKind:
    #: The value stored in `Project.generator`.
    choice: str
    #: The label of the project form's choice.
    label: str
    #: The generator, built (once per process) from the settings and the project's server.
    build: Callable[[Server], Generator]
    #: How many kept passages, best first, its prompt carries (0: all): a model that reads
    #: its prompt slowly answers sooner from fewer.
    passages: Callable[[], int] = lambda: 0
    #: It reads the project's own model server (the sealed key is unsealed only for it).
    server: bool = False
    #: Why it cannot answer on this server ("" when it can); its answers are quoted then.
    problem: Callable[[], str] = lambda: ""
    #: What the console says of it before this server has measured it.
    about: str = ""


def _ollama_problem() -> str:
    return "" if settings.OLLAMA_HOST else "OLLAMA_HOST is not set"


def _ollama(server: Server) -> Generator:
    """Ollama where OLLAMA_HOST names a server; quotes otherwise."""
    return runtime.ollama_generator() if settings.OLLAMA_HOST else runtime.extractive_generator()


def _openai(server: Server) -> Generator:
    endpoint = runtime.openai_endpoint(server)
    if endpoint is None:
        return runtime.extractive_generator()
    return runtime.openai_generator(endpoint)


GENERATORS: tuple[GeneratorKind, ...] = (
    GeneratorKind("auto", "Ollama when configured, otherwise extractive", _ollama),
    GeneratorKind(
        "extractive", "Extractive (no LLM)", lambda server: runtime.extractive_generator(),
        about="Quotes the best sentences: the quoting takes milliseconds, and with retrieval "
        "a visitor sees the first words about a second after asking (2 cores).",
    ),
    GeneratorKind(
        "ollama", "Ollama", _ollama, problem=_ollama_problem,
        about="Depends on your Ollama server and model.",
    ),
    GeneratorKind(
        "local", "Local model (llama.cpp, in this server)",
        lambda server: runtime.local_generator(),
        passages=lambda: settings.ASKDOCS_LOCAL_PASSAGES,
        problem=runtime.local_model_problem,
        about="about 3 s to the first words and 5 s for the whole answer on 2 cores",
    ),
    GeneratorKind(
        "openai", "OpenAI-compatible server (vLLM, llama-server, LM Studio…)", _openai,
        passages=lambda: settings.ASKDOCS_OPENAI_PASSAGES, server=True,
        about="Depends on your server and model.",
    ),
)  # fmt: skip

BY_CHOICE: dict[str, GeneratorKind] = {kind.choice: kind for kind in GENERATORS}


def generator_choices() -> list[tuple[str, str]]:
    """`Project.generator`'s choices: a callable, so a new row needs no migration."""
    return [(kind.choice, kind.label) for kind in GENERATORS]


def generator_for(choice: str, *, server: Server = None) -> Generator:
    """The generator a project chose; an unknown choice quotes (as `extractive`). `auto` is
    Ollama whenever OLLAMA_HOST is set, else quotes; `openai` the project's server (`server`,
    see `runtime.openai_endpoint`), or quotes when none is set."""
    kind = BY_CHOICE.get(choice)
    return runtime.extractive_generator() if kind is None else kind.build(server)


def passages_for(choice: str) -> int:
    kind = BY_CHOICE.get(choice)
    return 0 if kind is None else kind.passages()
