from __future__ import annotations

from typing import Any

from django import forms

from assistant.models import Project
from assistant.origins import normalise_origin
from assistant.personal_data import custom_patterns
from assistant.rag.types import RERANK_MS_PER_CHUNK


class OriginsField(forms.CharField):
    """One origin per line in a textarea; a list of normalised origins out."""

    widget = forms.Textarea(attrs={"rows": 5, "placeholder": "https://app.example.com"})

    def prepare_value(self, value: object) -> object:
        return "\n".join(value) if isinstance(value, list) else value

    def clean(self, value: object) -> list[str]:
        text = super().clean(value) or ""
        origins: list[str] = []
        for line in str(text).splitlines():
            if not line.strip():
                continue
            try:
                origin = normalise_origin(line)
            except ValueError as exc:
                raise forms.ValidationError(str(exc)) from None
            if origin not in origins:
                origins.append(origin)
        return origins


class MaskPatternsField(forms.CharField):
    """A project's own masking patterns, one `label: pattern` a line; a checked list out."""

    widget = forms.Textarea(attrs={"rows": 3, "placeholder": "account: ACC-\\d{8}"})

    def prepare_value(self, value: object) -> object:
        return custom_patterns.as_lines(value) if isinstance(value, list) else value

    def clean(self, value: object) -> list[dict[str, str]]:
        text = super().clean(value) or ""
        try:
            return [p.as_dict() for p in custom_patterns.parse_lines(str(text))]
        except custom_patterns.PatternError as error:
            raise forms.ValidationError(str(error)) from None


RETENTION_FIELDS = (
    "keep_conversations_days", "keep_feedback_comments_days", "keep_handoffs_days",
    "keep_memory_days",
)  # fmt: skip


class ProjectForm(forms.ModelForm):
    allowed_origins = OriginsField(
        required=False, help_text="Pages on these origins may embed the widget. One per line."
    )
    # Write-only: the stored key is sealed and never rendered back (only its last characters).
    openai_api_key = forms.CharField(
        label="Server API key",
        required=False,
        max_length=500,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
    )
    openai_api_key_clear = forms.BooleanField(label="Forget the stored API key", required=False)
    mask_patterns = MaskPatternsField(
        label="Own patterns", required=False, max_length=5000,
        help_text=str(Project._meta.get_field("mask_patterns").help_text),
    )  # fmt: skip

    class Meta:
        model = Project
        fields = [
            "name", "allowed_origins", "threshold", "num_candidates", "rerank_top", "max_kept",
            "generator", "openai_base_url", "openai_model", "openai_api_key",
            "openai_api_key_clear", "check_llm_answers", "custom_instructions",
            "memory_threshold", "memory_learns_statements",
            "sms_number", "contact_support", "contact_support_target",
            "mask_personal_data", "mask_patterns", *RETENTION_FIELDS,
        ]  # fmt: skip
        labels = {
            "num_candidates": "Candidates",
            "rerank_top": "Reranked",
            "max_kept": "Kept at most",
            "memory_threshold": "Memory threshold",
            "memory_learns_statements": "Remember statements",
            "keep_conversations_days": "Keep conversations (days)",
            "keep_feedback_comments_days": "Keep feedback comments (days)",
            "keep_handoffs_days": 'Keep "Ask a person" transcripts (days)',
            "keep_memory_days": "Keep remembered facts (days)",
        }
        help_texts = {
            "threshold": "Chunks scoring at least this (0–1) may be used in an answer.",
            "num_candidates": "Nearest chunks found per question.",
            "rerank_top": "Of those, how many (best first) the cross-encoder scores: each "
            f"costs about {RERANK_MS_PER_CHUNK} ms, twice that for a question with a page topic "
            "(read with and without it).",
            "max_kept": "Chunks at most in the prompt.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hint = self.instance.openai_api_key_hint
        self.fields["openai_api_key"].help_text = (
            f"Stored ({hint}); type a new one to replace it, or leave empty to keep it."
            if hint
            else "For the server's Authorization header. Empty: ASKDOCS_OPENAI_API_KEY "
            "(sent only to the server of ASKDOCS_OPENAI_BASE_URL)."
        )
        for name in RETENTION_FIELDS:  # empty: kept until erased, like 0
            self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        for name in RETENTION_FIELDS:
            if cleaned.get(name) is None and name not in self.errors:
                cleaned[name] = 0
        return cleaned

    def save(self, commit: bool = True) -> Project:
        key = self.cleaned_data.get("openai_api_key", "")
        if key:
            self.instance.set_openai_api_key(key)
        elif self.cleaned_data.get("openai_api_key_clear"):
            self.instance.set_openai_api_key("")
        project: Project = super().save(commit=commit)
        return project

    def clean_sms_number(self) -> str:
        # The model's conditional unique constraint would report a clash as a form-wide
        # "constraint violated"; say it next to the field instead (a raised field error also
        # keeps the constraint from reporting it twice).
        number: str = self.cleaned_data["sms_number"]
        taken = Project.objects.exclude(pk=self.instance.pk).filter(sms_number=number)
        if number and taken.exists():
            raise forms.ValidationError(f"Project {taken.get().name} already answers this number.")
        return number


class ProjectCreateForm(forms.ModelForm):
    """A new project: a name and where it may be embedded; the knobs start at their defaults."""

    allowed_origins = ProjectForm.base_fields["allowed_origins"]

    class Meta:
        model = Project
        fields = ["name", "allowed_origins"]


#: widget.js's own colour: a colour picker always sends one, and this one needs no attribute.
WIDGET_COLOR = "#3b5bdb"


class WidgetPreviewForm(forms.Form):
    """How the widget looks and what it starts with on a page: the script tag's optional
    attributes (widget.js reads them; nothing is stored)."""

    DEFAULTS = {"position": "right", "color": WIDGET_COLOR}

    title = forms.CharField(max_length=60, required=False, help_text='Default: "Ask AI".')
    color = forms.RegexField(
        regex=r"^#[0-9a-fA-F]{6}$", required=False, widget=forms.TextInput(attrs={"type": "color"}),
        error_messages={"invalid": "Pick a colour like #3b5bdb."},
    )  # fmt: skip
    position = forms.ChoiceField(choices=[("right", "Bottom right"), ("left", "Bottom left")])
    topic = forms.CharField(
        max_length=200, required=False, help_text="What the page is about (Billing)."
    )
    question = forms.CharField(
        max_length=200, required=False, label="Suggested question",
        help_text="Offered when the panel opens.",
    )  # fmt: skip

    def attributes(self) -> list[tuple[str, str]]:
        """The data- attributes to add to the script tag, in a fixed order (valid forms only)."""
        data = self.cleaned_data
        color = (data.get("color") or "").lower()
        chosen = [
            ("data-topic", data.get("topic") or ""),
            ("data-question", data.get("question") or ""),
            ("data-title", data.get("title") or ""),
            ("data-color", "" if color == WIDGET_COLOR else color),
            ("data-position", "left" if data.get("position") == "left" else ""),
        ]
        return [(name, value) for name, value in chosen if value]
