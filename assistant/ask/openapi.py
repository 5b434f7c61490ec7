"""The streaming door in the OpenAPI schema. `/api/v1/ask/stream` is a plain async Django view
(server-sent events), which drf-spectacular does not see; this hook describes it with the same
request and error bodies as `/api/v1/ask`."""

from __future__ import annotations

from typing import Any

from assistant.api_errors import ERROR_SCHEMA, INTAKE_ERRORS, WHEN

FRAMES = (
    "Server-sent events, one per frame, each named after its type: `sources` "
    "({sources: [{n, title, url, relevance}]}), `waiting`s while a local model keeps the "
    "question in line ({ahead: questions before it, read: share of the prompt read}), "
    "`token`s ({text}), then `done` ({answer_id, "
    "conversation_id, refused, truncated, timings_ms, generator, fallback, related: [{title, "
    "url, relevance}], ask_a_person: {via, url} or null}) or `error` "
    "({code, message}). The data line of each event is the frame as JSON."
)

#: One server-sent event: its name is the frame's type, its data the frame as JSON.
FRAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["sources", "waiting", "token", "done", "error"]},
        "data": {"type": "string", "contentMediaType": "application/json"},
    },
}

_QUERY = (
    ("project", True, "Public key"),
    ("question", True, "The question"),
    ("topic", False, "The page's topic"),
    ("conversation_id", False, "From an earlier `done` frame, for a follow-up"),
    ("visitor_id", False, "The widget's visitor id (for memory)"),
)


def add_stream_operation(
    result: dict[str, Any], generator: Any, request: Any, public: Any
) -> dict[str, Any]:
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    errors = {
        str(code): {
            "description": WHEN[code],
            "content": {"application/json": {"schema": ERROR_SCHEMA}},
        }
        for code in INTAKE_ERRORS
        if code != 503  # once streaming, an unavailable model is an `error` frame
    }
    responses = {
        "200": {
            "description": FRAMES,
            "content": {"text/event-stream": {"schema": FRAME_SCHEMA}},
        },
        **errors,
    }
    parameters = [
        {"name": name, "in": "query", "required": required, "description": text,
         "schema": {"type": "string"}}
        for name, required, text in _QUERY
    ]  # fmt: skip
    result.setdefault("paths", {})["/api/v1/ask/stream"] = {
        "post": {
            "operationId": "ask_stream_create",
            "summary": "Ask, and receive the answer as server-sent events",
            "tags": ["ask"],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/AskRequest"}}
                },
            },
            "responses": responses,
        },
        "get": {
            "operationId": "ask_stream_retrieve",
            "summary": "The same, with query parameters (for EventSource)",
            "tags": ["ask"],
            "parameters": parameters,
            "responses": responses,
        },
    }
    return result
