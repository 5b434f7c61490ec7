"""Reads of the SMS channel."""

from __future__ import annotations

from assistant.models import Project


def project_by_sms_number(number: str) -> Project | None:
    """The project that answers texts sent to `number` (E.164, as Twilio sends it)."""
    number = number.strip()
    return Project.objects.filter(sms_number=number).first() if number else None
