"""The one intake every door hands its raw input to: REST, server-sent events, the WebSocket,
the SMS webhook, the console sandbox, `manage.py ask` and the MCP server for AI tools.

It parses (size and depth limits, valid Unicode, no NUL), validates (each field's limits are
written here once), authorises (public key + allowed Origin, or the secret key), rate-limits
(per client for asks, retrievals and feedback, per conversation, per SMS sender), resolves the
conversation, and builds the pipeline `Settings` from the project. It returns a typed request
or raises `IntakeError`; each transport only translates that error into its own shape (a JSON
4xx body, an SSE 4xx before the stream, a WebSocket error frame or close code, TwiML, a form
error, a CommandError, an MCP tool error), so the same bad input gets the same code at every door.

Its parsing step is intake_parsing (re-exported here); two doors add their own requests on this
core: "Ask a person" (handoff_intake) and the MCP server's callers (mcp_intake).
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings as django_settings
from django.db import DatabaseError

from assistant.ask import ratelimits

# The parsing step lives in intake_parsing; every door reads it here, as `intake.parse_json`.
from assistant.ask.intake_parsing import MAX_BODY_BYTES as MAX_BODY_BYTES
from assistant.ask.intake_parsing import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from assistant.ask.intake_parsing import json_depth as json_depth
from assistant.ask.intake_parsing import parse_json as parse_json
from assistant.ask.intake_parsing import parse_query as parse_query
from assistant.ask.intake_parsing import require_json as require_json
from assistant.ask.selectors import (
    conversation_exists,
    conversation_history,
    project_by_key,
)
from assistant.errors import UNAVAILABLE, IntakeError
from assistant.memory.identity import IdentityError, check_user_key, user_key_from
from assistant.models import Project
from assistant.overload import log_database_trouble
from assistant.personal_data.projects import masked
from assistant.rag.types import Settings, Turn

MAX_TOPIC_CHARS = 200
CONVERSATION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
UNKNOWN_CONVERSATION = "This conversation is unknown; start a new one."


# --- Validation ----------------------------------------------------------------------------


def text_field(
    data: Mapping[str, Any],
    name: str,
    *,
    max_chars: int,
    required: bool = False,
    too_long_code: str = "invalid",
    words: bool = False,
) -> str:
    """A text field, stripped; "" when absent and optional. Refuses non-text, lone surrogates
    (they break the tokenizer and the log) and NUL bytes, the same way at every door; with
    `words`, text without a single letter or digit too (see `has_words`)."""
    value = data.get(name)
    if value is None or (value == "" and not required):
        if required:
            raise field_error(name, "This field is required.")
        return ""
    if not isinstance(value, str):
        raise field_error(name, "Send text.")
    if "\x00" in value:
        raise field_error(name, "NUL characters are not allowed.")
    if any("\ud800" <= char <= "\udfff" for char in value):
        raise field_error(name, "The text is not valid Unicode (a lone surrogate).")
    if len(value) > max_chars:
        raise field_error(
            name, f"At most {max_chars} characters.", code=too_long_code,
            message=f"The {name} is limited to {max_chars} characters.",
        )  # fmt: skip
    value = value.strip()
    if required and not value:
        raise field_error(name, "This field is required.")
    if words and value and not has_words(value):
        raise field_error(name, "Ask in words: there is no letter or digit in it.")
    return value


def has_words(text: str) -> bool:
    """Is there a letter or a digit (Unicode categories L* and N*) in the text? The models'
    tokenizer drops U+FFFD, format characters (zero-width space, soft hyphen) and private-use
    characters, so a question made only of those reaches the cross-encoder as an empty query,
    and an empty query scores about 0.99 against any passage: it would pass every gate."""
    return any(unicodedata.category(char)[0] in "LN" for char in text)


def field_error(
    name: str, problem: str, *, code: str = "invalid", message: str = ""
) -> IntakeError:
    return IntakeError(
        code, message or f"The {name} is not valid: {problem}", 400, {name: [problem]}
    )


def question_field(data: Mapping[str, Any]) -> str:
    return text_field(
        data, "question", max_chars=django_settings.ASKDOCS_MAX_QUESTION_CHARS, required=True,
        too_long_code="question_too_long", words=True,
    )  # fmt: skip


def topic_field(data: Mapping[str, Any]) -> str:
    return text_field(data, "topic", max_chars=MAX_TOPIC_CHARS)


def fields_of(data: Mapping[str, Any], *checks: Callable[[Mapping[str, Any]], Any]) -> list[Any]:
    """Run every field's check and report all the fields at fault at once (the first error's
    code and message, every field's problem)."""
    values: list[Any] = []
    errors: list[IntakeError] = []
    for check in checks:
        try:
            values.append(check(data))
        except IntakeError as error:
            errors.append(error)
    if errors:
        first = errors[0]
        merged = {name: problems for e in errors for name, problems in e.fields.items()}
        raise IntakeError(first.code, first.message, first.status, merged)
    return values


