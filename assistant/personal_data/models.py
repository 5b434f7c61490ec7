"""A project's privacy settings (masking, retention periods) and the audit record of erasures,
exports and retention runs. The settings are an abstract base of assistant.Project; the
record is registered with the "assistant" app through assistant/models.py."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models

from assistant.personal_data.custom_patterns import CustomPattern, PatternError, validated

#: The longest retention period a project can set (ten years); 0 is "until erased".
MAX_DAYS = 3650


def validate_mask_patterns(value: object) -> None:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ValidationError("A list of {label, pattern}.")
    try:
        validated(
            [CustomPattern(label=str(i.get("label")), pattern=str(i.get("pattern"))) for i in value]
        )
    except PatternError as error:
        raise ValidationError(str(error)) from None


def days_field(what: str) -> models.PositiveIntegerField:
    return models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(MAX_DAYS)],
        help_text=f"Days {what} are kept; 0: until erased. Older ones are deleted every night.",
    )


class PrivacySettings(models.Model):
    """What a project masks in visitors' messages and how long it keeps what it learns."""

    mask_personal_data = models.BooleanField(
        "Mask personal data",
        default=True,
        help_text="Replace e-mail addresses, phone numbers, card numbers, IBANs, secrets and "
        "public IP addresses in visitors' messages with [email], [phone] … before anything "
        "is stored, searched or sent to a model.",
    )
    mask_patterns = models.JSONField(
        "Own patterns",
        default=list,
        blank=True,
        validators=[validate_mask_patterns],
        help_text="Your own kinds, one per line as label: regular expression "
        "(account: ACC-\\d{8} masks ACC-12345678 as [account]).",
    )
    keep_conversations_days = days_field("questions, answers and SMS texts")
    keep_feedback_comments_days = days_field("feedback comments (the votes stay)")
    keep_handoffs_days = days_field('"Ask a person" transcripts')
    keep_memory_days = days_field("remembered facts, since last changed,")

    class Meta:
        abstract = True


class PrivacyAudit(models.Model):
    """One erasure, export or retention run: what kind, by whom (staff user or command), and
    how many items of each kind; never whose data it was (the audit keeps no personal data)."""

    class Action(models.TextChoices):
        EXPORT = "export", "Export"
        ERASE = "erase", "Erasure"
        RETENTION = "retention", "Retention"

    action = models.CharField(max_length=10, choices=Action.choices)
    project = models.ForeignKey(
        "assistant.Project", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    #: visitor key, phone or e-mail: which kind of identifier was used, not its value.
    identifier_kind = models.CharField(max_length=10, blank=True, default="")
    #: "staff:<user id>" or "command" or "schedule".
    actor = models.CharField(max_length=40, blank=True, default="")
    counts = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.created_at:%Y-%m-%d %H:%M}"
