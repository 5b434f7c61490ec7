"""Writes of "Ask a person": record a handoff with the conversation as the visitor saw it,
deliver it in the background (retried), and say what happens next."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from assistant.handoff.delivery import DeliveryFailed, deliver
from assistant.handoff.models import Handoff
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
            from assistant.handoff.tasks import handoff_send

            background.enqueue(handoff_send, handoff.pk)
    return handoff


def what_happens_next(handoff: Handoff) -> str:
    """The sentence the visitor reads once the handoff is recorded."""
    if handoff.via == Handoff.Via.LINK:
        return "Our support page opens in a new tab; you can describe your question there."
    if handoff.email:
        return (
            "Thanks! We've sent this conversation to our support team. "
            f"A person will reply to {handoff.email}, usually within one business day."
        )
    return (
        "Thanks! We've sent this conversation to our support team. You left no e-mail address, "
        "so they can't reply to you directly: add one and send again if you'd like an answer."
    )


def handoff_deliver(*, handoff_id: int, last_attempt: bool) -> None:
    """One delivery attempt. Raises DeliveryFailed when another attempt should follow;
    records the failure for good on the last attempt or when the receiver refused."""
    claimed = Handoff.objects.filter(pk=handoff_id, status=Status.QUEUED).update(
        status=Status.SENDING
    )
    if not claimed:
        logger.info("handoff %s is not waiting to be sent; nothing to do", handoff_id)
        return
    handoff = Handoff.objects.select_related("project").get(pk=handoff_id)
    attempts = handoff.attempts + 1
    try:
        deliver(handoff)
    except DeliveryFailed as exc:
        final = last_attempt or not exc.retry
        logger.warning("handoff %s not delivered (attempt %s): %s", handoff_id, attempts, exc)
        Handoff.objects.filter(pk=handoff_id).update(
            status=Status.FAILED if final else Status.QUEUED, attempts=attempts,
            error=str(exc)[:200],
        )  # fmt: skip
        if not final:
            raise
        return
    written = handoff.via == Handoff.Via.EMAIL and mail_goes_to_outbox()
    Handoff.objects.filter(pk=handoff_id).update(
        status=Status.WRITTEN if written else Status.SENT, attempts=attempts, error="",
        delivered_at=timezone.now(),
    )  # fmt: skip


def mail_goes_to_outbox() -> bool:
    """No mail server is configured: Django's file backend writes each message into
    EMAIL_FILE_PATH (DATA_DIR/outbox/) and nobody receives it."""
    return settings.EMAIL_BACKEND == "django.core.mail.backends.filebased.EmailBackend"
