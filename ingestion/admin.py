from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ingestion.dispatch import sync_enqueue
from ingestion.models import Source, SupportAnswer, SyncRun
from ingestion.support_answers import ImportRejected, support_answers_import
from ingestion.uploads import UploadRejected, source_file_add


class SourceForm(forms.ModelForm):
    text = forms.CharField(
        required=False, widget=forms.Textarea, help_text="Manual sources: the text (Markdown)."
    )
    upload = forms.FileField(
        required=False, help_text="Files sources: a .md, .txt, .html, .pdf or .zip file."
    )
    answers_file = forms.FileField(
        required=False, help_text="Support sources (provider import): a JSON or CSV file."
    )

    class Meta:
        model = Source
        fields = ["project", "kind", "name", "schedule", "config"]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["text"].initial = (self.instance.config or {}).get("text", "")

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("kind") == Source.Kind.MANUAL and data.get("text"):
            data["config"] = {**(data.get("config") or {}), "text": data["text"]}
        return data


class SyncRunInline(admin.TabularInline):
    model = SyncRun
    extra = 0
    max_num = 0
    can_delete = False
    fields = readonly_fields = (
        "started_at",
        "status",
        "percent",
        "seen",
        "added",
        "changed",
        "removed",
        "failed",
        "chunks_embedded",
        "message",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[SyncRun]:
        return super().get_queryset(request).order_by("-started_at")


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    form = SourceForm
    list_display = ("name", "project", "kind", "schedule", "status", "last_synced_at")
    list_filter = ("kind", "status", "schedule", "project")
    readonly_fields = ("status", "last_error", "last_synced_at")
    inlines = [SyncRunInline]
    actions = ["sync_now"]

    def save_model(self, request: HttpRequest, obj: Source, form: SourceForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        try:
            if upload := form.cleaned_data.get("upload"):
                source_file_add(source=obj, name=upload.name, data=upload.read())
                self.message_user(request, f"Added {upload.name}; sync to index it.")
            if answers := form.cleaned_data.get("answers_file"):
                count = support_answers_import(
                    source=obj, data=answers.read(), filename=answers.name
                )
                self.message_user(request, f"Imported {count} answers; sync to index them.")
        except (UploadRejected, ImportRejected) as error:
            self.message_user(request, str(error), messages.ERROR)

    @admin.action(description="Sync now")
    def sync_now(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        for source in queryset:
            sync_enqueue(source=source, trigger="admin")
        self.message_user(request, f"Queued {queryset.count()} sync(s).", messages.SUCCESS)


@admin.register(SyncRun)
class SyncRunAdmin(admin.ModelAdmin):
    list_display = ("source", "status", "started_at", "percent", "added", "changed", "removed")
    list_filter = ("status",)
    readonly_fields = [f.name for f in SyncRun._meta.fields]


@admin.register(SupportAnswer)
class SupportAnswerAdmin(admin.ModelAdmin):
    list_display = ("question", "source", "approved", "updated_at")
    list_filter = ("approved", "source")
