"""Writes for the assistant app: answering a question the intake let in, as a stream of events
or in one piece, and recording what happened (answer_log.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from django.conf import settings

from assistant.ask.answer_log import AnswerLog, asker_of, ms, sources_of, visitor_of
from assistant.ask.intake import AskRequest
from assistant.ask.pipelines import project_pipeline
from assistant.errors import UNAVAILABLE
from assistant.memory.services import memory_command, memory_learn, memory_recall
from assistant.models import Interaction
from assistant.rag.answer import Answer
from assistant.rag.memory import Command, parse_command, stated_facts
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.types import Outcome, Question, Retrieval, Unwritten, Waiting, Written
from assistant.rag.write.citations import renumbered

logger = logging.getLogger(__name__)

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


@dataclass(frozen=True, slots=True)
class Limits:
    """How long an answer may grow: `max_chars` / `max_seconds` (0: unbounded) cut it short
    (at a whole sentence); `write_within` (0: unbounded) is how long after the quote a door
    that answers in one piece waits for a model's written answer, and `first_word_within` how
    long a door that streams waits for its first written word (then the quote is the answer:
    a visitor is not told "Writing…" for a minute while a busy model reads its prompt)."""

    max_chars: int = 0
    max_seconds: float = 0
    write_within: float = 0
    first_word_within: float = 0


def ask_stream(
    request: AskRequest,
    *,
    channel: str = Interaction.Channel.API,
    limits: Limits = Limits(),  # noqa: B008 - frozen, so one shared default is safe
    clock: Callable[[], float] = time.perf_counter,
) -> Generator[Event, None, None]:
    """Answer one question as a stream of events: `sources`, then `token`s (after `waiting`s
    while a local model keeps the question in line), then `done` (or `error`). The
    interaction is recorded whatever happens, also when the consumer stops early (a closed
    socket). With a model that writes, the quote comes first, then `written` and the written
    answer (rag/written.py); `done.written` says how it ended. With a `user_key`, memory
    commands ("remember ...") are carried out and the user's relevant facts reach the model
    (assistant/memory/)."""
    started = clock()
    asked = Question(text=request.question.strip(), topic=request.topic.strip(),
                     history=tuple(request.history))  # fmt: skip
    log = AnswerLog(
        project=request.project, channel=channel, conversation_id=request.conversation_id,
        question=asked, asker=asker_of(user_key=request.user_key, client=request.client),
        visitor=visitor_of(request.user_key),
    )  # fmt: skip
    user_key = request.user_key
    command = parse_command(asked.text) if user_key else None
    if command is not None:
        yield from _memory_command(log, user_key, command, clock, started)
        return
    if user_key:
        asked = log.question = _with_memory(log, user_key, asked, clock)
    try:
        answer = project_pipeline(request.project).answer(asked, request.settings)
    except Exception as exc:  # noqa: BLE001 - any failure of a model or store ends the same way
        logger.exception("retrieval failed for project %s", request.project.pk)
        log.error = type(exc).__name__[:60]
        log.save(clock() - started)
        yield Event("error", {"code": "unavailable", "message": UNAVAILABLE})
        return

    log.answer = answer
    yield Event("sources", {"sources": sources_of(answer.retrieval, answer)})
    telling = _Telling(answer, limits, clock)
    try:
        yield from telling.events()
    finally:
        telling.finish(log)
        interaction = log.save(clock() - started)
    if log.error:
        yield Event("error", {"code": "unavailable", "message": UNAVAILABLE,
                              "answer_id": str(interaction.answer_id)})  # fmt: skip
        return
    yield Event("done", {
        "answer_id": str(interaction.answer_id), "refused": interaction.refused,
        "truncated": telling.truncated, "written": telling.outcome.written,
        "timings_ms": interaction.latency_ms, "generator": interaction.generator,
        "fallback": telling.outcome.reason, "related": interaction.related,
    })  # fmt: skip


class _Telling:
    """Telling the visitor one answer: its parts as events, within the limits, and then what
    was said and how it ended, for the log."""

    def __init__(self, answer: Answer, limits: Limits, clock: Callable[[], float]) -> None:
        self.answer, self.limits, self.clock = answer, limits, clock
        self.said = _Said()
        self.started = clock()
        self.latency: dict[str, float] = {}
        self.outcome: Outcome = Outcome(answer.generator_id)
        self.ended = False  # the parts ended with their Outcome
        self.finished = self.truncated = self.gave_up = False
        self.error = ""

    def events(self) -> Iterator[Event]:
        try:
            for part in self.answer.parts:
                if isinstance(part, Outcome):
                    self.outcome, self.ended = part, True
                    continue
                event = self._event(part)
                if event is not None:
                    yield event
                if self._stop(part):
                    break
            self.finished = True
        except GeneratorUnavailable as exc:
            logger.warning("generator unavailable: %s", exc)
            self.error = "generator_unavailable"

    def _event(self, part: object) -> Event | None:
        said, clock = self.said, self.clock
        if isinstance(part, Waiting):
            # The question waits for a local model (its place in line, then its reading).
            return Event("waiting", {"ahead": part.ahead, "read": round(part.read, 2)})
        if isinstance(part, Written):
            said.writing_since = clock()
            self.latency["quote_ms"] = ms(clock() - self.started)
            return Event("written", {})
        if isinstance(part, Unwritten):
            self.truncated = bool(said.written)  # whole sentences were shown, then it stopped
            return None
        if not isinstance(part, str):
            return None
        if not said.quote and not said.written:
            self.latency["first_token_ms"] = ms(clock() - self.started)
        if said.writing_since is not None and not said.written:
            self.latency["written_first_ms"] = ms(clock() - self.started)
        said.add(part)
        return Event("token", {"text": part})

    def _stop(self, part: object) -> bool:
        """Whether to stop reading after this part (and why, in `truncated` / `gave_up`)."""
        said, now, limits = self.said, self.clock(), self.limits
        over_time = bool(limits.max_seconds) and now - self.started >= limits.max_seconds
        if said.late_to_start(now, limits.first_word_within):
            self.gave_up = True
            return True
        if isinstance(part, Waiting):
            if said.late(now, limits.write_within):
                self.gave_up = True
                return True
            if (said.quote or said.written) and over_time:
                # Over the cap before the model wrote a word: the quote is the answer.
                self.gave_up = said.writing_since is not None and not said.written
                self.truncated = not self.gave_up
                return True
            return False
        if not isinstance(part, str):
            return False
        if (limits.max_chars and said.length >= limits.max_chars) or over_time:
            self.truncated = True
            return True
        if said.late(now, limits.write_within):
            self.gave_up = True
            return True
        return False

    def finish(self, log: AnswerLog) -> None:
        """Close the parts (a model still writing stops: an Ollama response, a local model's
        run) and fill in the log: what was said, how the answer ended, and why it stopped."""
        close = getattr(self.answer.parts, "close", None)
        if close is not None:
            close()
        if not self.ended:
            wrote = bool(self.said.written)
            self.outcome = self.answer.stopped(wrote=wrote, late=self.gave_up)
            if self.gave_up and self.answer.quote_first:
                self.truncated = self.truncated or wrote
        self.latency["generate_ms"] = ms(self.clock() - self.started)
        log.latency.update(self.latency)
        log.outcome = self.outcome
        log.text = self.said.final(self.answer, self.outcome)
        log.error = log.error or self.error
        if not self.finished and not log.error:
            log.error = "cancelled"


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

    def late_to_start(self, now: float, within: float) -> bool:
        """A door that streams waited its budget for the written answer's first word."""
        return (
            bool(within)
            and self.writing_since is not None
            and not self.written
            and now - self.writing_since > within
        )

    def final(self, answer: Answer, outcome: Outcome) -> str:
        """The answer as logged and as a one-piece door gives it: the written answer when it
        was completed, else the quote."""
        if answer.quote_first and outcome.written == "complete":
            return "".join(self.written)
        return "".join(self.quote)


