from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from assistant.models import Project
from assistant.rag.chunking.sections import title_path
from ingestion.connectors.registry import kind_choices


class Source(models.Model):
    """Where documents come from. Each kind keeps its own settings in `config`."""

    class Kind:
        """The kinds the code itself names. Every kind, these and any other, is a row of
        ingestion/connectors/registry.py (its label, connector, form and card), which gives
        `kind` its choices."""

        WEBSITE = "website"
        FILES = "files"
        SUPPORT = "support"
        MANUAL = "manual"
        #: Answers the team wrote in the console (see CuratedAnswer); one such source a project.
        CURATED = "curated"

    class Schedule(models.TextChoices):
        OFF = "off", "Off"
        HOURLY = "hourly", "Hourly"
        DAILY = "daily", "Daily"
        WEEKLY = "weekly", "Weekly"

    class Status(models.TextChoices):
        NEW = "new", "Never synced"
        SYNCING = "syncing", "Syncing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=10, choices=kind_choices)
    name = models.CharField(max_length=200)
    config = models.JSONField(default=dict, blank=True)
    schedule = models.CharField(max_length=10, choices=Schedule.choices, default=Schedule.OFF)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.NEW)
    last_error = models.TextField(blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    #: Grows with every write to the source's index, whichever process made it: a web process
    #: reading the embedded vector store sees a CLI's or a worker's writes by it (see
    #: `ingestion.index.index_written` and `runtime.index_seen`).
    index_version = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="unique_source_name")
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        """An instance read before a sync wrote the index must not put the index version it
        read back: only `index_written` changes it, by an update in the database."""
        if not self._state.adding and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                f.name for f in self._meta.concrete_fields
                if not f.primary_key and f.name != "index_version"
            ]  # fmt: skip
        super().save(*args, **kwargs)


class Document(models.Model):
    """One page, file or answer of a source, as last read."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="documents")
    # Stable identity inside the source: canonical URL, file path, answer id.
    external_id = models.CharField(max_length=1000)
    title = models.CharField(max_length=500)
    url = models.CharField(max_length=1000, blank=True)
    content_hash = models.CharField(max_length=64)
    #: For a web page: its ETag, Last-Modified, in-scope links and the extraction version it
    #: was read with, so an unchanged page is not downloaded again (an HTTP 304).
    fetch_state = models.JSONField(null=True, blank=True)
    #: Its text gives orders to an AI assistant (indirect prompt injection, OWASP LLM01): set
    #: when it is indexed (ingestion/injection.py), with excerpts for the console.
    suspected_injection = models.BooleanField(default=False)
    #: What kind of page it is (ingestion/page_kinds.py): "" a guide, "reference" (an API
    #: reference), "changelog" (release notes). A guide that answers as well comes first.
    kind = models.CharField(max_length=20, blank=True, default="")
    injection_excerpts = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "external_id"], name="unique_document")
        ]

    def __str__(self) -> str:
        return self.title


class Chunk(models.Model):
    """A passage: its text lives here; the vector store holds its vector under `vector_id`."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    vector_id = models.CharField(max_length=100, unique=True)
    text = models.TextField()
    heading_path = models.CharField(max_length=1000, blank=True)
    url = models.CharField(max_length=1000, blank=True)
    content_hash = models.CharField(max_length=64)
    token_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["document", "ordinal"]

    def __str__(self) -> str:
        return f"{self.document} #{self.ordinal}"

    @property
    def title(self) -> str:
        return title_path(self.document.title, self.heading_path)


class SyncRun(models.Model):
    """One sync of a source: what it saw and did, its errors, and its progress while it runs."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        PARTIAL = "partial", "Finished with errors"
        FAILED = "failed", "Failed"
        INTERRUPTED = "interrupted", "Interrupted"

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RUNNING)
    trigger = models.CharField(max_length=20, default="manual")
    worker = models.CharField(max_length=200, blank=True)  # "host:pid" of the process running it
    started_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seen = models.PositiveIntegerField(default=0)
    added = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    removed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    chunks_embedded = models.PositiveIntegerField(default=0)
    chunks_removed = models.PositiveIntegerField(default=0)
    # Progress: items done out of items known so far (a crawl discovers its total as it goes).
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    #: The bar as shown while it runs (see sync._advance_bar): a crawl's total grows level by
    #: level, and a bar that went from 54% back to 17% would say the sync lost work.
    shown_percent = models.PositiveSmallIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)  # [{"url": ..., "error": ...}]
    skipped = models.PositiveIntegerField(default=0)
    #: Which documents this run added, changed, removed and skipped:
    #: {"added": [{"title", "url"}], ..., "skipped": [{"url", "reason"}]}, each list capped.
    changes = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True)

    #: The most items there can be while more may be found (the connector's Total.at_most;
    #: in the syncing process only, never stored).
    at_most: int | None = None

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["source", "status"], name="syncrun_source_status")]

    def __str__(self) -> str:
        return f"{self.source} sync #{self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        if self.status != self.Status.RUNNING:
            return 100
        return self.shown_percent  # sync._advance_bar: never ahead of the work, never back

    @property
    def known_total(self) -> int:
        """Items known so far: never fewer than those done (a crawl finds more as it goes)."""
        return max(self.total, self.done)

    @property
    def removals_held(self) -> bool:
        """It stopped before removing documents its origin no longer listed (see sync.py)."""
        return self.status == self.Status.FAILED and self.message.startswith("Nothing was removed")


class SupportAnswer(models.Model):
    """An approved question/answer pair pushed by webhook or imported from JSON/CSV, already
    scrubbed of names and contact details. A support source with provider "import" reads these."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="answers")
    external_id = models.CharField(max_length=200)
    question = models.TextField()
    answer = models.TextField()
    url = models.CharField(max_length=1000, blank=True)
    approved = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "external_id"], name="unique_support_answer")
        ]

    def __str__(self) -> str:
        return self.question[:80]


class CuratedAnswer(models.Model):
    """An answer the team wrote for questions the documents did not answer well: one or more
    phrasings of the question and the answer (Markdown). While it is active it is one document of
    the project's "Curated answers" source, embedded and reranked like any passage; retired, that
    document is gone from the index and the row stays for the record."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="curated_answers")
    phrasings = models.JSONField(default=list)  # ["Can I switch to a cheaper plan ...?", ...]
    answer = models.TextField()
    #: The address shown with the answer ("" : none).
    url = models.CharField(max_length=1000, blank=True)
    #: The sections it rests on, as they were when it was written: [{"vector_id", "title",
    #: "url"}]. A vector id is derived from the passage's text, so a section whose text a sync
    #: changed no longer has a chunk with that id: the console warns.
    rests_on = models.JSONField(default=list, blank=True)
    topic = models.CharField(max_length=200, blank=True)
    active = models.BooleanField(default=True)
    #: How many answers cited it, and when last (written by the ask service).
    answered_count = models.PositiveIntegerField(default=0)
    last_answered_at = models.DateTimeField(null=True, blank=True)
    #: The logged answer it was written from (an Interaction's answer_id), when any.
    from_answer_id = models.CharField(max_length=64, blank=True)
    written_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-active", "-updated_at"]

    def __str__(self) -> str:
        return self.question

    @property
    def question(self) -> str:
        return self.phrasings[0] if self.phrasings else ""

    @property
    def external_id(self) -> str:
        """Its document's id inside the curated source."""
        return f"curated-{self.pk}"