def conversation_field(data: Mapping[str, Any]) -> str:
    value = data.get("conversation_id") or ""
    if not isinstance(value, str) or (value and not CONVERSATION_ID.fullmatch(value)):
        raise IntakeError(
            "unknown_conversation", UNKNOWN_CONVERSATION, 400, {"conversation_id": ["Unknown."]}
        )
    return value


def int_field(data: Mapping[str, Any], name: str, *, default: int, low: int, high: int) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise field_error(name, f"A whole number from {low} to {high}.")
    return value


def bool_field(data: Mapping[str, Any], name: str, *, default: bool) -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise field_error(name, "true or false.")
    return value


# --- The database --------------------------------------------------------------------------


@contextmanager
def database_answers() -> Iterator[None]:
    """A database that refuses (too many clients, every pooled connection busy past the pool's
    timeout, a restart) is a 503 like any unavailable dependency: a JSON body or an error
    frame, never Django's HTML 500 nor a socket closed with 1011."""
    try:
        yield
    except DatabaseError as error:
        log_database_trouble(error, "a question")
        raise IntakeError("unavailable", UNAVAILABLE, 503) from None


# --- Authorisation -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """Who knocks: the project key they name, their Origin (browsers), their Bearer token
    (servers) and their address (for rate limits)."""

    key: str
    origin: str = ""
    bearer: str = ""
    client: str = ""

    @classmethod
    def from_headers(cls, headers: Mapping[str, str], *, key: str, client: str) -> Caller:
        bearer = headers.get("Authorization", "")
        return cls(
            key=key or headers.get("X-Project-Key", ""),
            origin=headers.get("Origin", ""),
            bearer=bearer.removeprefix("Bearer ").strip() if bearer.startswith("Bearer ") else "",
            client=client,
        )

    @property
    def is_server(self) -> bool:
        return not self.origin and bool(self.bearer)


def authorise(caller: Caller) -> Project:
    """Browsers are let in by the project's public key and an allowed Origin; servers, which
    send no Origin, by the project's secret key as a Bearer token."""
    with database_answers():
        project = project_by_key(caller.key)
    if project is None:
        raise IntakeError("unknown_project", "Unknown project key.", 401)
    if caller.origin:
        if not project.allows_origin(caller.origin):
            raise IntakeError(
                "origin_not_allowed",
                f"Origin {caller.origin} is not allowed for this project.",
                403,
            )
        return project
    if project.secret_key_matches(caller.bearer):
        return project
    raise IntakeError(
        "origin_required",
        "Send the request from an allowed origin, or authenticate with the project's secret key.",
        403,
    )


def authorise_server(caller: Caller) -> Project:
    """Only the project's own server (its secret key) may; used by the memory API."""
    with database_answers():
        project = project_by_key(caller.key)
    if project is None:
        raise IntakeError("unknown_project", "Unknown project key.", 401)
    if not project.secret_key_matches(caller.bearer):
        raise IntakeError(
            "secret_key_required",
            "Memory is managed with the project's secret key as a Bearer token.",
            403,
        )
    return project


# --- Requests ------------------------------------------------------------------------------


def settings_for(project: Project, **overrides: Any) -> Settings:
    """The pipeline's knobs for a project: the one place a Project becomes `Settings`."""
    knobs = Settings(
        threshold=project.threshold,
        num_candidates=project.num_candidates,
        rerank_top=project.rerank_top,
        max_kept=project.max_kept,
    )
    return Settings(**{**_as_dict(knobs), **overrides}) if overrides else knobs