def _with_memory(
    log: AnswerLog, user_key: str, asked: Question, clock: Callable[[], float]
) -> Question:
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
    log.latency["memory_ms"] = ms(clock() - started)
    return replace(asked, facts=tuple(hit.text for hit in recall.used))


def _memory_command(
    log: AnswerLog, user_key: str, command: Command, clock: Callable[[], float], started: float
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
    yield Event("done", {
        "answer_id": str(interaction.answer_id), "refused": False, "truncated": False,
        "written": "", "timings_ms": interaction.latency_ms, "generator": interaction.generator,
        "fallback": "", "related": [],
    })  # fmt: skip


def _renumbered(answer: str, sources: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The answer's markers from [1] in the order it cites, its sources in that order
    (rag/write/citations.py): a written answer that cites only the prompt's third passage
    says [1], and its first source is that passage."""
    text, order = renumbered(answer, len(sources))
    by_number = {source["n"]: source for source in sources}
    if sorted(by_number) != list(range(1, len(sources) + 1)):
        return answer, sources  # not numbered 1..n: nothing to renumber against
    return text, [{**by_number[old], "n": new} for new, old in enumerate(order, start=1)]


def ask(
    request: AskRequest,
    *,
    channel: str = Interaction.Channel.API,
    write_within: float | None = None,
    on_written: Callable[[], None] | None = None,
    on_quote: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> AskResult:
    """Answer one question and return the whole answer (the non-streaming API, SMS, CLI, MCP).
    A model's written answer is waited for at most ASKDOCS_WRITE_WITHIN seconds after the
    quote (`write_within`); `on_written` is called when the quote is done and the model starts
    writing (admission gives the answer's slot back then), then `on_quote` with the quote and
    its sources as this answer would give them: a door that can change a message it posted
    (Slack) shows the quote at once, and the answer when it is complete."""
    wait = settings.ASKDOCS_WRITE_WITHIN if write_within is None else write_within
    quote: list[str] = []
    text: list[str] = []
    sources: list[dict[str, Any]] = []
    result = AskResult(answer_id="", answer="", refused=False, sources=[], retrieval=None)
    for event in ask_stream(request, channel=channel, limits=Limits(write_within=wait)):
        if event.kind == "sources":
            sources = event.data["sources"]
        elif event.kind == "token":
            text.append(event.data["text"])
        elif event.kind == "written":
            quote, text = text, []
            if on_written is not None:
                on_written()
            if on_quote is not None and quote:
                on_quote(*_renumbered("".join(quote), sources))
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
    if not result.refused:
        result.answer, sources = _renumbered(result.answer, sources)
    result.sources = [] if result.refused else sources
    result.conversation_id = request.conversation_id
    return result
