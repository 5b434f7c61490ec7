"""Recording what happened to one question: the interaction log every door writes (and the
search doors too), which the metrics, blind spots, conversations and checks read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.crypto import salted_hmac

from assistant.models import Interaction, Project
from assistant.rag.answer import Answer, is_refusal
from assistant.rag.judge.answerability import Verdict
from assistant.rag.retrieve.related import related_pages
from assistant.rag.types import SORRY, Outcome, Question, Retrieval
from ingestion.curated import curated_answers_used


def verdict_log(verdict: Verdict | None) -> dict[str, Any]:
    """What the answerability check said, as logged and shown ({} when it did not run)."""
    if verdict is None:
        return {}
    return {
        "answerable": verdict.answerable,
        "score": verdict.score,
        "reason": verdict.reason,
        "features": verdict.features,
        "best_sentence": verdict.best_sentence,
        # The model asked for a second opinion on a refusal the check was unsure of.
        "judged_by": verdict.judged_by,
        # The model's draft the passages were found by, when the question as asked found none.
        "read_as": verdict.read_as,
    }


def sources_of(retrieval: Retrieval, answer: Answer | None = None) -> list[dict[str, Any]]:
    """The passages the answer was written from, numbered as its [n] markers: the prompt's
    (a generator may be given fewer than were kept), else every kept one."""
    passages = answer.prompt.passages if answer is not None and answer.prompt else retrieval.kept
    return [
        {
            "n": number,
            "title": c.chunk.title,
            "url": c.chunk.url,
            "relevance": round(c.relevance, 4) if c.relevance is not None else None,
            **({"curated": True} if c.chunk.curated else {}),
        }
        for number, c in enumerate(passages, start=1)
    ]


#: User keys someone else vouches for: `user:` is signed by the host page's server, `sms:`
#: reported by Twilio, `slack:` and `discord:` named in a request Slack or Discord signed.
PROVEN_KEYS = ("user:", "sms:", "slack:", "discord:")


def asker_of(*, user_key: str, client: str) -> str:
    """Who asks, for counting distinct visitors: a proven identity (PROVEN_KEYS) or else the
    client's address. A widget's `visitor:` id is not one: the page makes it up and could make
    up a new one per question. Hashed with the site's secret: the log keeps no address."""
    who = user_key if user_key.startswith(PROVEN_KEYS) else (client and f"addr:{client}")
    return salted_hmac("askdocs.asker", who).hexdigest()[:32] if who else ""


def visitor_of(user_key: str) -> str:
    """A widget visitor's key (`visitor:<id>`) as the log keeps it: a keyed hash that finds
    their questions when they ask for them, and names no one to anybody without the key."""
    if not user_key.startswith("visitor:"):
        return ""
    return salted_hmac("askdocs.visitor", user_key).hexdigest()[:32]


@dataclass(slots=True)
class AnswerLog:
    """What one question's interaction row will say, filled in as the answer is made and
    saved once, whatever happened (an error, a cancelled stream, a search that wrote none)."""

    project: Project
    channel: str
    conversation_id: str
    question: Question
    asker: str = ""
    #: visitor_of(the widget's visitor key), "" for other doors.
    visitor: str = ""
    answer: Answer | None = None
    #: How the answer ended (None: nothing was generated, or it is not known yet).
    outcome: Outcome | None = None
    text: str = ""
    error: str = ""
    latency: dict[str, float] = field(default_factory=dict)
    memory: list[dict[str, Any]] = field(default_factory=list)
    generator: str = ""
    #: A search that writes no answer (assistant/ask/search.py): refused when nothing is kept.
    retrieval: Retrieval | None = None

    def save(self, elapsed: float) -> Interaction:
        retrieval = self.answer.retrieval if self.answer else self.retrieval
        if self.answer is not None:
            refused = self.answer.refused_before_generation or is_refusal(self.text)
        else:
            refused = self.retrieval is not None and not self.retrieval.kept
        latency = {**(retrieval.timings_ms if retrieval else {}), **self.latency}
        latency["total_ms"] = ms(elapsed)
        if retrieval is not None and not refused and not self.error:
            cited = self.answer.prompt.passages if self.answer and self.answer.prompt else ()
            curated = [c.chunk.id for c in cited if c.chunk.curated]
            if curated:
                curated_answers_used(vector_ids=curated)
        ended = self.outcome
        if ended is None and self.answer is not None:
            ended = Outcome(self.answer.generator_id)
        return Interaction.objects.create(
            project=self.project,
            channel=self.channel,
            conversation_id=self.conversation_id,
            asker=self.asker,
            visitor=self.visitor,
            question=self.question.text,
            topic=self.question.topic,
            retrieval_query=retrieval.query if retrieval else "",
            query_form=retrieval.query_form if retrieval else "",
            candidates=_candidates(retrieval),
            sources=sources_of(retrieval, self.answer) if retrieval and not refused else [],
            related=[page.as_dict() for page in related_pages(retrieval)] if refused else [],
            best_relevance=retrieval.best_relevance if retrieval else None,
            kept_count=len(retrieval.kept) if retrieval else 0,
            answer=SORRY if refused and not self.text else self.text,
            refused=refused,
            generator=ended.generator if ended else self.generator,
            fallback=ended.fallback if ended else "",
            error=self.error,
            latency_ms=latency,
            memory=self.memory,
            answerability=verdict_log(self.answer.verdict if self.answer else None),
            total_ms=latency["total_ms"],
        )


def _candidates(retrieval: Retrieval | None) -> list[dict[str, Any]]:
    return [
        {
            "chunk_id": c.chunk.id,
            "title": c.chunk.title,
            "url": c.chunk.url,
            "similarity": None if c.similarity is None else round(c.similarity, 4),
            "relevance": None if c.relevance is None else round(c.relevance, 4),
            "kept": c.kept,
        }
        for c in (retrieval.candidates if retrieval else [])
    ]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
