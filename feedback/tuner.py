"""The threshold tuner: replay logged questions at other thresholds.

The gate keeps a candidate when its relevance is at or above the threshold, so a question
passes the gate at threshold t exactly when its best stored candidate score
(`best_relevance`) is >= t. A question that passed the gate and was refused all the same (by
the answerability check, or the model's own "I couldn't find") is counted refused at every
threshold: a higher one keeps fewer of the passages that could not answer it, and whether a
lower one would keep a passage that does is not in the log. So the row of the threshold the
questions were asked at shows the log's own answered and refused counts. One aggregate query
per table instead of reading 100,000 JSON lists.

Votes are scored against what the reader judged, an answer: a thumbs-up on an answer agrees
with a threshold that still gives it, a thumbs-down with one that refuses it. A vote on a
refusal judges no answer, so it scores no threshold: a thumbs-down there says the reader wanted
one (shown per threshold that still refuses it), and whether a lower threshold's answer would
have been right nobody has read. So agreement changes only where a threshold drops answers
that were voted on; below that the votes cannot tell thresholds apart, and the advice keeps
the threshold in use among equals. Below `MIN_VOTES` votes on answers the page says there are
too few to advise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q

from assistant.models import Interaction, Project
from feedback.models import Feedback

THRESHOLDS = tuple(round(t / 10, 1) for t in range(1, 10))
#: Fewer judged votes than this at a threshold, and its agreement is too uncertain to advise
#: on (20 votes at 70% agreement: a 95% interval of about +-20 points).
MIN_VOTES = 20


@dataclass(frozen=True, slots=True)
class Replay:
    threshold: float
    questions: int
    answered: int
    liked_answered: int  # thumbs up on an answer, still answered: agrees
    liked_refused: int  # thumbs up on an answer, now refused: a good answer lost
    disliked_answered: int  # thumbs down on an answer, still answered: disagrees
    disliked_refused: int  # thumbs down on an answer, now refused: agrees
    refusal_disliked: int  # thumbs down on a refusal this threshold still makes: not scored
    refusal_answered: int  # votes on refusals this threshold would answer: nobody read it

    @property
    def refused(self) -> int:
        return self.questions - self.answered

    @property
    def answered_share(self) -> float:
        return self.answered / self.questions if self.questions else 0.0

    @property
    def judged(self) -> int:
        """Votes on answers: the ones a threshold can be scored on."""
        liked = self.liked_answered + self.liked_refused
        return liked + self.disliked_answered + self.disliked_refused

    @property
    def votes(self) -> int:
        return self.judged + self.refusal_disliked + self.refusal_answered

    @property
    def agreement(self) -> float | None:
        """Share of the votes on answers this threshold agrees with; None without any."""
        if not self.judged:
            return None
        return (self.liked_answered + self.disliked_refused) / self.judged

    @property
    def enough_votes(self) -> bool:
        return self.judged >= MIN_VOTES


def _answered_at(threshold: float, prefix: str = "") -> Q:
    passed_gate = Q(**{f"{prefix}best_relevance__gte": threshold})
    refused_after_gate = Q(**{f"{prefix}refused": True, f"{prefix}kept_count__gt": 0})
    return passed_gate & ~refused_after_gate


def threshold_replay(
    *, project: Project, since: datetime, topic: str | None = None
) -> list[Replay]:
    # Failed questions got no answer to judge; memory commands ("remember ...") never search.
    asked = Interaction.objects.filter(project=project, created_at__gte=since, error="").exclude(
        generator="memory"
    )
    votes = Feedback.objects.filter(
        interaction__project=project, interaction__created_at__gte=since, interaction__error=""
    ).exclude(interaction__generator="memory")
    if topic is not None:
        asked = asked.filter(topic=topic)
        votes = votes.filter(interaction__topic=topic)
    question_counts = asked.order_by().aggregate(
        questions=Count("id"),
        **{f"a{i}": Count("id", filter=_answered_at(t)) for i, t in enumerate(THRESHOLDS)},
    )
    up, down = Q(vote=Feedback.Vote.UP), Q(vote=Feedback.Vote.DOWN)
    on_answer, on_refusal = Q(interaction__refused=False), Q(interaction__refused=True)
    vote_counts: dict[str, Count] = {}
    for i, t in enumerate(THRESHOLDS):
        kept = _answered_at(t, "interaction__")
        vote_counts |= {
            f"la{i}": Count("id", filter=up & on_answer & kept),
            f"lr{i}": Count("id", filter=up & on_answer & ~kept),
            f"da{i}": Count("id", filter=down & on_answer & kept),
            f"dr{i}": Count("id", filter=down & on_answer & ~kept),
            f"rd{i}": Count("id", filter=down & on_refusal & ~kept),
            f"ra{i}": Count("id", filter=on_refusal & kept),
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
            refusal_disliked=counted[f"rd{i}"],
            refusal_answered=counted[f"ra{i}"],
        )
        for i, t in enumerate(THRESHOLDS)
    ]


def advised_threshold(replays: Sequence[Replay], *, current: float) -> Replay | None:
    """The threshold whose agreement with the votes on answers is highest, among those with
    enough of them; among equals the one in use, else the nearest to it (the votes cannot
    tell equals apart). None when no threshold has enough votes."""
    scored = [r for r in replays if r.enough_votes and r.agreement is not None]
    if not scored:
        return None
    best = max(r.agreement or 0.0 for r in scored)
    tied = [r for r in scored if (r.agreement or 0.0) >= best - 1e-9]
    return min(tied, key=lambda r: (abs(r.threshold - current), r.threshold))
