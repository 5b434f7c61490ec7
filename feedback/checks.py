"""Conversations kept as checks: a logged question, with its history and topic, and what must
happen when it is asked again. Checks run through the project's own pipeline, the one every
door uses (ask/pipelines.py: retriever, gate, answerability check, generator, custom
instructions, model server, section reading), without the retrieval cache and without being
logged as visitors' questions; a threshold under consideration can be tried before it is saved.

`check_run` is what the console (in the background, with progress) and `manage.py
check_answers` (for CI) call."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.utils import timezone

from assistant.ask.answer_log import sources_of
from assistant.ask.intake import settings_for
from assistant.ask.pipelines import project_pipeline
from assistant.models import Interaction, Project
from assistant.rag.answer import is_refusal
from assistant.rag.types import Question, Turn
from feedback.models import AnswerCheck, CheckRun

MAX_FACTS = 10


class CheckInvalid(ValueError):
    """What was typed cannot make a check; the message says why."""


@dataclass(slots=True)
class Outcome:
    """What happened when a check's question was asked, and whether that is what must."""

    refused: bool
    answer: str
    cited: list[dict[str, Any]]
    ms: float
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "refused": self.refused,
            "answer": self.answer[:2000],
            "cited": [{"title": c["title"], "url": c["url"]} for c in self.cited],
            "problems": self.problems,
            "ms": round(self.ms, 1),
            "at": timezone.now().isoformat(),
        }


def check_create(
    *,
    project: Project,
    question: str,
    expect: str,
    topic: str = "",
    history: Sequence[dict[str, str]] = (),
    cites: str = "",
    facts: Sequence[str] | str = (),
    from_answer_id: str = "",
    created_by: Any = None,
) -> AnswerCheck:
    text = " ".join(question.split())
    if not text:
        raise CheckInvalid("A check needs a question.")
    if expect not in AnswerCheck.Expect.values:
        raise CheckInvalid("Say whether it must be answered or refused.")
    lines = facts.splitlines() if isinstance(facts, str) else list(facts)
    kept_facts = [" ".join(f.split()) for f in lines if f.strip()][:MAX_FACTS]
    turns = [
        {"role": t["role"], "content": str(t["content"])[:4000]}
        for t in history
        if t.get("role") in ("user", "assistant") and t.get("content")
    ][-20:]
    return AnswerCheck.objects.create(
        project=project, question=text, topic=" ".join(topic.split())[:200], history=turns,
        expect=expect, cites=cites.strip()[:1000],
        facts=kept_facts if expect == AnswerCheck.Expect.ANSWERED else [],
        from_answer_id=from_answer_id[:64], created_by=created_by,
    )  # fmt: skip


def check_from_answer(*, project: Project, answer_id: str) -> dict[str, Any] | None:
    """What a logged answer suggests for a check: its question, topic and the turns before it
    in its conversation; answered citing its first source, or refused, as it went."""
    try:
        key = uuid.UUID(answer_id)
    except ValueError:
        return None
    found = Interaction.objects.filter(project=project, answer_id=key).first()
    if found is None:
        return None
    earlier = (
        Interaction.objects.filter(
            project=project, conversation_id=found.conversation_id, created_at__lt=found.created_at
        ).order_by("created_at", "id")
        if found.conversation_id
        else Interaction.objects.none()
    )
    history: list[dict[str, str]] = []
    for turn in earlier:
        history += [{"role": "user", "content": turn.question},
                    {"role": "assistant", "content": turn.answer}]  # fmt: skip
    first = found.sources[0] if found.sources and not found.refused else None
    return {
        "interaction": found,
        "question": found.question,
        "topic": found.topic,
        "history": history,
        "expect": AnswerCheck.Expect.REFUSED if found.refused else AnswerCheck.Expect.ANSWERED,
        "cites": (first.get("title") or first.get("url") or "") if first else "",
    }


def check_answer(*, check: AnswerCheck, threshold: float | None = None) -> Outcome:
    """Ask the check's question through the project's pipeline (at `threshold` when given)
    and judge what came back."""
    project = check.project
    started = time.perf_counter()
    settings = settings_for(project)
    if threshold is not None:
        settings = replace(settings, threshold=threshold)
    history = tuple(Turn(t["role"], t["content"]) for t in check.history)
    asked = Question(text=check.question, topic=check.topic, history=history)
    answer = project_pipeline(project, cached=False).answer(asked, settings)
    text = answer.read().text
    refused = answer.refused_before_generation or is_refusal(text)
    cited = [] if refused else sources_of(answer.retrieval, answer)
    outcome = Outcome(refused, text, cited, (time.perf_counter() - started) * 1000)
    outcome.problems = problems_of(check, outcome)
    return outcome


def problems_of(check: AnswerCheck, outcome: Outcome) -> list[str]:
    """Why the outcome is not what the check wants ([] when it is)."""
    if check.expect == AnswerCheck.Expect.REFUSED:
        return [] if outcome.refused else ["answered, but it must be refused"]
    if outcome.refused:
        return ["refused, but it must be answered"]
    problems = []
    wanted = check.cites.strip().lower()
    # Part of a title, or of a URL: a page (backup-dump.html) or a section of it
    # (backup-dump.html#BACKUP-DUMP-ALL), written with or without the site's address.
    if wanted and not any(
        wanted in (c["title"] or "").lower() or wanted in (c["url"] or "").lower()
        for c in outcome.cited
    ):
        problems.append(f"does not cite “{check.cites}”")
    lowered = outcome.answer.lower()
    problems += [f"does not say “{fact}”" for fact in check.facts if fact.lower() not in lowered]
    return problems


def check_run(
    *,
    project: Project,
    run: CheckRun | None = None,
    on_progress: Callable[[CheckRun], None] | None = None,
) -> CheckRun:
    """Run every check of the project, storing each outcome (the last one becomes the
    previous), and the run's progress as it goes."""
    checks = list(AnswerCheck.objects.filter(project=project).select_related("project"))
    if run is None:
        run = CheckRun.objects.create(project=project)
    run.total, run.done, run.failed = len(checks), 0, 0
    run.save(update_fields=["total", "done", "failed"])
    for check in checks:
        outcome = check_answer(check=check)
        AnswerCheck.objects.filter(pk=check.pk).update(
            previous_result=check.last_result, last_result=outcome.as_dict()
        )
        run.done += 1
        run.failed += 0 if outcome.passed else 1
        run.save(update_fields=["done", "failed"])
        if on_progress is not None:
            on_progress(run)
    run.finished_at = timezone.now()
    run.save(update_fields=["finished_at"])
    return run


@dataclass(frozen=True, slots=True)
class Broken:
    check: AnswerCheck
    outcome: Outcome


def checks_broken_by(*, project: Project, threshold: float) -> list[Broken]:
    """The checks that pass at the project's threshold now (by their last run) and would fail
    at `threshold`: what a change would break, before it is saved. Checks never run, or
    failing already, are run at both, so the answer does not rest on a stale result."""
    broken = []
    for check in AnswerCheck.objects.filter(project=project).select_related("project"):
        if check.passed is not True and not check_answer(check=check).passed:
            continue
        outcome = check_answer(check=check, threshold=threshold)
        if not outcome.passed:
            broken.append(Broken(check, outcome))
    return broken
