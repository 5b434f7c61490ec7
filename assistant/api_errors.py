"""Every API error has the same JSON body: {"error": {"code": ..., "message": ..., "fields"?}}.

Part of the project shell, so every app's API (the ask doors, feedback, ingestion's webhook
source) answers in this shape without importing another app."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from assistant.errors import IntakeError


class ApiError(exceptions.APIException):
    def __init__(self, code: str, message: str, status_code: int = status.HTTP_400_BAD_REQUEST):
        super().__init__(detail=message, code=code)
        self.status_code = status_code
        self.error_code = code


_CODES = {
    exceptions.ParseError: "malformed_json",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotFound: "not_found",
    exceptions.Throttled: "rate_limited",
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, IntakeError):
        return Response(exc.body(), status=exc.status, headers=exc.headers())
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    body: dict[str, Any]
    if isinstance(exc, ApiError):
        body = {"code": exc.error_code, "message": str(exc.detail)}
    elif isinstance(exc, exceptions.ValidationError):
        body = {"code": "invalid", "message": "Some fields are invalid.", "fields": exc.detail}
    else:
        code = next((c for t, c in _CODES.items() if isinstance(exc, t)), "error")
        detail = getattr(exc, "detail", str(exc))
        body = {"code": code, "message": str(detail)}
    response.data = {"error": body}
    return response


def json_error(code: str, message: str, status_code: int) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status_code)


def intake_error_response(error: IntakeError) -> JsonResponse:
    """The same body as the REST doors, for plain Django views (server-sent events)."""
    return JsonResponse(error.body(), status=error.status, headers=error.headers())


# --- The error body in the OpenAPI schema ------------------------------------------------------


#: The error body as a JSON schema (inlined: a serializer cannot have a field named "fields").
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "For programs: invalid, too_large..."},
                "message": {"type": "string", "description": "For people."},
                "fields": {
                    "type": "object",
                    "description": "Per field at fault, what is wrong with it (code invalid).",
                },
            },
        }
    },
}

WHEN = {
    400: "Bad input: malformed JSON, a field out of its limits, an unknown conversation.",
    401: "Unknown project key, or a wrong secret / webhook token.",
    403: "The Origin is not among the project's allowed origins.",
    404: "No such answer (or resource).",
    413: "The body is larger than 16 kB.",
    415: "The body is not JSON.",
    429: "Over a rate limit.",
    503: "A model or server the answer needs is unavailable.",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """The documented error answers of an operation: every one has the Error body."""
    return {code: OpenApiResponse(ERROR_SCHEMA, description=WHEN[code]) for code in statuses}


#: What every door of the ask API can answer besides success (the one intake decides).
INTAKE_ERRORS = (400, 401, 403, 413, 415, 429, 503)
