"""The one intake every door hands its raw input to: REST, server-sent events, the WebSocket,
the SMS webhook, the console sandbox, `manage.py ask` and the MCP server for AI tools.

It parses (size and depth limits, valid Unicode, no NUL), validates (each field's limits are
written here once), authorises (public key + allowed Origin, or the secret key), rate-limits
(per client for asks, retrievals and feedback, per conversation, per SMS sender), resolves the
conversation, and builds the pipeline `Settings` from the project. It returns a typed request
or raises `IntakeError`; each transport only translates that error into its own shape (a JSON
4xx body, an SSE 4xx before the stream, a WebSocket error frame or close code, TwiML, a form
error, a CommandError, an MCP tool error), so the same bad input gets the same code at every door.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import DatabaseError

from assistant.ask import ratelimits
from assistant.ask.selectors import (
    conversation_exists,
    conversation_history,
    project_by_key,
    project_by_secret_key,
)
from assistant.errors import IntakeError
from assistant.links import UnsafeUrl, http_url
from assistant.memory.identity import IdentityError, check_user_key, user_key_from
from assistant.models import Project
from assistant.overload import log_database_trouble
from assistant.rag.types import Settings, Turn

#: Bytes of a JSON body or WebSocket frame; a question with its fields fits many times over.
MAX_BODY_BYTES = 16_000
#: Nesting of a JSON body: ours are flat; deep nesting only ever comes from abuse, and Python's
#: parser would overflow its stack on it.
MAX_JSON_DEPTH = 16
MAX_TOPIC_CHARS = 200
CONVERSATION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
UNKNOWN_CONVERSATION = "This conversation is unknown; start a new one."
MAX_QUERY_FIELDS = 32
SEND_AN_OBJECT = 'Send a JSON object like {"question": "..."}.'


# --- Parsing -------------------------------------------------------------------------------


def parse_json(raw: bytes | str) -> dict[str, Any]:
    """A JSON object from a request body or a frame, within the size and depth limits."""
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > MAX_BODY_BYTES:
        raise IntakeError("too_large", f"Requests are limited to {MAX_BODY_BYTES} bytes.", 413)
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise IntakeError("not_utf8", "The body is not UTF-8.") from None
    if json_depth(text) > MAX_JSON_DEPTH:
        raise IntakeError("malformed_json", "The JSON is nested too deeply.")
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        raise IntakeError("malformed_json", "The body is not JSON.") from None
    if not isinstance(data, dict):
        raise IntakeError("invalid", SEND_AN_OBJECT)
    return data


def require_json(content_type: str) -> None:
    """A body must say it is JSON, as DRF's parser makes the REST doors insist (415)."""
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise IntakeError(
            "unsupported_media_type", "Send the body as JSON (Content-Type: application/json).",
            415,
        )  # fmt: skip


def parse_query(query_string: str) -> dict[str, str]:
    """The fields of a URL query (the GET stream door): percent-escapes must decode as UTF-8,
    where Django's `request.GET` would turn bad bytes into U+FFFD and answer the rest; a few
    dozen fields at most, where Django would answer too many with an HTML 400. The last value
    of a repeated name wins, as in `QueryDict.dict()`."""
    try:
        return dict(
            parse_qsl(query_string, keep_blank_values=True, errors="strict",
                      max_num_fields=MAX_QUERY_FIELDS)
        )  # fmt: skip
    except UnicodeDecodeError:
        raise IntakeError("not_utf8", "The query is not UTF-8.") from None
    except ValueError:
        raise IntakeError("invalid", f"At most {MAX_QUERY_FIELDS} query fields.") from None


