"""The threshold tuner: replay logged questions at other thresholds.

The gate keeps a candidate when its relevance is at or above the threshold, so a question is
answered at threshold t exactly when its best stored candidate score (`best_relevance`, the
maximum of `Interaction.candidates`' relevance) is >= t. That turns the replay into one
aggregate query per table instead of reading 100,000 JSON lists."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q

from assistant.models import Interaction, Project
from feedback.models import Feedback

THRESHOLDS = tuple(round(t / 10, 1) for t in range(1, 10))


@dataclass(frozen=True, slots=True)
class Replay:
    threshold: float
    questions: int
    answered: int
    liked_answered: int  # thumbs up, still answered: agrees
    liked_refused: int  # thumbs up, now refused: a good answer lost
    disliked_answered: int  # thumbs down, still answered
    disliked_refused: int  # thumbs down, now refused: agrees

    @property
    def refused(self) -> int:
        return self.questions - self.answered

    @property
    def answered_share(self) -> float:
        return self.answered / self.questions if self.questions else 0.0

    @property
    def votes(self) -> int:
        return (
            self.liked_answered
            + self.liked_refused
            + self.disliked_answered
            + self.disliked_refused
        )

    @property
    def agreement(self) -> float | None:
        """Share of votes the threshold agrees with: liked answers kept, disliked refused."""
        if not self.votes:
            return None
        return (self.liked_answered + self.disliked_refused) / self.votes


def threshold_replay(
    *, project: Project, since: datetime, topic: str | None = None
) -> list[Replay]:
    asked = Interaction.objects.filter(project=project, created_at__gte=since, error="")
    votes = Feedback.objects.filter(
        interaction__project=project, interaction__created_at__gte=since, interaction__error=""
    )
    if topic is not None:
        asked = asked.filter(topic=topic)
        votes = votes.filter(interaction__topic=topic)
    question_counts = asked.order_by().aggregate(
        questions=Count("id"),
        **{f"a{i}": Count("id", filter=Q(best_relevance__gte=t)) for i, t in enumerate(THRESHOLDS)},
    )
    up, down = Q(vote=Feedback.Vote.UP), Q(vote=Feedback.Vote.DOWN)
    vote_counts: dict[str, Count] = {}
    for i, t in enumerate(THRESHOLDS):
        kept = Q(interaction__best_relevance__gte=t)
        vote_counts |= {
            f"la{i}": Count("id", filter=up & kept),
            f"lr{i}": Count("id", filter=up & ~kept),
            f"da{i}": Count("id", filter=down & kept),
            f"dr{i}": Count("id", filter=down & ~kept),
        }
    counted = votes.order_by().aggregate(**vote_counts)
    return [
        Replay(
            threshold=t,
            questions=question_counts["questions"],
            answered=question_counts[f"a{i}"],
            liked_answered=counted[f"la{i}"],
            liked_refused=counted[f"lr{i}"],
            disliked_answered=counted[f"da{i}"],
            disliked_refused=counted[f"dr{i}"],
        )
        for i, t in enumerate(THRESHOLDS)
    ]
