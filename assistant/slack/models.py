"""What the Slack door stores: every event Slack delivered that was taken as a question, unique
by Slack's event id, so a retried delivery is seen as such and answered once. The exchanges
themselves are in the interaction log (assistant.Interaction)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class SlackEvent(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued for an answer"
        ANSWERING = "answering", "Answering"
        REPLIED = "replied", "Answer posted"
        LIMITED = "limited", "Over the rate limit (not answered)"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="slack_events"
    )
    event_id = models.CharField(max_length=64)
    team_id = models.CharField(max_length=32)
    channel_id = models.CharField(max_length=32)
    user_id = models.CharField(max_length=32)
    #: The thread the answer goes to: the question's own ts when it started one.
    thread_ts = models.CharField(max_length=32)
    #: The question as it will be asked: mentions stripped, personal data masked.
    text = models.TextField()
    conversation_id = models.CharField(max_length=64, db_index=True)
    interaction = models.ForeignKey(
        "assistant.Interaction", on_delete=models.SET_NULL, null=True, blank=True
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    reply_ts = models.CharField(max_length=32, blank=True)
    error = models.CharField(max_length=200, blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    replied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(fields=["project", "event_id"], name="unique_slack_event")
        ]
        indexes = [models.Index(fields=["project", "received_at"])]

    def __str__(self) -> str:
        return f"{self.event_id} ({self.status})"
