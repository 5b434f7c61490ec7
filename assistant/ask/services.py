"""Writes for the assistant app: answering a question and recording what happened."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from django.conf import settings
from django.utils.crypto import salted_hmac

from assistant.ask.intake import settings_for
from assistant.memory.services import memory_command, memory_learn, memory_recall
from assistant.models import Interaction, Project
from assistant.rag.answering import Answer, is_refusal
from assistant.rag.judge.answerability import Verdict
from assistant.rag.memory import Command, parse_command, stated_facts
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.retrieve.related import related_pages
from assistant.rag.types import SORRY, Question, Retrieval, Turn, Unwritten, Waiting, Written
from assistant.wiring import runtime
from ingestion.curated import curated_answers_used
from ingestion.selectors import chunks_by_vector_id, passages_in_scope, search_scope, section_chunks

logger = logging.getLogger(__name__)

UNAVAILABLE = "The assistant is unavailable right now, please try again in a minute."

EventKind = Literal["sources", "waiting", "token", "written", "done", "error"]


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    data: dict[str, Any]


@dataclass(slots=True)
class AskResult:
    answer_id: str
    answer: str
    refused: bool
    sources: list[dict[str, Any]]
    retrieval: Retrieval | None
    error: str = ""
    latency_ms: dict[str, float] = field(default_factory=dict)
    conversation_id: str = ""
    generator: str = ""
    fallback: str = ""
    #: With a refusal: the nearest pages ("These pages may help"), never the answer.
    related: list[dict[str, Any]] = field(default_factory=list)
    #: With a model that writes: the quote given first, and how the written answer ended
    #: ("complete": `answer` is it; otherwise `answer` is the quote).
    quote: str = ""
    written: str = ""
    truncated: bool = False


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


def ask_stream(
    *,
    project: Project,
    question: str,
    topic: str = "",
    channel: str = Interaction.Channel.API,
    conversation_id: str = "",
    history: Sequence[Turn] = (),
    user_key: str = "",
    client: str = "",
    clock: Callable[[], float] = time.perf_counter,
    max_chars: int = 0,
    max_seconds: float = 0,
    write_within: float = 0,
) -> Generator[Event, None, None]:
    """Answer one question as a stream of events: `sources`, then `token`s (after `waiting`s
    while a local model keeps the question in line), then `done` (or `error`). The
    interaction is recorded whatever happens, also when the consumer stops early (a closed
    socket). `max_chars` / `max_seconds` (0: unbounded) cut a long answer
    short; `done` then says `truncated`. With a model that writes, the quote comes first, then
    `written` and the written answer (rag/written.py); `done.written` says how it ended, and
    `write_within` (0: unbounded) is how long after the quote a one-piece door waits for it.
    With a `user_key`, memory commands ("remember ...")
    are carried out and the user's relevant facts reach the model (assistant/memory/)."""
    started = clock()
    asked = Question(text=question.strip(), topic=topic.strip(), history=tuple(history))
    log = _Log(
        project=project, channel=channel, conversation_id=conversation_id, question=asked,
        asker=asker_of(user_key=user_key, client=client),
    )  # fmt: skip
    command = parse_command(asked.text) if user_key else None
    if command is not None:
        yield from _memory_command(log, user_key, command, clock, started)
        return
    if user_key:
        asked = log.question = _with_memory(log, user_key, asked, clock)
    try:
        # First: a write by another process reaches this one before anything is read or cached.
        scope = search_scope(project_id=project.id)
        runtime.index_seen(project_id=project.id, stamp=scope.stamp)
        pipeline = runtime.pipeline(
            retriever=runtime.answer_retriever(
                project_id=project.id, chunks=chunks_by_vector_id, passages=passages_in_scope
            ),
            generator_choice=project.generator,
            check_llm_answers=project.check_llm_answers,
            sections=section_chunks,
            instructions=project.custom_instructions,
            openai=project.openai_endpoint_fields(),
        )
        answer = pipeline.answer(asked, settings_for(project), scope.where)
    except Exception as exc:  # noqa: BLE001 - any failure of a model or store ends the same way
        logger.exception("retrieval failed for project %s", project.pk)
        log.error = type(exc).__name__[:60]
        log.save(clock() - started)
        yield Event("error", {"code": "unavailable", "message": UNAVAILABLE})
        return

    log.answer = answer
    sources = sources_of(answer.retrieval, answer)
    yield Event("sources", {"sources": sources})

    said = _Said()
    generation_started = clock()
    finished = truncated = gave_up = False
    try:
        for part in answer.parts:
            if isinstance(part, Waiting):
                # The question waits for a local model (its place in line, then its reading).
                yield Event("waiting", {"ahead": part.ahead, "read": round(part.read, 2)})
                if said.late(clock(), write_within):
                    gave_up = True
                    break
                shown = said.quote or said.written
                if shown and max_seconds and clock() - generation_started >= max_seconds:
                    # Over the cap before the model wrote a word: the quote is the answer.
                    gave_up = said.writing_since is not None and not said.written
                    truncated = not gave_up
                    break
                continue
            if isinstance(part, Written):
                said.writing_since = clock()
                log.latency["quote_ms"] = _ms(clock() - generation_started)
                yield Event("written", {})
                continue
            if isinstance(part, Unwritten):
                truncated = bool(said.written)  # whole sentences were shown, then it stopped
                continue
            if not isinstance(part, str):
                continue
            if not said.quote and not said.written:
                log.latency["first_token_ms"] = _ms(clock() - generation_started)
            if said.writing_since is not None and not said.written:
                log.latency["written_first_ms"] = _ms(clock() - generation_started)
            said.add(part)
            yield Event("token", {"text": part})
            if (max_chars and said.length >= max_chars) or (
                max_seconds and clock() - generation_started >= max_seconds
            ):
                truncated = True
                break
            if said.late(clock(), write_within):
                gave_up = True
                break
        finished = True
    except GeneratorUnavailable as exc:
        logger.warning("generator unavailable for project %s: %s", project.pk, exc)
        log.error = "generator_unavailable"
    finally:
        # Close the generator stream (an Ollama response, a local model's run) if we stopped
        # early: the model stops, and the answer says how its written part ended.
        close = getattr(answer.parts, "close", None)
        if close is not None:
            close()
        if gave_up and answer.written == "stopped":
            answer.written = "late"
            truncated = truncated or bool(said.written)
        log.latency["generate_ms"] = _ms(clock() - generation_started)
        log.text = said.final(answer)
        if not finished and not log.error:
            log.error = "cancelled"
        interaction = log.save(clock() - started)

    if log.error:
        yield Event(
            "error",
            {
                "code": "unavailable",
                "message": UNAVAILABLE,
                "answer_id": str(interaction.answer_id),
            },
        )
        return
    yield Event(
        "done",
        {
            "answer_id": str(interaction.answer_id),
            "refused": interaction.refused,
            "truncated": truncated,
            "written": answer.written,
            "timings_ms": interaction.latency_ms,
            "generator": interaction.generator,
            "fallback": interaction.fallback,
            "related": interaction.related,
        },
    )


