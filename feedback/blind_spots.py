"""Blind spots: questions that were refused or found only weakly relevant documentation,
grouped by page topic and clustered by meaning (paraphrases together), most frequent first.

Each cluster is told apart as a documentation gap (the question is about what the documents
cover, and nothing answers it) or an off-topic request ("write me a poem"): by how similar its
leading question is to the nearest chunk of the project's documents (`nearest_similarity`),
and, near them, whether it asks a price of documents that state none or names a product they
never name (feedback/aside.py).
Clusters an admin dismissed or resolved are hidden until a question of theirs is asked again
after the mark.

Only the `limit` most recent such questions of the period are clustered, so a page view costs
one indexed query, embeddings of texts not seen before (cached in `QuestionVector`), and a
small greedy clustering."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.db.models import Q

from assistant.models import Project
from feedback.aside import DocumentsAsked, aside_reason
from feedback.clustering import DEFAULT_SIMILARITY, cluster_texts
from feedback.content_similarity import OFF_TOPIC_SIMILARITY, nearest_similarities
from feedback.models import BlindSpotMark, Feedback
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
    #: What visitors wrote with their votes on it, newest first.
    comments: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class BlindSpotCluster:
    topic: str
    variants: list[Variant]  # the most asked first
    #: Cosine similarity of the leading question to the nearest chunk; None: no documents.
    nearest: float | None = None
    #: The mark this cluster came back from (asked again since it was dismissed or resolved).
    returned_from: BlindSpotMark | None = None
    #: Why it is beside the documents although near them (feedback/aside.py): "" when not.
    aside: str = ""

    @property
    def off_topic(self) -> bool:
        far = self.nearest is not None and self.nearest < OFF_TOPIC_SIMILARITY
        return far or bool(self.aside)

    @property
    def texts(self) -> list[str]:
        return [v.text for v in self.variants]

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

    @property
    def comments(self) -> list[str]:
        """Visitors' comments on its questions (a few, without repeats)."""
        return list(dict.fromkeys(c for v in self.variants for c in v.comments))[:5]


@dataclass(frozen=True, slots=True)
class BlindSpotTopic:
    topic: str
    clusters: list[BlindSpotCluster]

    @property
    def times(self) -> int:
        return sum(c.times for c in self.clusters)


@dataclass(frozen=True, slots=True)
class BlindSpotReport:
    topics: list[BlindSpotTopic] = field(default_factory=list)  # documentation gaps
    off_topic: list[BlindSpotCluster] = field(default_factory=list)  # most asked first
    hidden: list[BlindSpotMark] = field(default_factory=list)  # marked, not asked since
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
        .exclude(question="")  # past the retention period: numbers only, no text to cluster
        .exclude(generator="memory")  # "remember ..." searches nothing: not a question
    )
    rows = list(
        asked.order_by("-created_at").values_list(
            "question", "topic", "best_relevance", "created_at", "refused", "pk"
        )[:limit]
    )
    if not rows:
        return BlindSpotReport(limit=limit)
    total = len(rows) if len(rows) < limit else asked.count()
    comments = _comments(pk for *_, pk in rows)
    variants: dict[str, dict[str, Variant]] = {}
    for question, topic, best, created_at, refused, pk in rows:  # newest first
        variant = variants.setdefault(topic, {}).setdefault(
            normalised(question), Variant(text=question.strip(), last_asked=created_at)
        )
        variant.times += 1
        variant.refused += int(refused)
        variant.comments += comments.get(pk, [])
        if best is not None and (variant.best is None or best > variant.best):
            variant.best = best
    vectors = question_vectors(texts=[text for by_text in variants.values() for text in by_text])
    clusters: list[BlindSpotCluster] = []
    for topic, by_text in variants.items():
        counts = Counter({text: v.times for text, v in by_text.items()})
        for found in cluster_texts(list(counts.items()), vectors, threshold=similarity):
            clusters.append(
                BlindSpotCluster(topic=topic, variants=[by_text[t] for t in found.members])
            )
    nearest = nearest_similarities(
        project_id=project.pk, vectors=[vectors[normalised(c.question)] for c in clusters]
    )
    documents = DocumentsAsked(project.pk)
    clusters = [
        replace(c, nearest=n, aside=aside_reason(c.question, documents) if n is not None else "")
        for c, n in zip(clusters, nearest, strict=True)
    ]
    shown, hidden = _apply_marks(project, clusters)
    topics: dict[str, list[BlindSpotCluster]] = {}
    for cluster in shown:
        if not cluster.off_topic:
            topics.setdefault(cluster.topic, []).append(cluster)
    gaps = [BlindSpotTopic(topic=topic, clusters=found) for topic, found in topics.items()]
    gaps.sort(key=lambda t: (-t.times, t.topic))
    off_topic = sorted((c for c in shown if c.off_topic), key=lambda c: -c.times)
    return BlindSpotReport(
        topics=gaps, off_topic=off_topic, hidden=hidden,
        clustered=len(rows), total=total, limit=limit,
    )  # fmt: skip


def _comments(interaction_ids: Iterable[int]) -> dict[int, list[str]]:
    """Visitors' comments on the logged answers, by interaction."""
    found: dict[int, list[str]] = {}
    rows = (
        Feedback.objects.filter(interaction_id__in=list(interaction_ids))
        .exclude(comment="")
        .order_by("-updated_at")
        .values_list("interaction_id", "comment")
    )
    for interaction_id, comment in rows:
        found.setdefault(interaction_id, []).append(comment)
    return found


def _apply_marks(
    project: Project, clusters: list[BlindSpotCluster]
) -> tuple[list[BlindSpotCluster], list[BlindSpotMark]]:
    """The clusters to show (those asked again after their mark carry it) and the marks
    whose clusters stay hidden. A mark matches a cluster of its topic sharing a question."""
    marks = list(BlindSpotMark.objects.filter(project=project).select_related("marked_by"))
    shown, hidden = [], []
    for cluster in clusters:
        texts = {normalised(t) for t in cluster.texts}
        mark = next((m for m in marks if m.topic == cluster.topic and texts & set(m.texts)), None)
        last = cluster.last_asked
        if mark is None:
            shown.append(cluster)
        elif last is not None and last > mark.marked_at:
            shown.append(replace(cluster, returned_from=mark))
        elif mark not in hidden:
            hidden.append(mark)
    return shown, hidden
