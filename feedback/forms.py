from __future__ import annotations

from typing import Any, cast

from django import forms

PERIODS = [
    ("7", "Last 7 days"),
    ("30", "Last 30 days"),
    ("90", "Last 90 days"),
    ("365", "Last year"),
]


class PeriodForm(forms.Form):
    days = forms.TypedChoiceField(choices=PERIODS, coerce=int, required=False, empty_value=30)  # type: ignore[arg-type]  # coerced to int
    topic = forms.CharField(max_length=200, required=False)


class BlindSpotForm(forms.Form):
    days = forms.TypedChoiceField(choices=PERIODS, coerce=int, required=False, empty_value=30)  # type: ignore[arg-type]  # coerced to int
    below = forms.FloatField(
        label="Best relevance under", min_value=0.0, max_value=1.0, required=False,
        widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "the project threshold"}),
        help_text="Also list answered questions whose best chunk scored under this.",
    )  # fmt: skip


VOTES = [("", "Any vote"), ("up", "Thumbs up"), ("down", "Thumbs down")]


class FeedbackFilterForm(forms.Form):
    vote = forms.ChoiceField(choices=VOTES, required=False)
    topic = forms.CharField(max_length=200, required=False)
    channel = forms.ChoiceField(required=False)
    since = forms.DateField(
        label="From", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label="To", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        from assistant.models import Interaction

        cast(forms.ChoiceField, self.fields["channel"]).choices = [
            ("", "Any channel"),
            *Interaction.Channel.choices,
        ]

    def clean(self) -> dict:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", "The end date is before the start date.")
        return data

    def filters(self) -> dict[str, Any]:
        data = self.cleaned_data
        vote = {"up": 1, "down": -1}.get(data.get("vote") or "")
        return {
            "vote": vote,
            "topic": data.get("topic") or "",
            "channel": data.get("channel") or "",
            "since": data.get("since"),
            "until": data.get("until"),
        }


class ConversationFilterForm(forms.Form):
    q = forms.CharField(
        label="Search", max_length=200, required=False,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Words asked or answered"}),
    )  # fmt: skip
    channel = forms.ChoiceField(required=False)
    refused = forms.BooleanField(label="With a refusal", required=False)
    voted_down = forms.BooleanField(label="With a thumbs-down", required=False)
    handed_over = forms.BooleanField(label="Handed to a person", required=False)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        from assistant.models import Interaction

        cast(forms.ChoiceField, self.fields["channel"]).choices = [
            ("", "Any channel"),
            *Interaction.Channel.choices,
        ]

    def filters(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "search": (data.get("q") or "").strip(),
            "channel": data.get("channel") or "",
            "refused": bool(data.get("refused")),
            "voted_down": bool(data.get("voted_down")),
            "handed_over": bool(data.get("handed_over")),
        }


class _TextsField(forms.Field):
    """Several texts posted under one name (a cluster's questions)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: object) -> list[str]:
        texts = [str(v) for v in value] if isinstance(value, list | tuple) else []
        if len(texts) > MAX_CLUSTER_TEXTS or any(len(t) > MAX_TEXT_CHARS for t in texts):
            raise forms.ValidationError("Too many or too long questions.", code="too_long")
        return texts


MAX_CLUSTER_TEXTS = 200
MAX_TEXT_CHARS = 2000


class BlindSpotMarkForm(forms.Form):
    question = forms.CharField(max_length=MAX_TEXT_CHARS)
    topic = forms.CharField(max_length=200, required=False, strip=False)
    text = _TextsField(required=False)
    state = forms.ChoiceField(choices=[("dismissed", "Dismiss"), ("resolved", "Resolved")])


class CuratedAnswerForm(forms.Form):
    """A curated answer as the lead writes it (ingestion/curated.py validates and stores it)."""

    phrasings = forms.CharField(
        label="Questions it answers", max_length=3000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One phrasing a line: the visitor's words, and any other way to ask it.",
    )  # fmt: skip
    answer = forms.CharField(
        label="Answer", max_length=8000, widget=forms.Textarea(attrs={"rows": 7}),
        help_text="Markdown; links are kept. Visitors see it as an answer from the team.",
    )  # fmt: skip
    url = forms.CharField(
        label="Link shown with it", max_length=1000, required=False,
        help_text="Optional: the page a visitor can read more on (http or https).",
    )  # fmt: skip
    topic = forms.CharField(max_length=200, required=False)
    rests_on = forms.MultipleChoiceField(
        label="Sections it rests on", required=False, widget=forms.CheckboxSelectMultiple,
        help_text="You are warned when a sync changes one of them.",
    )  # fmt: skip
    from_answer = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, sections: list[dict[str, str]] = (), **kwargs: Any) -> None:  # type: ignore[assignment]
        super().__init__(*args, **kwargs)
        field = cast(forms.MultipleChoiceField, self.fields["rests_on"])
        field.choices = [(s["vector_id"], s["title"] or s["url"]) for s in sections]


class AnswerCheckForm(forms.Form):
    """A conversation kept as a check (feedback/checks.py validates and stores it)."""

    question = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
    topic = forms.CharField(max_length=200, required=False)
    expect = forms.ChoiceField(
        label="It must be", widget=forms.RadioSelect,
        choices=[("answered", "Answered"), ("refused", "Refused")],
    )  # fmt: skip
    cites = forms.CharField(
        label="Citing", max_length=1000, required=False,
        help_text="A source the answer must cite: part of its title or of its URL (a page, "
        "backup-dump.html, or a section, backup-dump.html#backup-dump-all). Empty: any.",
    )  # fmt: skip
    facts = forms.CharField(
        label="Key facts", max_length=2000, required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Words the answer must contain, one a line (e.g. “next billing period”).",
    )  # fmt: skip
    history = forms.JSONField(required=False, widget=forms.HiddenInput)
    from_answer = forms.CharField(max_length=64, required=False, widget=forms.HiddenInput)

    def clean_history(self) -> list[dict[str, str]]:
        value = self.cleaned_data.get("history") or []
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            raise forms.ValidationError("Not a conversation.")
        return value
