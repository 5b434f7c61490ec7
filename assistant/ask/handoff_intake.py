"""The intake of "Ask a person" (POST /api/v1/handoff): the same rules as every door (key and
origin, a conversation the server issued, its own rate limits), plus its own fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from assistant.ask.intake import (
    UNKNOWN_CONVERSATION,
    Caller,
    conversation_field,
    field_error,
    fields_of,
    limit,
    text_field,
)
from assistant.ask.selectors import conversation_exists
from assistant.errors import IntakeError
from assistant.links import UnsafeUrl, http_url
from assistant.models import Project
from assistant.personal_data.projects import masked


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
        message=masked(project, message),
    )  # fmt: skip


def email_field(data: Mapping[str, Any]) -> str:
    email = text_field(data, "email", max_chars=254)
    try:
        if email:
            validate_email(email)
    except ValidationError:
        raise field_error("email", "Enter an e-mail address like you@example.com.") from None
    return email


def page_url_field(data: Mapping[str, Any]) -> str:
    try:
        return http_url(text_field(data, "page_url", max_chars=2000))
    except UnsafeUrl as error:
        raise field_error("page_url", str(error)) from None
