"""Blind spots: questions that were refused or found only weakly relevant documentation,
grouped by page topic and clustered by meaning (paraphrases together), most frequent first.

Only the `limit` most recent such questions of the period are clustered, so a page view costs
one indexed query, embeddings of texts not seen before (cached in `QuestionVector`), and a
small greedy clustering."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from assistant.models import Project
from feedback.clustering import DEFAULT_SIMILARITY, cluster_texts
from feedback.question_vectors import normalised, question_vectors
from feedback.selectors import interactions_in

DEFAULT_LIMIT = 300


@dataclass(slots=True)
class Variant:
    text: str  # as last asked
    times: int = 0
    refused: int = 0
    best: float | None = None
    last_asked: datetime | None = None


@dataclass(frozen=True, slots=True)
class BlindSpotCluster:
    topic: str
    variants: list[Variant]  # the most asked first

    @property
    def question(self) -> str:
        return self.variants[0].text

    @property
    def times(self) -> int:
        return sum(v.times for v in self.variants)

    @property
    def refused(self) -> int:
        return sum(v.refused for v in self.variants)

    @property
    def best(self) -> float | None:
        scores = [v.best for v in self.variants if v.best is not None]
        return max(scores) if scores else None

    @property
    def last_asked(self) -> datetime | None:
        times = [v.last_asked for v in self.variants if v.last_asked is not None]
        return max(times) if times else None


@dataclass(frozen=True, slots=True)
class BlindSpotTopic:
    topic: str
    clusters: list[BlindSpotCluster]

    @property
    def times(self) -> int:
        return sum(c.times for c in self.clusters)


@dataclass(frozen=True, slots=True)
class BlindSpotReport:
    topics: list[BlindSpotTopic] = field(default_factory=list)
    clustered: int = 0  # questions looked at (at most `limit`)
    total: int = 0  # such questions in the period
    limit: int = DEFAULT_LIMIT


def blind_spots(
    *,
    project: Project,
    since: datetime,
    below: float,
    limit: int = DEFAULT_LIMIT,
    similarity: float = DEFAULT_SIMILARITY,
) -> BlindSpotReport:
    asked = (
        interactions_in(project=project, since=since)
        .filter(Q(refused=True) | Q(best_relevance__lt=below) | Q(best_relevance__isnull=True))
        .filter(error="")
    )
    rows = list(
        asked.order_by("-created_at").values_list(
            "question", "topic", "best_relevance", "created_at", "refused"
        )[:limit]
    )
    if not rows:
        return BlindSpotReport(limit=limit)
    total = len(rows) if len(rows) < limit else asked.count()
    variants: dict[str, dict[str, Variant]] = {}
    for question, topic, best, created_at, refused in rows:  # newest first
        variant = variants.setdefault(topic, {}).setdefault(
            normalised(question), Variant(text=question.strip(), last_asked=created_at)
        )
        variant.times += 1
        variant.refused += int(refused)
        if best is not None and (variant.best is None or best > variant.best):
            variant.best = best
    vectors = question_vectors(texts=[text for by_text in variants.values() for text in by_text])
    topics = []
    for topic, by_text in variants.items():
        counts = Counter({text: v.times for text, v in by_text.items()})
        clusters = cluster_texts(list(counts.items()), vectors, threshold=similarity)
        topics.append(
            BlindSpotTopic(
                topic=topic,
                clusters=[
                    BlindSpotCluster(topic=topic, variants=[by_text[t] for t in c.members])
                    for c in clusters
                ],
            )
        )
    topics.sort(key=lambda t: (-t.times, t.topic))
    return BlindSpotReport(topics=topics, clustered=len(rows), total=total, limit=limit)