def _as_dict(knobs: Settings) -> dict[str, Any]:
    return {name: getattr(knobs, name) for name in knobs.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class AskRequest:
    project: Project
    question: str
    topic: str = ""
    conversation_id: str = ""
    #: The server issued `conversation_id` for this first question (it is not in the log yet).
    new_conversation: bool = False
    #: The conversation so far, oldest first (empty for a new one).
    history: tuple[Turn, ...] = ()
    #: Whose memory to use ("" for none): see assistant/memory/identity.py.
    user_key: str = ""
    #: The caller's address (for counting distinct visitors; see services.asker_of).
    client: str = ""
    settings: Settings = field(default_factory=Settings)


def let_in(
    project: Project,
    *,
    question: str,
    topic: str = "",
    conversation_id: str = "",
    history: tuple[Turn, ...] = (),
    user_key: str = "",
    client: str = "",
) -> AskRequest:
    """The request of a door that has validated, authorised and rate-limited its question
    itself, with the fields above (the home page's form, `manage.py ask`, an SMS already
    taken in by its webhook): personal data is masked and the project's settings are read
    here as for every other door."""
    return AskRequest(
        project=project, question=masked(project, question), topic=topic,
        conversation_id=conversation_id,
        history=history, user_key=user_key, client=client, settings=settings_for(project),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class RetrieveRequest:
    project: Project
    question: str
    topic: str
    num_results: int
    settings: Settings


def ask_request(data: Mapping[str, Any], *, project: Project, caller: Caller) -> AskRequest:
    """Validate a question, resolve who asks and its conversation (a new one when none is
    named; unknown ones refused) and count it against the rate limits."""
    question, topic, conversation_id = fields_of(
        data, question_field, topic_field, conversation_field
    )
    # Personal data is masked here, once for every door: what is kept, searched and sent on.
    question = masked(project, question)
    user_key = user_key_for(data, project=project, caller=caller)
    history: list[Turn] = []
    new = not conversation_id
    if new:
        conversation_id = uuid.uuid4().hex
    else:
        with database_answers():
            known = conversation_exists(project=project, conversation_id=conversation_id)
            if known:
                history = conversation_history(project=project, conversation_id=conversation_id)
        if not known:
            raise IntakeError(
                "unknown_conversation", UNKNOWN_CONVERSATION, 400,
                {"conversation_id": ["Unknown."]},
            )  # fmt: skip
    limit("ask", client=caller.client, conversation_id=conversation_id)
    return AskRequest(
        project=project, question=question, topic=topic, conversation_id=conversation_id,
        new_conversation=new, history=tuple(history), user_key=user_key, client=caller.client,
        settings=settings_for(project),
    )  # fmt: skip


def user_key_for(data: Mapping[str, Any], *, project: Project, caller: Caller) -> str:
    """Whose memory a question uses: a widget identity (`visitor_id`, or `user_id` +
    `user_hash`), or `user` named directly by the project's server (secret key only)."""
    try:
        if data.get("user"):
            if not caller.is_server or not project.secret_key_matches(caller.bearer):
                raise IdentityError("Only the project's secret key may name a user directly.")
            return check_user_key(text_field(data, "user", max_chars=120))
        for name in ("visitor_id", "user_id", "user_hash"):
            text_field(data, name, max_chars=100)  # the same text rules as every field
        return user_key_from(data, project=project)
    except IdentityError as error:
        raise IntakeError("invalid_identity", str(error)) from None


def retrieve_request(
    data: Mapping[str, Any], *, project: Project, caller: Caller
) -> RetrieveRequest:
    question, topic, wanted, rerank = fields_of(
        data, question_field, topic_field,
        lambda d: int_field(d, "num_results", default=5, low=1, high=50),
        lambda d: bool_field(d, "rerank", default=True),
    )  # fmt: skip
    limit("retrieve", client=caller.client)
    knobs = settings_for(project)
    return RetrieveRequest(
        project=project, question=masked(project, question), topic=topic, num_results=wanted,
        settings=settings_for(
            project, num_candidates=max(knobs.num_candidates, wanted), max_kept=wanted,
            rerank=rerank,
        ),
    )  # fmt: skip


def limit(
    kind: str,
    *,
    client: str = "",
    conversation_id: str = "",
    sender: str = "",
    say_when: bool = False,
) -> None:
    """Count one request; IntakeError 429 when it is over its limit. With `say_when` (a door
    whose refusal is read by a person, not a program: Slack, Discord), its message says when to
    ask again and its `retry_after` holds those seconds."""
    keys = {"client": client, "conversation_id": conversation_id, "sender": sender}
    if not ratelimits.is_limited(kind, **keys):
        return
    if not say_when:
        raise IntakeError("rate_limited", ratelimits.MESSAGES[kind], 429)
    wait = ratelimits.wait_seconds(kind, **keys)
    raise IntakeError("rate_limited", ratelimits.told_when(kind, wait), 429, retry_after=wait)
