"""Writes for feedback."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import IntegrityError, transaction

from assistant.models import Interaction, Project
from assistant.personal_data.projects import masked
from feedback.models import BlindSpotMark, Feedback
from feedback.question_vectors import normalised


def feedback_record(
    *, interaction: Interaction, client_id: str, vote: int, comment: str | None = None
) -> tuple[Feedback, bool]:
    """Store a client's vote on an answer, or change it: never two rows for one client and
    answer. `comment=None` keeps the comment already given. Returns (feedback, created)."""
    defaults: dict[str, object] = {"vote": vote}
    if comment is not None:
        defaults["comment"] = masked(interaction.project, comment.strip())
    try:
        with transaction.atomic():
            return Feedback.objects.update_or_create(
                interaction=interaction, client_id=client_id, defaults=defaults
            )
    except IntegrityError:
        # Two clicks raced past each other; the other one created the row, so update it.
        Feedback.objects.filter(interaction=interaction, client_id=client_id).update(**defaults)
        return Feedback.objects.get(interaction=interaction, client_id=client_id), False


def blind_spot_mark(
    *,
    project: Project,
    topic: str,
    question: str,
    texts: Sequence[str],
    state: str,
    user_id: int | None,
) -> BlindSpotMark:
    """Dismiss or resolve a blind-spot cluster (identified by its topic and question texts)."""
    return BlindSpotMark.objects.create(
        project=project,
        topic=topic,
        question=question,
        texts=sorted({normalised(t) for t in [question, *texts] if t.strip()}),
        state=state,
        marked_by_id=user_id,
    )


def blind_spot_unmark(*, project: Project, mark_id: int) -> bool:
    """Undo a mark: the cluster is listed again. False when there was no such mark."""
    deleted, _ = BlindSpotMark.objects.filter(project=project, pk=mark_id).delete()
    return bool(deleted)
