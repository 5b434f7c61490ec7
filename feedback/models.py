from __future__ import annotations

from django.conf import settings
from django.db import models

from assistant.models import Interaction


class Feedback(models.Model):
    """A reader's thumbs up or down on one answer; one per answer and client (a second click
    changes the vote)."""

    class Vote(models.IntegerChoices):
        UP = 1, "Thumbs up"
        DOWN = -1, "Thumbs down"

    interaction = models.ForeignKey(Interaction, on_delete=models.CASCADE, related_name="feedback")
    #: A random id the widget keeps in the browser's localStorage; not a person.
    client_id = models.CharField(max_length=64)
    vote = models.SmallIntegerField(choices=Vote.choices)
    comment = models.TextField(blank=True, max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["interaction", "client_id"], name="feedback_one_per_answer_and_client"
            ),
            models.CheckConstraint(
                condition=models.Q(vote__in=[1, -1]), name="feedback_vote_is_up_or_down"
            ),
        ]
        indexes = [models.Index(fields=["updated_at"])]

    def __str__(self) -> str:
        return f"{self.get_vote_display()} on {self.interaction_id}"


class QuestionVector(models.Model):
    """A cached embedding of a logged question's text, so the blind-spots page clusters by
    meaning without embedding the same questions again on every view. Keyed by the embedder
    and the normalised text: another embedder gets vectors of its own."""

    key = models.CharField(max_length=64, unique=True)  # sha256(embedder id, normalised text)
    embedder_id = models.CharField(max_length=100)
    vector = models.BinaryField()  # float32, unit length
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.embedder_id} {self.key[:12]}"


class BlindSpotMark(models.Model):
    """An admin's word on a blind-spot cluster: dismissed (not worth documenting) or resolved
    (documented since). The cluster stays hidden until a question of it is asked again after
    the mark. A cluster is recognised by its topic and any of its question texts."""

    class State(models.TextChoices):
        DISMISSED = "dismissed", "Dismissed"
        RESOLVED = "resolved", "Resolved"

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="blind_spot_marks"
    )
    topic = models.CharField(max_length=200, blank=True)
    question = models.TextField()  # the cluster's leading question, as shown
    texts = models.JSONField(default=list)  # its questions, normalised, when it was marked
    state = models.CharField(max_length=10, choices=State.choices)
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    marked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-marked_at"]
        indexes = [models.Index(fields=["project", "marked_at"])]

    def __str__(self) -> str:
        return f"{self.get_state_display()}: {self.question[:60]}"


class AnswerCheck(models.Model):
    """A conversation kept as a check: a question (with its history and topic) and what must
    happen when it is asked again (answered citing a section and saying key facts, or
    refused). Run through the real pipeline from the console or `manage.py check_answers`."""

    class Expect(models.TextChoices):
        ANSWERED = "answered", "Answered"
        REFUSED = "refused", "Refused"

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="answer_checks"
    )
    question = models.TextField()
    topic = models.CharField(max_length=200, blank=True)
    #: The conversation before the question: [{"role": "user"|"assistant", "content": ...}].
    history = models.JSONField(default=list, blank=True)
    expect = models.CharField(max_length=10, choices=Expect.choices)
    #: With `answered`: a source the answer must cite (its title or URL; "" for any).
    cites = models.CharField(max_length=1000, blank=True)
    #: With `answered`: words the answer must contain (case-insensitive), one a line.
    facts = models.JSONField(default=list, blank=True)
    from_answer_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    #: The latest run's outcome, and the one before it (to show what changed):
    #: {"passed", "refused", "cited": [titles], "answer", "problems": [...], "ms", "at"}.
    last_result = models.JSONField(null=True, blank=True)
    previous_result = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["project", "created_at", "id"]

    def __str__(self) -> str:
        return self.question[:80]

    @property
    def passed(self) -> bool | None:
        return None if self.last_result is None else bool(self.last_result.get("passed"))

    @property
    def changed(self) -> bool:
        """Passed last time and fails now, or the other way round."""
        if self.last_result is None or self.previous_result is None:
            return False
        return bool(self.last_result.get("passed")) != bool(self.previous_result.get("passed"))


class CheckRun(models.Model):
    """One run of a project's checks, for the console's progress bar."""

    project = models.ForeignKey(
        "assistant.Project", on_delete=models.CASCADE, related_name="check_runs"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=200, blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"checks of {self.project_id} at {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def running(self) -> bool:
        return self.finished_at is None

    @property
    def seconds(self) -> float | None:
        return (self.finished_at - self.started_at).total_seconds() if self.finished_at else None
