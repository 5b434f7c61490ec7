"""What the Discord door stores: every interaction Discord delivered (an `/ask`, a button
press), unique by Discord's interaction id, so a delivery seen again is never answered twice.
The exchanges themselves are in the interaction log (assistant.Interaction)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class DiscordInteraction(models.Model):
    class Kind(models.TextChoices):
        ASK = "ask", "/ask"
        PRESS = "press", "Button press"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued for an answer"
        ANSWERING = "answering", "Answering"
        REPLIED = "replied", "Answered"
        LIMITED = "limited", "Over the rate limit (not answered)"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="discord_interactions"
    )
    #: Discord's id of the interaction (a snowflake).
    discord_id = models.CharField(max_length=32)
    kind = models.CharField(max_length=5, choices=Kind.choices, default=Kind.ASK)
    #: The application the interaction was for: the answer is written through its webhook.
    application_id = models.CharField(max_length=32)
    #: Empty for a direct message to the app.
    guild_id = models.CharField(max_length=32, blank=True)
    channel_id = models.CharField(max_length=32)
    user_id = models.CharField(max_length=32)
    #: The interaction's token (Discord accepts it for 15 minutes): sealed, and emptied once
    #: the answer is written.
    token_sealed = models.TextField(blank=True, editable=False)
    #: The question as it is asked: personal data masked.
    text = models.TextField(blank=True)
    conversation_id = models.CharField(max_length=64, db_index=True)
    interaction = models.ForeignKey(
        "assistant.Interaction", on_delete=models.SET_NULL, null=True, blank=True
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    #: Discord's id of the answer's (first) message.
    message_id = models.CharField(max_length=32, blank=True)
    error = models.CharField(max_length=200, blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    replied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "discord_id"], name="unique_discord_interaction"
            )
        ]
        indexes = [models.Index(fields=["project", "received_at"])]

    def __str__(self) -> str:
        return f"{self.discord_id} ({self.kind}, {self.status})"
