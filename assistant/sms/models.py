"""What the SMS channel stores: who is in which conversation, and every inbound text with the
reply it got. The exchanges themselves are in the interaction log (assistant.Interaction)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class SmsConversation(models.Model):
    """The conversation a phone number is in with a project's number, right now.

    A new `conversation_id` starts a fresh memory: after a quiet spell or on `reset`."""

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="sms_conversations"
    )
    phone = models.CharField(max_length=32)
    conversation_id = models.CharField(max_length=64)
    last_message_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "phone"], name="unique_sms_conversation")
        ]

    def __str__(self) -> str:
        return f"{self.phone} -> {self.project_id}"


class SmsMessage(models.Model):
    """One inbound text, unique by Twilio's MessageSid, so a retried delivery is seen as such."""

    class Kind(models.TextChoices):
        QUESTION = "question", "Question"
        HELP = "help", "Help"
        RESET = "reset", "Reset"
        EMPTY = "empty", "Empty"
        OPT_OUT = "opt_out", "Opt-out/in keyword (left to Twilio)"

    class Status(models.TextChoices):
        RECEIVED = "received", "Received"
        ANSWERED = "answered", "Answer ready"
        QUEUED = "queued", "Queued for sending"
        SENDING = "sending", "Sending"
        REPLIED = "replied", "Replied"
        IGNORED = "ignored", "Ignored"
        FAILED = "failed", "Failed"

    class Delivery(models.TextChoices):
        NONE = "", "None"
        TWIML = "twiml", "In the webhook response (TwiML)"
        REST = "rest", "Through the REST API"

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="sms_messages"
    )
    message_sid = models.CharField(max_length=64, unique=True)
    idempotency_token = models.CharField(max_length=128, blank=True)
    from_number = models.CharField(max_length=32)
    to_number = models.CharField(max_length=32)
    body = models.TextField(blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    conversation_id = models.CharField(max_length=64, blank=True)
    interaction = models.ForeignKey(
        "assistant.Interaction", on_delete=models.SET_NULL, null=True, blank=True
    )
    reply = models.TextField(blank=True)
    delivery = models.CharField(max_length=5, choices=Delivery.choices, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RECEIVED)
    reply_sid = models.CharField(max_length=64, blank=True)
    error = models.CharField(max_length=200, blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    replied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["idempotency_token"],
                condition=~models.Q(idempotency_token=""),
                name="unique_sms_idempotency_token",
            )
        ]
        indexes = [models.Index(fields=["project", "received_at"])]

    def __str__(self) -> str:
        return f"{self.message_sid} ({self.status})"
