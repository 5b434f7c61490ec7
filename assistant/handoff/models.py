"""A conversation a visitor handed over to the project's support team ("Ask a person")."""

from __future__ import annotations

from django.db import models


class Handoff(models.Model):
    class Via(models.TextChoices):
        EMAIL = "email", "E-mail"
        WEBHOOK = "webhook", "Webhook"
        LINK = "link", "Support page"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        #: No mail server (EMAIL_HOST unset): the message is a file in DATA_DIR/outbox/.
        WRITTEN = "written", "Written to outbox/"
        FAILED = "failed", "Failed"
        #: A support page: the visitor was sent there; nothing is delivered by us.
        OPENED = "opened", "Support page opened"

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="handoffs"
    )
    conversation_id = models.CharField(max_length=64, db_index=True)
    #: The visitor's address, when they gave one, so support can reply.
    email = models.EmailField(blank=True, default="")
    page_url = models.URLField(max_length=2000, blank=True, default="")
    message = models.TextField(blank=True, default="")
    #: The conversation as the visitor saw it, copied from the interaction log when handed
    #: over: [{question, answer, refused, sources[{title, url}], related[{title, url}]}].
    exchanges = models.JSONField(default=list)
    via = models.CharField(max_length=10, choices=Via.choices)
    #: Where it went (the project's setting at the time: an address or a URL).
    target = models.CharField(max_length=500)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "created_at"])]

    def __str__(self) -> str:
        return f"handoff {self.pk} ({self.get_status_display()})"
