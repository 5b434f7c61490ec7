"""The intake's first step: a raw body, frame or query becomes a dict of fields, within the size
and depth limits, as valid UTF-8 (assistant/ask/intake.py re-exports all of it)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from assistant.errors import IntakeError

#: Bytes of a JSON body or WebSocket frame; a question with its fields fits many times over.
MAX_BODY_BYTES = 16_000
#: Nesting of a JSON body: ours are flat; deep nesting only ever comes from abuse, and Python's
#: parser would overflow its stack on it.
MAX_JSON_DEPTH = 16
MAX_QUERY_FIELDS = 32
SEND_AN_OBJECT = 'Send a JSON object like {"question": "..."}.'


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