@dataclass(slots=True)
class _Said:
    """What the visitor was shown: the quote (or the only answer), then the written answer."""

    quote: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    writing_since: float | None = None
    length: int = 0

    def add(self, text: str) -> None:
        (self.quote if self.writing_since is None else self.written).append(text)
        self.length += len(text)

    def late(self, now: float, within: float) -> bool:
        """A door that answers in one piece waited its budget for the written answer."""
        return bool(within) and self.writing_since is not None and now - self.writing_since > within

    def final(self, answer: Answer) -> str:
        """The answer as logged and as a one-piece door gives it: the written answer when it
        was completed, else the quote."""
        if answer.quote_first and answer.written == "complete":
            return "".join(self.written)
        return "".join(self.quote)


def _with_memory(log: _Log, user_key: str, asked: Question, clock: Callable[[], float]) -> Question:
    """The question with the user's relevant facts; without them when memory fails (an
    answer without memory beats no answer)."""
    project = log.project
    started = clock()
    try:
        recall = memory_recall(project=project, user_key=user_key, question=asked.text)
        if project.memory_learns_statements:
            memory_learn(project=project, user_key=user_key, facts=stated_facts(asked.text))
    except Exception:
        logger.exception("memory lookup failed for project %s", project.pk)
        log.memory = [{"error": "unavailable"}]
        return asked
    log.memory = recall.log
    log.latency["memory_ms"] = _ms(clock() - started)
    return replace(asked, facts=tuple(hit.text for hit in recall.used))


