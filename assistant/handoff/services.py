"""Writes of "Ask a person": record a handoff with the conversation as the visitor saw it,
queue its delivery (assistant/handoff/sending.py does it, retried by the task), and say what
happens next."""

from __future__ import annotations

import logging

from django.db import transaction

from assistant.handoff.models import Handoff
from assistant.handoff.sending import mail_goes_to_outbox
from assistant.handoff.tasks import handoff_send
from assistant.models import Interaction, Project
from assistant.wiring import background

logger = logging.getLogger(__name__)

#: The most recent exchanges a handoff carries: the support team reads, it does not dig.
MAX_EXCHANGES = 20
Status = Handoff.Status


def conversation_exchanges(*, project: Project, conversation_id: str) -> list[dict[str, object]]:
    rows = (
        Interaction.objects.filter(project=project, conversation_id=conversation_id, error="")
        .exclude(generator="memory")  # "remember ..." commands are the visitor's private notes
        .order_by("-created_at", "-id")
        .values("question", "answer", "refused", "sources", "related")[:MAX_EXCHANGES]
    )
    return [
        {
            "question": row["question"],
            "answer": row["answer"],
            "refused": row["refused"],
            "sources": [{"title": s["title"], "url": s["url"]} for s in row["sources"]],
            "related": [{"title": p["title"], "url": p["url"]} for p in row["related"]],
        }
        for row in reversed(rows)
    ]


def handoff_create(
    *, project: Project, conversation_id: str, email: str = "", page_url: str = "",
    message: str = "",
) -> Handoff:  # fmt: skip
    """Record the handoff and, for an e-mail address or a webhook, queue its delivery."""
    via = Handoff.Via(project.contact_support)
    with transaction.atomic():
        handoff = Handoff.objects.create(
            project=project, conversation_id=conversation_id, email=email, page_url=page_url,
            message=message, via=via, target=project.contact_support_target,
            exchanges=conversation_exchanges(project=project, conversation_id=conversation_id),
            status=Status.OPENED if via == Handoff.Via.LINK else Status.QUEUED,
        )  # fmt: skip
        if via != Handoff.Via.LINK:
            _queue_delivery(handoff.pk)
    return handoff


def _queue_delivery(handoff_id: int) -> None:
    """The one place a service queues the task (after the commit); the task calls
    sending.handoff_deliver, never this module."""
    background.enqueue(handoff_send, handoff_id)


def what_happens_next(handoff: Handoff) -> str:
    """The sentence the visitor reads once the handoff is recorded."""
    if handoff.via == Handoff.Via.LINK:
        return "Our support page opens in a new tab; you can describe your question there."
    if handoff.via == Handoff.Via.EMAIL and mail_goes_to_outbox():
        # No mail server: the message becomes a file on the server (outbox/), read by nobody
        # until someone looks; the visitor must not wait for a reply that cannot come.
        return (
            "Your request is saved, but this site cannot send e-mail yet, so it has not reached "
            "our support team and nobody will reply from here. Please contact support another "
            "way if you need an answer soon."
        )
    if handoff.email:
        return (
            "Thanks! We've sent this conversation to our support team. "
            f"A person will reply to {handoff.email}, usually within one business day."
        )
    return (
        "Thanks! We've sent this conversation to our support team. You left no e-mail address, "
        "so they can't reply to you directly: add one and send again if you'd like an answer."
    )
