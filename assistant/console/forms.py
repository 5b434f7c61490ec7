from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from assistant.ask import intake
from assistant.errors import IntakeError


class SandboxForm(forms.Form):
    """The question and topic follow the intake's rules, like every other door; the form only
    turns its error into a field error (with the same code)."""

    # Not required and without the field's own validators: the intake's rules decide.
    question = forms.CharField(required=False, strip=False, validators=[])
    topic = forms.CharField(required=False, strip=False)
    threshold = forms.FloatField(min_value=0.0, max_value=1.0, required=False)
    previous = forms.CharField(
        required=False, max_length=settings.ASKDOCS_MAX_QUESTION_CHARS, strip=True,
        label="Previous question",
        help_text="Optional: replay a conversation, as if this had been asked just before.",
    )  # fmt: skip

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("question", "topic"):
            self.fields[name].validators = []  # CharField's NUL check: the intake has its own

    def clean_question(self) -> str:
        return self._through_intake(intake.question_field)

    def clean_topic(self) -> str:
        return self._through_intake(intake.topic_field)

    def _through_intake(self, check: Any) -> str:
        try:
            return str(check(self.cleaned_data))
        except IntakeError as error:
            problem = next(iter(error.fields.values()), [error.message])[0]
            raise forms.ValidationError(problem, code=error.code) from None
