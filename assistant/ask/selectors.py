"""Reads for the assistant app."""

from __future__ import annotations

from assistant.models import Interaction, Project
from assistant.rag.types import Turn


def project_by_key(key: str) -> Project | None:
    return Project.objects.filter(public_key=key).first() if key else None


def conversation_history(
    *, project: Project, conversation_id: str, exchanges: int = 5
) -> list[Turn]:
    """The last `exchanges` question/answer pairs of a conversation, oldest first, from the
    interaction log (so history survives restarts and works across processes)."""
    if not conversation_id:
        return []
    rows = list(
        Interaction.objects.filter(project=project, conversation_id=conversation_id, error="")
        # Memory commands ("remember I'm on the Enterprise plan") stay out: facts reach the
        # model only as the injected turn, and never the retrieval query.
        .exclude(generator="memory")
        .order_by("-created_at", "-id")
        .values_list("question", "answer")[:exchanges]
    )
    turns: list[Turn] = []
    for question, answer in reversed(rows):
        turns += [Turn("user", question), Turn("assistant", answer)]
    return turns


def conversation_exists(*, project: Project, conversation_id: str) -> bool:
    return Interaction.objects.filter(project=project, conversation_id=conversation_id).exists()
