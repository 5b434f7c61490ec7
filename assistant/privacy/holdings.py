"""What is held about one person, found by a visitor key, a phone number, an e-mail address or
a Slack or Discord member's ids (a selector: reads only). Erasure deletes exactly this;
export lists it.

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
* ``slack:<team id>:<user id>`` (a Slack workspace's member) or ``discord:<user id>``: what
  the door stored of each of their questions and button presses, the threads and channels
  they asked in (whole: a thread is one conversation whoever asks in it, and its later
  questions carry theirs as history; everyone in it saw it), every question logged under
  their key's hash, their votes, and their memory.
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
from assistant.models import DiscordInteraction, Interaction, Project, SlackEvent
from assistant.sms.models import SmsConversation, SmsMessage
from feedback.models import AnswerCheck, Feedback

_PHONE = re.compile(r"\+[1-9][0-9]{6,14}")
_SLACK_MEMBER = re.compile(r"slack:([A-Z0-9]{1,32}):([A-Z0-9]{1,32})", re.IGNORECASE)
_DISCORD_USER = re.compile(r"discord:([0-9]{1,32})")
_EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s]{2,}")


UNKNOWN = (
    'Name a person by "visitor:<id>", "user:<id>", a phone number in E.164 form '
    '(+15551234567), an e-mail address, "slack:<team id>:<member id>" (T…:U…) or '
    '"discord:<user id>".'
)


class UnknownIdentifier(ValueError):
    """Not a visitor key, a phone number, an e-mail address or a Slack or Discord member."""


@dataclass(frozen=True, slots=True)
class Person:
    #: "visitor", "user", "phone", "email", "slack" or "discord": what the audit keeps
    kind: str
    value: str

    @property
    def user_keys(self) -> list[str]:
        if self.kind in ("visitor", "user", "slack", "discord"):
            return [self.value]
        if self.kind == "phone":
            return [f"sms:{self.value}"]
        return [f"user:{self.value}"]


def person_from(identifier: str) -> Person:
    identifier = identifier.strip()
    if member := _SLACK_MEMBER.fullmatch(identifier):
        # Slack's ids are upper case; a pasted one may not be.
        return Person(kind="slack", value=f"slack:{member[1].upper()}:{member[2].upper()}")
    if _DISCORD_USER.fullmatch(identifier):
        return Person(kind="discord", value=identifier)
    if identifier.startswith(("slack:", "discord:")):
        raise UnknownIdentifier(UNKNOWN)
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
    raise UnknownIdentifier(UNKNOWN)


@dataclass
class Holdings:
    """Primary keys of everything held about one person, and outbox files."""

    facts: list[int] = field(default_factory=list)
    interactions: list[int] = field(default_factory=list)
    feedback: list[int] = field(default_factory=list)
    sms_messages: list[int] = field(default_factory=list)
    sms_conversations: list[int] = field(default_factory=list)
    handoffs: list[int] = field(default_factory=list)
    slack_events: list[int] = field(default_factory=list)
    discord_interactions: list[int] = field(default_factory=list)
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
    if person.kind in ("user", "phone", "slack", "discord"):
        interactions |= Q(asker__in=[asker_of(user_key=key, client="") for key in keys])
    votes = Q(pk__in=[])
    if person.kind in ("slack", "discord"):
        events, votes = _member_events(person, projects=projects)
        conversations |= set(events.values_list("conversation_id", flat=True))
        answered = events.exclude(interaction=None).values_list("interaction_id", flat=True)
        interactions |= Q(pk__in=list(answered))
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
    # Their votes, also on others' answers (a member may vote on any answer in the channel).
    held.feedback = _ids(
        Feedback.objects.filter(Q(interaction_id__in=held.interactions) | votes).filter(
            interaction__project__in=projects
        )
    )
    if person.kind == "slack":
        held.slack_events = _ids(
            SlackEvent.objects.filter(project__in=projects).filter(
                _slack_member(person) | Q(conversation_id__in=conversations)
            )
        )
    if person.kind == "discord":
        held.discord_interactions = _ids(
            DiscordInteraction.objects.filter(project__in=projects).filter(
                Q(user_id=_discord_user(person)) | Q(conversation_id__in=conversations)
            )
        )
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


def _member_events(person: Person, *, projects: QuerySet[Project]) -> tuple[QuerySet[Any, Any], Q]:
    """The rows a Slack or Discord door stored of the member's own questions and presses, and
    which feedback rows are their votes (the door records a vote under the member's id)."""
    if person.kind == "slack":
        events = SlackEvent.objects.filter(project__in=projects).filter(_slack_member(person))
        return events, Q(client_id=person.value)
    user = _discord_user(person)
    asked = DiscordInteraction.objects.filter(project__in=projects, user_id=user)
    # A Discord vote is recorded as discord:<server>:<user> (the server it was pressed in).
    return asked, Q(client_id__startswith="discord:", client_id__endswith=f":{user}")


def _slack_member(person: Person) -> Q:
    _, team, user = person.value.split(":")
    return Q(team_id=team, user_id=user)


def _discord_user(person: Person) -> str:
    return person.value.removeprefix("discord:")


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
