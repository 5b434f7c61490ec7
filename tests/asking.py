"""Asking as a door does, for the tests: the question let in for its project (with the
project's settings, as the intake builds them), then answered by the real services."""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence

from assistant import admission
from assistant.ask import services
from assistant.ask.intake import AskRequest, let_in
from assistant.models import Interaction, Project
from assistant.rag.types import Turn


def request(
    project: Project,
    *,
    question: str,
    topic: str = "",
    conversation_id: str = "",
    history: Sequence[Turn] = (),
    user_key: str = "",
    client: str = "",
) -> AskRequest:
    return let_in(
        project, question=question, topic=topic, conversation_id=conversation_id,
        history=tuple(history), user_key=user_key, client=client,
    )  # fmt: skip


def ask(
    *,
    project: Project,
    channel: str = Interaction.Channel.API,
    write_within: float | None = None,
    **fields: object,
) -> services.AskResult:
    asked = request(project, **fields)  # type: ignore[arg-type]
    return services.ask(asked, channel=channel, write_within=write_within)


def ask_stream(
    *,
    project: Project,
    channel: str = Interaction.Channel.API,
    max_chars: int = 0,
    max_seconds: float = 0,
    write_within: float = 0,
    clock: Callable[[], float] | None = None,
    **fields: object,
) -> Generator[services.Event, None, None]:
    asked = request(project, **fields)  # type: ignore[arg-type]
    limits = services.Limits(max_chars, max_seconds, write_within)
    if clock is None:
        return services.ask_stream(asked, channel=channel, limits=limits)
    return services.ask_stream(asked, channel=channel, limits=limits, clock=clock)


def fill(project_key: str) -> list[admission.Ticket]:
    """Every place in the answering gate the project may hold, taken (as by other questions);
    release the tickets to give them back."""
    held = []
    while True:
        try:
            held.append(admission.admit(project_key))
        except admission.Overloaded:
            return held