def json_depth(text: str) -> int:
    """How deeply brackets nest outside strings; measured before parsing, so a hostile body is
    refused without recursing into it."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


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
            raise _field_error(name, "This field is required.")
        return ""
    if not isinstance(value, str):
        raise _field_error(name, "Send text.")
    if "\x00" in value:
        raise _field_error(name, "NUL characters are not allowed.")
    if any("\ud800" <= char <= "\udfff" for char in value):
        raise _field_error(name, "The text is not valid Unicode (a lone surrogate).")
    if len(value) > max_chars:
        raise _field_error(
            name, f"At most {max_chars} characters.", code=too_long_code,
            message=f"The {name} is limited to {max_chars} characters.",
        )  # fmt: skip
    value = value.strip()
    if required and not value:
        raise _field_error(name, "This field is required.")
    if words and value and not has_words(value):
        raise _field_error(name, "Ask in words: there is no letter or digit in it.")
    return value


def has_words(text: str) -> bool:
    """Is there a letter or a digit (Unicode categories L* and N*) in the text? The models'
    tokenizer drops U+FFFD, format characters (zero-width space, soft hyphen) and private-use
    characters, so a question made only of those reaches the cross-encoder as an empty query,
    and an empty query scores about 0.99 against any passage: it would pass every gate."""
    return any(unicodedata.category(char)[0] in "LN" for char in text)


def _field_error(
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
        raise _field_error(name, f"A whole number from {low} to {high}.")
    return value


def bool_field(data: Mapping[str, Any], name: str, *, default: bool) -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise _field_error(name, "true or false.")
    return value


# --- The database --------------------------------------------------------------------------

DATABASE_UNAVAILABLE = "The assistant is unavailable right now, please try again in a minute."


@contextmanager
def database_answers() -> Iterator[None]:
    """A database that refuses (too many clients, every pooled connection busy past the pool's
    timeout, a restart) is a 503 like any unavailable dependency: a JSON body or an error
    frame, never Django's HTML 500 nor a socket closed with 1011."""
    try:
        yield
    except DatabaseError as error:
        log_database_trouble(error, "a question")
        raise IntakeError("unavailable", DATABASE_UNAVAILABLE, 503) from None


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


def authorise_mcp(caller: Caller) -> Project:
    """AI tools (MCP clients) name no public key: their Bearer secret key alone picks the
    project. A browser-based client must also come from one of the project's origins."""
    if ratelimits.wrong_keys_exceeded(caller.client):
        raise IntakeError("rate_limited", ratelimits.WRONG_KEYS, 429)
    project = project_by_secret_key(caller.bearer)
    if project is None:
        ratelimits.count_wrong_key(caller.client)  # guessing keys costs the guesser
        raise IntakeError(
            "secret_key_required",
            "Authenticate with the project's secret key: Authorization: Bearer sk_...",
            401,
        )
    if caller.origin and not project.allows_origin(caller.origin):
        raise IntakeError(
            "origin_not_allowed", f"Origin {caller.origin} is not allowed for this project.", 403
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
        project=project, question=question, topic=topic, num_results=wanted,
        settings=settings_for(
            project, num_candidates=max(knobs.num_candidates, wanted), max_kept=wanted,
            rerank=rerank,
        ),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class HandoffRequest:
    """ "Ask a person": a conversation the server issued, to hand over to support."""

    project: Project
    conversation_id: str
    email: str = ""
    page_url: str = ""
    message: str = ""


MAX_HANDOFF_MESSAGE_CHARS = 1000
NO_CONTACT_SUPPORT = "This assistant has no way to reach a person set up."


def handoff_request(data: Mapping[str, Any], *, project: Project, caller: Caller) -> HandoffRequest:
    """Validate a handoff like every other request: the project must offer one, the
    conversation must be one the server issued to this project, the e-mail and page URL must
    be what they say; then it is counted against its own (low) rate limits."""
    if not project.contact_support:
        raise IntakeError("no_contact_support", NO_CONTACT_SUPPORT, 404)
    conversation_id, email, page_url, message = fields_of(
        data, conversation_field, email_field, page_url_field,
        lambda d: text_field(d, "message", max_chars=MAX_HANDOFF_MESSAGE_CHARS),
    )  # fmt: skip
    if not conversation_id or not conversation_exists(
        project=project, conversation_id=conversation_id
    ):
        raise IntakeError(
            "unknown_conversation", UNKNOWN_CONVERSATION, 400, {"conversation_id": ["Unknown."]}
        )
    limit("handoff", client=caller.client, conversation_id=conversation_id)
    return HandoffRequest(
        project=project, conversation_id=conversation_id, email=email, page_url=page_url,
        message=message,
    )  # fmt: skip


def email_field(data: Mapping[str, Any]) -> str:
    email = text_field(data, "email", max_chars=254)
    try:
        if email:
            validate_email(email)
    except ValidationError:
        raise _field_error("email", "Enter an e-mail address like you@example.com.") from None
    return email


def page_url_field(data: Mapping[str, Any]) -> str:
    try:
        return http_url(text_field(data, "page_url", max_chars=2000))
    except UnsafeUrl as error:
        raise _field_error("page_url", str(error)) from None


def limit(kind: str, *, client: str = "", conversation_id: str = "", sender: str = "") -> None:
    """Count one request; IntakeError 429 when it is over its limit."""
    if ratelimits.is_limited(kind, client=client, conversation_id=conversation_id, sender=sender):
        raise IntakeError("rate_limited", ratelimits.MESSAGES[kind], 429)
