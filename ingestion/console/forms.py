"""Console forms for sources, one per kind, each named by its kind's row in
ingestion/connectors/registry.py. Each checks everything a save would need (names, URLs,
uploaded files, imported answers) so that a bad submission shows its error next to the field
and changes nothing."""

from __future__ import annotations

import ipaddress
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.html import format_html
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString

from assistant.models import Project
from assistant.templatetags.docs import docs_url
from assistant.wiring import outbound
from ingestion.connectors.registry import BY_KIND
from ingestion.connectors.website import DEFAULT_EXCLUDE
from ingestion.models import Source
from ingestion.support_answers import AnswerInput, ImportRejected, support_answers_parse
from ingestion.uploads import UploadRejected, upload_checked


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files from one <input multiple> (the pattern in Django's file-upload docs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data if item]
        return [single(data, initial)] if data else []


class SourceForm(forms.Form):
    """What every kind has: a name unique in the project and a schedule."""

    #: Config keys this form owns; any other key already in `config` is kept on save.
    config_keys: ClassVar[tuple[str, ...]] = ()

    name = forms.CharField(max_length=200)
    schedule = forms.ChoiceField(choices=Source.Schedule.choices, initial=Source.Schedule.DAILY)

    def __init__(
        self, *args: Any, project: Project | None, source: Source | None = None, **kwargs: Any
    ) -> None:
        if source is not None:
            config = source.config or {}
            kwargs["initial"] = {
                "name": source.name,
                "schedule": source.schedule,
                **{k: config[k] for k in self.config_keys if k in config},
                **kwargs.get("initial", {}),
            }
        super().__init__(*args, **kwargs)
        self.project = project
        self.source = source

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("This field is required.")
        taken = Source.objects.filter(project=self.project, name=name)
        if self.source is not None:
            taken = taken.exclude(pk=self.source.pk)
        if taken.exists():
            raise forms.ValidationError("This project already has a source with that name.")
        return name

    def config(self) -> dict[str, Any]:
        """The source's new config: this form's keys over what was there."""
        merged = dict(self.source.config or {}) if self.source is not None else {}
        merged.update({k: self.cleaned_data[k] for k in self.config_keys})
        return merged


#: Patterns a rule list may hold, and characters a pattern: said in the form's help.
MAX_PATTERNS, MAX_PATTERN_CHARS = 50, 200
PATTERN_LIMITS = f"At most {MAX_PATTERNS} patterns of {MAX_PATTERN_CHARS} characters."


class PatternsField(forms.CharField):
    """Path patterns, one a line (fnmatch: `*` matches across folders), stored as a list."""

    widget = forms.Textarea(attrs={"rows": 4, "spellcheck": "false"})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list | tuple) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        lines = [line.strip() for line in str(super().to_python(value) or "").splitlines()]
        patterns = [line for line in lines if line]
        if len(patterns) > MAX_PATTERNS or any(len(p) > MAX_PATTERN_CHARS for p in patterns):
            longest = max(len(p) for p in patterns)
            raise forms.ValidationError(
                f"{PATTERN_LIMITS} This list has {len(patterns)}, the longest of {longest}."
            )
        return patterns


class WebsiteSourceForm(SourceForm):
    config_keys = ("start_url", "max_pages", "include", "exclude")

    start_url = forms.URLField(
        label="Start URL", assume_scheme="https",
        help_text="Pages on this host and folder are read, obeying robots.txt.",
    )  # fmt: skip
    max_pages = forms.IntegerField(
        label="At most pages", min_value=1, max_value=10_000, initial=500
    )
    include = PatternsField(
        label="Only paths matching", required=False,
        help_text="One pattern a line, e.g. /docs/guide/* or /docs/*.html (a folder's page "
        "matches as /docs/ and /docs/index.html). Empty: every page in the folder. The start "
        f"page is read for its links even when no pattern matches it. {PATTERN_LIMITS}",
    )  # fmt: skip
    exclude = PatternsField(
        label="Skip paths matching", required=False, initial=list(DEFAULT_EXCLUDE),
        help_text="One pattern a line. The defaults skip generated index, search and "
        f"module-index pages. {PATTERN_LIMITS}",
    )  # fmt: skip

    def clean_start_url(self) -> str:
        url = self.cleaned_data["start_url"]
        if not url.lower().startswith(("http://", "https://")):
            raise forms.ValidationError("Enter an http or https URL.")
        if reason := outbound.refusal(url):
            raise forms.ValidationError(private_host_advice(url, reason))
        return url


def private_host_advice(url: str, reason: str) -> str | SafeString:
    """A start URL refused for its non-public address, with the one setting that admits it
    (its value, this host added to what is set) and the manual's section on it."""
    if outbound.ALLOW_HINT not in reason:
        return reason
    host = (urlsplit(url).hostname or "").lower()
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    # `localhost` also resolves to ::1, which 127.0.0.1 does not cover: name both.
    wanted = ["127.0.0.1", "localhost"] if loopback else [host]
    value = ",".join(dict.fromkeys([*settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS, *wanted]))
    return format_html(
        "{} To read docs served on this machine or inside your network, set "
        "<code>ASKDOCS_ALLOWED_PRIVATE_HOSTS={}</code> in the environment of the web server "
        'and the workers, then restart them (<a href="{}" target="_blank" rel="noopener">'
        "Docs on this machine, in the manual</a>).",
        reason.replace(f" {outbound.ALLOW_HINT}", ""),
        value,
        docs_url("private-hosts"),
    )


