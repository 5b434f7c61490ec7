from __future__ import annotations

from typing import Any

from django import forms

from assistant.ask import intake
from assistant.errors import IntakeError

#: The widget's conversations carry their last five exchanges; a replay needs no more.
MAX_EARLIER_QUESTIONS = 5


class SandboxForm(forms.Form):
    """The question and topic follow the intake's rules, like every other door; the form only
    turns its error into a field error (with the same code)."""

    # Not required and without the field's own validators: the intake's rules decide.
    question = forms.CharField(required=False, strip=False, validators=[])
    topic = forms.CharField(required=False, strip=False)
    threshold = forms.FloatField(min_value=0.0, max_value=1.0, required=False)
    previous = forms.CharField(
        required=False, strip=True, label="Earlier questions",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Optional: replay a conversation, one earlier question per line, oldest first.",
    )  # fmt: skip

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("question", "topic"):
            self.fields[name].validators = []  # CharField's NUL check: the intake has its own

    def clean_previous(self) -> list[str]:
        lines = [" ".join(line.split()) for line in self.cleaned_data["previous"].splitlines()]
        earlier = [line for line in lines if line]
        if len(earlier) > MAX_EARLIER_QUESTIONS:
            raise forms.ValidationError(
                f"At most {MAX_EARLIER_QUESTIONS} earlier questions.", code="too_many"
            )
        # Each earlier question reaches the pipeline as a question does: the intake's rules.
        for number, line in enumerate(earlier, start=1):
            try:
                intake.question_field({"question": line})
            except IntakeError as error:
                problem = next(iter(error.fields.values()), [error.message])[0]
                raise forms.ValidationError(
                    f"Earlier question {number}: {problem}", code=error.code
                ) from None
        return earlier

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