def _memory_command(
    log: _Log, user_key: str, command: Command, clock: Callable[[], float], started: float
) -> Generator[Event, None, None]:
    try:
        reply = memory_command(project=log.project, user_key=user_key, command=command)
    except Exception as exc:  # noqa: BLE001 - the store or embedder failed: nothing was changed
        logger.exception("memory command failed for project %s", log.project.pk)
        log.error = type(exc).__name__[:60]
        log.save(clock() - started)
        yield Event("error", {"code": "unavailable", "message": UNAVAILABLE})
        return
    log.text = reply
    log.generator = "memory"
    interaction = log.save(clock() - started)
    yield Event("sources", {"sources": []})
    yield Event("token", {"text": reply})
    yield Event(
        "done",
        {
            "answer_id": str(interaction.answer_id),
            "refused": False,
            "truncated": False,
            "written": "",
            "timings_ms": interaction.latency_ms,
            "generator": interaction.generator,
            "fallback": "",
            "related": [],
        },
    )


def ask(**kwargs: Any) -> AskResult:
    """Answer one question and return the whole answer (the non-streaming API, SMS, CLI). A
    model's written answer is waited for at most ASKDOCS_WRITE_WITHIN seconds after the quote."""
    kwargs.setdefault("write_within", settings.ASKDOCS_WRITE_WITHIN)
    quote: list[str] = []
    text: list[str] = []
    sources: list[dict[str, Any]] = []
    result = AskResult(answer_id="", answer="", refused=False, sources=[], retrieval=None)
    for event in ask_stream(**kwargs):
        if event.kind == "sources":
            sources = event.data["sources"]
        elif event.kind == "token":
            text.append(event.data["text"])
        elif event.kind == "written":
            quote, text = text, []
        elif event.kind == "done":
            result.written = event.data["written"]
            result.truncated = event.data["truncated"]
            result.answer_id = event.data["answer_id"]
            result.refused = event.data["refused"]
            result.latency_ms = event.data["timings_ms"]
            result.generator = event.data["generator"]
            result.fallback = event.data["fallback"]
            result.related = event.data["related"]
        elif event.kind == "error":
            result.error = event.data["code"]
            result.answer = event.data["message"]
            result.answer_id = event.data.get("answer_id", "")
            return result
    result.quote = "".join(quote)
    written = result.written == "complete" or not quote
    result.answer = "".join(text) if written else result.quote
    result.sources = [] if result.refused else sources
    return result


def asker_of(*, user_key: str, client: str) -> str:
    """Who asks, for counting distinct visitors: a proven identity (`user:` is signed by the
    host page's server, `sms:` reported by Twilio) or else the client's address. A widget's
    `visitor:` id is not one: the page makes it up and could make up a new one per question.
    Hashed with the site's secret: the log keeps no address."""
    who = user_key if user_key.startswith(("user:", "sms:")) else (client and f"addr:{client}")
    return salted_hmac("askdocs.asker", who).hexdigest()[:32] if who else ""


@dataclass(slots=True)
class _Log:
    project: Project
    channel: str
    conversation_id: str
    question: Question
    asker: str = ""
    answer: Answer | None = None
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
        latency["total_ms"] = _ms(elapsed)
        if retrieval is not None and not refused and not self.error:
            cited = self.answer.prompt.passages if self.answer and self.answer.prompt else ()
            curated = [c.chunk.id for c in cited if c.chunk.curated]
            if curated:
                curated_answers_used(vector_ids=curated)
        return Interaction.objects.create(
            project=self.project,
            channel=self.channel,
            conversation_id=self.conversation_id,
            asker=self.asker,
            question=self.question.text,
            topic=self.question.topic,
            retrieval_query=retrieval.query if retrieval else "",
            query_form=retrieval.query_form if retrieval else "",
            candidates=[
                {
                    "chunk_id": c.chunk.id,
                    "title": c.chunk.title,
                    "url": c.chunk.url,
                    "similarity": None if c.similarity is None else round(c.similarity, 4),
                    "relevance": None if c.relevance is None else round(c.relevance, 4),
                    "kept": c.kept,
                }
                for c in (retrieval.candidates if retrieval else [])
            ],
            sources=sources_of(retrieval, self.answer) if retrieval and not refused else [],
            related=[page.as_dict() for page in related_pages(retrieval)] if refused else [],
            best_relevance=retrieval.best_relevance if retrieval else None,
            kept_count=len(retrieval.kept) if retrieval else 0,
            answer=SORRY if refused and not self.text else self.text,
            refused=refused,
            generator=self.answer.generator_id if self.answer else self.generator,
            fallback=self.answer.fallback if self.answer else "",
            error=self.error,
            latency_ms=latency,
            memory=self.memory,
            answerability=verdict_log(self.answer.verdict if self.answer else None),
            total_ms=latency["total_ms"],
        )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