class ManualSourceForm(SourceForm):
    config_keys = ("title", "text")

    title = forms.CharField(
        max_length=500,
        required=False,
        help_text="Shown as the source of answers. Default: the name.",
    )
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 14}),
        max_length=200_000,
        help_text="Markdown. Headings split it into passages.",
    )

    def clean_text(self) -> str:
        text = self.cleaned_data["text"]
        if not text.strip():
            raise forms.ValidationError("This field is required.")
        return text


class FilesSourceForm(SourceForm):
    # A declared field, not Form.files: the form metaclass moves it into base_fields.
    files = MultipleFileField(  # type: ignore[assignment]
        required=False,
        label="Add files",
        help_text="Markdown, text, HTML, PDF, or a .zip of them. A file with the same name "
        "replaces the stored one.",
    )
    remove = forms.MultipleChoiceField(
        required=False,
        label="Remove files",
        widget=forms.CheckboxSelectMultiple,
        help_text="Their documents are removed at the next sync.",
    )

    def __init__(self, *args: Any, stored: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stored = stored or []
        cast(forms.ChoiceField, self.fields["remove"]).choices = [
            (name, name) for name in self.stored
        ]
        if not self.stored:
            del self.fields["remove"]

    def clean_files(self) -> list[UploadedFile]:
        files: list[UploadedFile] = self.cleaned_data["files"]
        errors = []
        for upload in files:
            try:
                upload_checked(name=upload.name or "", size=upload.size or 0)
            except UploadRejected as error:
                errors.append(str(error))
        if errors:
            raise forms.ValidationError(errors)
        if self.source is None and not files:
            raise forms.ValidationError("Choose at least one file.")
        return files


class SupportSourceForm(SourceForm):
    config_keys = ("provider", "channel_id", "approved_reaction", "tag")
    PROVIDERS: ClassVar[list[tuple[str, str]]] = [
        ("import", "Imported or pushed answers (JSON, CSV, webhook)"),
        ("discord", "Discord channel of approved answers"),
        ("intercom", "Intercom conversations with a tag"),
    ]

    provider = forms.ChoiceField(choices=PROVIDERS, initial="import")
    answers_file = forms.FileField(
        required=False,
        label="Import answers",
        help_text="Import: a JSON array or CSV of id, question, answer, url, approved.",
    )
    token = forms.CharField(
        required=False,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Discord bot token or Intercom access token.",
    )
    channel_id = forms.CharField(required=False, max_length=40, label="Discord channel id")
    approved_reaction = forms.CharField(
        required=False, max_length=40, help_text="Discord: only messages with this reaction."
    )
    tag = forms.CharField(required=False, max_length=200, label="Intercom tag")

    answers: list[AnswerInput]
    #: Which provider each field belongs to: the page shows only the chosen one's fields,
    #: rendered so by the server (without JavaScript, links re-render it for another provider)
    #: and toggled by console.js when the choice changes.
    FIELDS_OF: ClassVar[dict[str, str]] = {
        "answers_file": "import",
        "token": "discord intercom",
        "channel_id": "discord",
        "approved_reaction": "discord",
        "tag": "intercom",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        chosen = self.data.get("provider") if self.is_bound else self.initial.get("provider")
        self.chosen_provider = chosen if chosen in dict(self.PROVIDERS) else "import"
        for name, providers in self.FIELDS_OF.items():
            self.fields[name].providers = providers  # type: ignore[attr-defined]
            self.fields[name].shown = self.chosen_provider in providers.split()  # type: ignore[attr-defined]
        if self.source is not None and (self.source.config or {}).get("token"):
            self.fields["token"].help_text += " Leave empty to keep the stored one."

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        provider = data.get("provider")
        stored_token = (self.source.config or {}).get("token") if self.source else ""
        if provider in ("discord", "intercom") and not (data.get("token") or stored_token):
            self.add_error("token", "This provider needs a token.")
        if provider == "discord" and not data.get("channel_id", "").strip():
            self.add_error("channel_id", "Discord needs the channel id.")
        if provider == "intercom" and not data.get("tag", "").strip():
            self.add_error("tag", "Intercom needs the tag that marks approved answers.")
        self.answers = []
        upload = data.get("answers_file")
        if upload is not None:
            if provider != "import":
                self.add_error("answers_file", "Only the import provider takes a file.")
            else:
                try:
                    self.answers = support_answers_parse(
                        data=upload.read(), filename=upload.name or ""
                    )
                except ImportRejected as error:
                    self.add_error("answers_file", str(error))
        return data

    def config(self) -> dict[str, Any]:
        merged = super().config()
        if self.cleaned_data.get("token"):
            merged["token"] = self.cleaned_data["token"]
        if merged.get("provider") == "import":
            merged.pop("token", None)  # a secret no connector uses any more
        return merged


def form_for(kind: str) -> type[SourceForm] | None:
    """The console form of a kind of source (its row in ingestion/connectors/registry.py names
    it), or None: an unknown kind, or one the console does not create or edit with a form."""
    row = BY_KIND.get(kind)
    if row is None or not row.form:
        return None
    return cast("type[SourceForm]", import_string(row.form))
