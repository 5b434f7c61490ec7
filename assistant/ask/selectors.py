"""Reads for the assistant app."""

from __future__ import annotations

import statistics
from collections import Counter

from assistant.models import Interaction, Project, secret_key_digest
from assistant.rag.types import Turn


def project_by_key(key: str) -> Project | None:
    return Project.objects.filter(public_key=key).first() if key else None


def project_by_secret_key(key: str) -> Project | None:
    """The project whose secret key this is, found by its digest (keys are not stored), and
    confirmed by the one comparison (`Project.secret_key_matches`)."""
    if not key.startswith("sk_"):
        return None
    project = Project.objects.filter(secret_key_digest=secret_key_digest(key)).first()
    return project if project is not None and project.secret_key_matches(key) else None


def conversation_history(
    *, project: Project, conversation_id: str, exchanges: int = 5
) -> list[Turn]:
    """The last `exchanges` question/answer pairs of a conversation, oldest first, from the
    interaction log (so history survives restarts and works across processes)."""
    if not conversation_id:
        return []
    rows = list(
        Interaction.objects.filter(project=project, conversation_id=conversation_id, error="")
        # Memory commands ("remember I'm on the Enterprise plan") stay out: facts reach the
        # model only as the injected turn, and never the retrieval query.
        .exclude(generator="memory")
        .order_by("-created_at", "-id")
        .values_list("question", "answer")[:exchanges]
    )
    turns: list[Turn] = []
    for question, answer in reversed(rows):
        turns += [Turn("user", question), Turn("assistant", answer)]
    return turns


def conversation_exists(*, project: Project, conversation_id: str) -> bool:
    return Interaction.objects.filter(project=project, conversation_id=conversation_id).exists()


#: How many distinct askers a question needs before it is offered to everyone.
SUGGESTION_ASKERS = 3


def suggested_questions(*, project: Project, topic: str, limit: int = 3) -> list[str]:
    """The questions most asked on this topic that were answered well: answered (not refused,
    no error), never voted down, and asked by at least `SUGGESTION_ASKERS` distinct askers
    (see `Interaction.asker`: proven users, or client addresses; a visitor id the page makes
    up does not count), so that nothing one visitor typed (a name, an order number, markup),
    however many conversations they open, is shown to others. Read from the latest 2,000
    such interactions; each question in its most common spelling."""
    rows = (
        Interaction.objects.filter(project=project, topic=topic, refused=False, error="")
        .exclude(generator="memory")
        .exclude(feedback__vote=-1)
        .exclude(asker="")
        .order_by("-created_at")
        .values_list("question", "asker")[:2000]
    )
    askers: dict[str, set[str]] = {}
    spellings: dict[str, Counter[str]] = {}
    for question, asker in rows:
        key = " ".join(question.lower().split()).rstrip("?!. ")
        askers.setdefault(key, set()).add(asker)
        spellings.setdefault(key, Counter())[question.strip()] += 1
    common = sorted(
        (key for key, seen in askers.items() if len(seen) >= SUGGESTION_ASKERS),
        key=lambda key: (-len(askers[key]), key),
    )
    return [spellings[key].most_common(1)[0][0] for key in common[:limit]]


def generator_speeds(*, last: int = 50) -> dict[str, dict[str, float]]:
    """How fast each kind of generator ("extractive", "local", "ollama") answered here: the
    medians, over its last `last` written answers (no error, not refused), of the time from the
    question to its first words as the visitor sees them (retrieval included: a quoted answer's
    own first token takes milliseconds, the question before it a second) and of the whole
    answer, in seconds, and `n`. Read from the latest 2,000 answers."""
    rows = (
        Interaction.objects.filter(error="", refused=False)
        .exclude(generator__in=["", "memory"])
        .order_by("-created_at")
        .values_list("generator", "latency_ms")[:2000]
    )
    by_kind: dict[str, list[dict[str, float]]] = {}
    for generator, latency in rows:
        kept = by_kind.setdefault(generator.split(":")[0], [])
        if len(kept) < last and isinstance(latency, dict) and "first_token_ms" in latency:
            kept.append(latency)
    speeds = {}
    for kind, latencies in by_kind.items():
        if not latencies:
            continue
        first = [_first_words_ms(t) for t in latencies]
        whole = [float(t.get("total_ms", t["first_token_ms"])) for t in latencies]
        speeds[kind] = {
            "first_token_s": round(statistics.median(first) / 1000, 1),
            "answer_s": round(statistics.median(whole) / 1000, 1),
            "n": len(latencies),
        }
    return speeds


def _first_words_ms(latency: dict[str, float]) -> float:
    """From the question to the first token: everything before generation, then its first
    token (logs older than `generate_ms` have only the generator's own time)."""
    first = float(latency["first_token_ms"])
    if "generate_ms" in latency and "total_ms" in latency:
        return float(latency["total_ms"]) - float(latency["generate_ms"]) + first
    return first


def generator_last_failure(*, project: Project, kind: str) -> str:
    """Why the last question this project's `kind` of generator ("openai", "ollama") was asked
    got a quoted answer instead ("" when that answer was the generator's own): what the console
    shows until the server answers again."""
    from django.db.models import Q

    latest = (
        Interaction.objects.filter(project=project)
        .filter(Q(generator__startswith=f"{kind}:") | Q(fallback__startswith=f"{kind}:"))
        .order_by("-created_at", "-pk")
        .values_list("fallback", flat=True)
        .first()
    )
    return latest if latest and latest.startswith(f"{kind}:") else ""
