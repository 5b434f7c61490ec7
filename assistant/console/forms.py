from __future__ import annotations

from django import forms
from django.conf import settings


class SandboxForm(forms.Form):
    question = forms.CharField(max_length=settings.ASKDOCS_MAX_QUESTION_CHARS, strip=True)
    topic = forms.CharField(max_length=200, required=False, strip=True)
    threshold = forms.FloatField(min_value=0.0, max_value=1.0, required=False)
    previous = forms.CharField(
        required=False, max_length=settings.ASKDOCS_MAX_QUESTION_CHARS, strip=True,
        label="Previous question",
        help_text="Optional: replay a conversation, as if this had been asked just before.",
    )  # fmt: skip
