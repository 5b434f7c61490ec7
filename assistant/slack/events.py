"""Which of Slack's events are questions, read from the Events API envelope. No Django here.

A question is an `app_mention` (the mention taken out), a direct message to the app, a message
in a channel the project watches, or a reply in a thread the app has answered (a follow-up).
Messages of bots (the app's own answers among them) and message subtypes (edits, deletions,
joins, topic changes) are not questions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from assistant.slack.text import question_of


@dataclass(frozen=True, slots=True)
class Question:
    event_id: str
    team_id: str
    channel_id: str
    user_id: str
    #: The thread the answer goes in: the message's thread, or the message itself.
    thread_ts: str
    text: str

    @property
    def conversation_id(self) -> str:
        return conversation_id(self.team_id, self.channel_id, self.thread_ts)


def member_key(team_id: str, user_id: str) -> str:
    """A workspace member as memory and privacy name them (a member id is its workspace's)."""
    return f"slack:{team_id}:{user_id}"


def conversation_id(team_id: str, channel_id: str, thread_ts: str) -> str:
    """One conversation per Slack thread (what the intake's conversation ids allow: 64 of
    [A-Za-z0-9_-])."""
    digest = hashlib.sha256(f"{team_id}:{channel_id}:{thread_ts}".encode()).hexdigest()
    return f"slack-{digest[:40]}"


def question_in(
    envelope: Mapping[str, Any],
    *,
    watched: Collection[str],
    answered_thread: Callable[[str], bool],
) -> Question | None:
    """The question an `event_callback` envelope carries, or None. `answered_thread(id)`
    says whether the app has answered in the conversation with that id."""
    event = envelope.get("event")
    if envelope.get("type") != "event_callback" or not isinstance(event, Mapping):
        return None
    kind = event.get("type")
    if kind not in ("app_mention", "message") or event.get("subtype"):
        return None
    if event.get("bot_id") or event.get("bot_profile"):
        return None
    user, channel, ts = (str(event.get(name) or "") for name in ("user", "channel", "ts"))
    team = str(envelope.get("team_id") or event.get("team") or "")
    text = str(event.get("text") or "")
    if not (user and channel and ts and team):
        return None
    app_user = _app_user(envelope)
    if user == app_user:
        return None
    thread_ts = str(event.get("thread_ts") or ts)
    question = Question(
        event_id=str(envelope.get("event_id") or ""), team_id=team, channel_id=channel,
        user_id=user, thread_ts=thread_ts, text=question_of(text),
    )  # fmt: skip
    if not question.event_id or not question.text:
        return None
    if kind == "app_mention":
        return question
    if event.get("channel_type") == "im":
        return question  # Slack sends no app_mention for a direct message
    if app_user and f"<@{app_user}" in text:
        return None  # a mention in a channel: its app_mention event is the question
    if channel in watched or answered_thread(question.conversation_id):
        return question
    return None


def _app_user(envelope: Mapping[str, Any]) -> str:
    """The app's own bot user in this workspace (Slack lists it in `authorizations`)."""
    for authorization in envelope.get("authorizations") or ():
        if isinstance(authorization, Mapping) and authorization.get("is_bot"):
            return str(authorization.get("user_id") or "")
    return ""
