"""Writes and reads of users' memory: the database rows and their vectors together."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from assistant.memory.identity import check_user_key
from assistant.memory.models import UserFact
from assistant.models import Project
from assistant.rag.memory import (
    CANDIDATES,
    Command,
    FactHit,
    FactRefused,
    calibration,
    check_fact,
    recall_reply,
    relevant,
)
from assistant.wiring import runtime

logger = logging.getLogger(__name__)

#: A user's memory is small on purpose: a few things about them, not a notebook.
MAX_FACTS_PER_USER = 50


@dataclass(frozen=True, slots=True)
class Remembered:
    fact: UserFact
    merged: bool  # a near-duplicate was updated instead of a new fact stored


@dataclass(slots=True)
class Recall:
    """The facts used for one question, and every compared fact for the interaction log."""

    used: list[FactHit] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    threshold: float = 0.0


def _where(project: Project, user_key: str) -> dict[str, Any]:
    return {"project_id": project.id, "user_key": user_key}


def memory_threshold(project: Project) -> float:
    if project.memory_threshold is not None:
        return project.memory_threshold
    return calibration(runtime.embedder().id).recall


def memory_facts(*, project: Project, user_key: str) -> list[UserFact]:
    return list(UserFact.objects.filter(project=project, user_key=user_key))


def memory_remember(*, project: Project, user_key: str, text: str) -> Remembered:
    """Store one fact (FactRefused when it must not be stored); a near-duplicate of a fact the
    user already told is replaced by the new wording instead of stored twice."""
    check_user_key(user_key)
    fact_text = check_fact(text)
    model = runtime.embedder()
    store = runtime.memory_store()
    vector = model.embed_documents([fact_text])[0]
    hits = store.query(vector, k=1, where=_where(project, user_key))
    duplicate = calibration(model.id).duplicate
    with transaction.atomic():
        row = None
        if hits and hits[0].similarity >= duplicate:
            row = (
                UserFact.objects.select_for_update()
                .filter(project=project, user_key=user_key, vector_id=hits[0].id)
                .first()
            )
        merged = row is not None
        if row is None:
            if UserFact.objects.filter(project=project, user_key=user_key).count() >= (
                MAX_FACTS_PER_USER
            ):
                raise FactRefused(
                    f"I can remember at most {MAX_FACTS_PER_USER} things about you; "
                    "ask me to forget something first."
                )
            row = UserFact(project=project, user_key=user_key)
        row.text = fact_text
        row.save()
        # Inside the transaction: when the vector cannot be written, the row is not kept.
        store.upsert(
            [row.vector_id],
            [vector],
            [{"project_id": project.id, "user_key": user_key, "fact_id": row.pk}],
        )
    return Remembered(row, merged)


def memory_forget(*, project: Project, user_key: str, text: str) -> list[str]:
    """Delete the facts "forget <text>" is about: those containing the words, else those
    similar to them above the project's memory threshold. Returns the forgotten texts."""
    wanted = " ".join(text.split()).strip(" .!").lower()
    if not wanted:
        return []
    facts = memory_facts(project=project, user_key=user_key)
    chosen = [f for f in facts if wanted in f.text.lower()]
    if not chosen and facts:
        vector = runtime.embedder().embed_query(wanted)
        hits = runtime.memory_store().query(vector, k=len(facts), where=_where(project, user_key))
        threshold = memory_threshold(project)
        close = {h.id for h in hits if h.similarity > threshold}
        chosen = [f for f in facts if f.vector_id in close]
    _delete(chosen)
    return [f.text for f in chosen]


def memory_erase_user(*, project: Project, user_key: str) -> int:
    """Delete everything remembered about one user in one project, vectors included (a
    privacy request, "forget everything"). Returns how many facts were deleted."""
    facts = memory_facts(project=project, user_key=user_key)
    store = runtime.memory_store()
    # Vectors whose row is gone (a crash between the two writes) go too.
    orphans = store.ids(_where(project, user_key)) - {f.vector_id for f in facts}
    store.delete(sorted(orphans))
    _delete(facts)
    return len(facts)


def _delete(facts: list[UserFact]) -> None:
    if not facts:
        return
    # Vectors first: a failure leaves the rows, so the user can ask again.
    runtime.memory_store().delete([f.vector_id for f in facts])
    UserFact.objects.filter(pk__in=[f.pk for f in facts]).delete()


def memory_recall(*, project: Project, user_key: str, question: str) -> Recall:
    """The user's facts relevant to a question: above the threshold, at most two."""
    threshold = memory_threshold(project)
    if not user_key or not UserFact.objects.filter(project=project, user_key=user_key).exists():
        return Recall(threshold=threshold)
    vector = runtime.embedder().embed_query(question)
    hits = runtime.memory_store().query(vector, k=CANDIDATES, where=_where(project, user_key))
    # The database decides whose facts these are, whatever the vector metadata says.
    rows = {
        f.vector_id: f
        for f in UserFact.objects.filter(
            project=project, user_key=user_key, vector_id__in=[h.id for h in hits]
        )
    }
    found = [FactHit(h.id, rows[h.id].text, h.similarity) for h in hits if h.id in rows]
    used = relevant(found, threshold=threshold)
    used_ids = {h.id for h in used}
    log = [
        {
            "fact_id": rows[h.id].pk,
            "similarity": round(h.similarity, 4),
            "injected": h.id in used_ids,
        }
        for h in found
    ]
    return Recall(used=used, log=log, threshold=threshold)


def memory_command(*, project: Project, user_key: str, command: Command) -> str:
    """Carry out a memory command and say what was done (no model is asked)."""
    if command.kind == "recall":
        facts = memory_facts(project=project, user_key=user_key)
        return recall_reply([f.text for f in facts])
    if command.kind == "forget_all":
        count = memory_erase_user(project=project, user_key=user_key)
        if not count:
            return "There was nothing to forget."
        return "Done, I've forgotten everything you told me."
    if command.kind == "forget":
        forgotten = memory_forget(project=project, user_key=user_key, text=command.text)
        if not forgotten:
            return "I don't remember anything like that."
        return "Done, I've forgotten: " + "; ".join(forgotten) + "."
    try:
        remembered = memory_remember(project=project, user_key=user_key, text=command.text)
    except FactRefused as refused:
        return str(refused)
    if remembered.merged:
        return f"I already knew that; I've updated it to: {remembered.fact.text}."
    return f"Got it, I'll remember that: {remembered.fact.text}."


def memory_learn(*, project: Project, user_key: str, facts: list[str]) -> None:
    """Remember what a user stated about themselves (projects that opt in)."""
    for text in facts:
        try:
            memory_remember(project=project, user_key=user_key, text=text)
        except FactRefused:
            continue


def memory_erase_project(*, project: Project) -> int:
    """Delete everything remembered in one project, vectors first (the project is going)."""
    store = runtime.memory_store()
    store.delete(sorted(store.ids({"project_id": project.id})))
    deleted, _ = UserFact.objects.filter(project=project).delete()
    return deleted
