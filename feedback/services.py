"""Writes for feedback."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from assistant.models import Interaction
from feedback.models import Feedback


def feedback_record(
    *, interaction: Interaction, client_id: str, vote: int, comment: str | None = None
) -> tuple[Feedback, bool]:
    """Store a client's vote on an answer, or change it: never two rows for one client and
    answer. `comment=None` keeps the comment already given. Returns (feedback, created)."""
    defaults: dict[str, object] = {"vote": vote}
    if comment is not None:
        defaults["comment"] = comment.strip()
    try:
        with transaction.atomic():
            return Feedback.objects.update_or_create(
                interaction=interaction, client_id=client_id, defaults=defaults
            )
    except IntegrityError:
        # Two clicks raced past each other; the other one created the row, so update it.
        Feedback.objects.filter(interaction=interaction, client_id=client_id).update(**defaults)
        return Feedback.objects.get(interaction=interaction, client_id=client_id), False
