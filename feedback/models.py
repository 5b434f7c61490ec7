from __future__ import annotations

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
