"""What is held about one person, found by a visitor key, a phone number or an e-mail address
(a selector: reads only). Erasure deletes exactly this; export lists it.

How each identifier reaches their data:

* ``visitor:<id>`` / ``user:<id>`` (the memory key): their remembered facts; their votes and
  comments (the widget sends its visitor id as the feedback client id) and the conversations
  those votes are in; every question a widget visitor asked, logged under a keyed hash of
  their key (`Interaction.visitor`), and for ``user:`` keys every question logged under
  theirs (`Interaction.asker`).
* a phone number (E.164): their SMS texts and conversations, the questions those texts asked,
  their memory (``sms:<number>``) and everything logged under its hash.
* an e-mail address: their "Ask a person" handoffs and those conversations, the outbox files
  of those handoffs, and the memory of ``user:<address>`` when a host page names its users so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet

from assistant.ask.answer_log import asker_of, visitor_of
from assistant.handoff.models import Handoff
from assistant.memory.identity import USER_KEY
from assistant.memory.models import UserFact
from assistant.models import Interaction, Project
from assistant.sms.models import SmsConversation, SmsMessage
from feedback.models import AnswerCheck, Feedback

_PHONE = re.compile(r"\+[1-9][0-9]{6,14}")
_EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s]{2,}")


class UnknownIdentifier(ValueError):
    """Not a visitor key, a phone number or an e-mail address."""


@dataclass(frozen=True, slots=True)
class Person:
    kind: str  # "visitor", "user", "phone" or "email": what the audit keeps
    value: str

    @property
    def user_keys(self) -> list[str]:
        if self.kind in ("visitor", "user"):
            return [self.value]
        if self.kind == "phone":
            return [f"sms:{self.value}"]
        return [f"user:{self.value}"]


def person_from(identifier: str) -> Person:
    identifier = identifier.strip()
    if USER_KEY.fullmatch(identifier):
        kind = identifier.split(":", 1)[0]
        if kind == "sms":
            return Person(kind="phone", value=identifier.removeprefix("sms:"))
        return Person(kind=kind, value=identifier)
    compact = re.sub(r"[\s().-]", "", identifier)
    if _PHONE.fullmatch(compact):
        return Person(kind="phone", value=compact)
    if _EMAIL.fullmatch(identifier):
        return Person(kind="email", value=identifier.lower())
    raise UnknownIdentifier(
        'Name a person by "visitor:<id>", "user:<id>", a phone number in E.164 form '
        "(+15551234567) or an e-mail address."
    )


@dataclass
class Holdings:
    """Primary keys of everything held about one person, and outbox files."""

    facts: list[int] = field(default_factory=list)
    interactions: list[int] = field(default_factory=list)
    feedback: list[int] = field(default_factory=list)
    sms_messages: list[int] = field(default_factory=list)
    sms_conversations: list[int] = field(default_factory=list)
    handoffs: list[int] = field(default_factory=list)
    answer_checks: list[int] = field(default_factory=list)
    outbox_files: list[Path] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in self.__dataclass_fields__}


def holdings_of(person: Person, *, projects: QuerySet[Project]) -> Holdings:
    held = Holdings()
    keys = person.user_keys
    held.facts = _ids(UserFact.objects.filter(project__in=projects, user_key__in=keys))
    conversations: set[str] = set()
    interactions = Q(pk__in=[])
    if person.kind in ("user", "phone"):
        interactions |= Q(asker__in=[asker_of(user_key=key, client="") for key in keys])
    if person.kind == "visitor":
        client_id = person.value.removeprefix("visitor:")
        voted = Feedback.objects.filter(client_id=client_id, interaction__project__in=projects)
        interactions |= Q(pk__in=list(voted.values_list("interaction_id", flat=True)))
        interactions |= Q(visitor=visitor_of(person.value))
    if person.kind == "phone":
        texts = SmsMessage.objects.filter(project__in=projects, from_number=person.value)
        held.sms_messages = _ids(texts)
        conversations |= set(texts.values_list("conversation_id", flat=True))
        interactions |= Q(pk__in=list(texts.values_list("interaction_id", flat=True)))
        held.sms_conversations = _ids(
            SmsConversation.objects.filter(project__in=projects, phone=person.value)
        )
    if person.kind == "email":
        handed = Handoff.objects.filter(project__in=projects, email__iexact=person.value)
        conversations |= set(handed.values_list("conversation_id", flat=True))
    logged = Interaction.objects.filter(project__in=projects).filter(interactions)
    conversations |= set(logged.values_list("conversation_id", flat=True))
    conversations.discard("")
    everything = Interaction.objects.filter(project__in=projects).filter(
        interactions | Q(conversation_id__in=conversations)
    )
    held.interactions = _ids(everything)
    held.feedback = _ids(Feedback.objects.filter(interaction_id__in=held.interactions))
    handoffs = Handoff.objects.filter(project__in=projects).filter(
        Q(conversation_id__in=conversations)
        | (Q(email__iexact=person.value) if person.kind == "email" else Q(pk__in=[]))
    )
    held.handoffs = _ids(handoffs)
    answer_ids = [str(a) for a in everything.values_list("answer_id", flat=True)]
    held.answer_checks = _ids(
        AnswerCheck.objects.filter(project__in=projects, from_answer_id__in=answer_ids)
    )
    held.outbox_files = outbox_files_of(handoffs.values_list("pk", "conversation_id"))
    return held


def outbox_files_of(handoffs: QuerySet[Handoff, tuple[int, str]]) -> list[Path]:
    """The files the mail file backend wrote for these handoffs (no mail server configured):
    each mail ends with "Conversation id: <id> (handoff <pk>)"."""
    outbox = Path(getattr(settings, "EMAIL_FILE_PATH", "") or "")
    pairs = list(handoffs)
    if not pairs or not outbox.is_dir():
        return []
    marks = [f"Conversation id: {cid} (handoff {pk})" for pk, cid in pairs]
    found = []
    for path in sorted(outbox.iterdir()):
        if path.is_file():
            text = path.read_text(errors="replace")
            if any(mark in text for mark in marks):
                found.append(path)
    return found


def _ids(queryset: QuerySet[Any, Any]) -> list[int]:
    return sorted(queryset.values_list("pk", flat=True))
