"""What Discord's interactions say, read from their JSON. No Django here.

An `/ask question:<text>` (an APPLICATION_COMMAND) is a question; a press of one of the app's
buttons (a MESSAGE_COMPONENT) is a vote or "Ask a person". Anything else is neither.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PING = 1
APPLICATION_COMMAND = 2
MESSAGE_COMPONENT = 3
COMMAND = "ask"
OPTION = "question"
#: Discord's channel types of threads: announcement, public and private threads.
THREAD_TYPES = frozenset({10, 11, 12})


@dataclass(frozen=True, slots=True)
class Asked:
    discord_id: str
    application_id: str
    #: The interaction's token: the answer is written with it (for 15 minutes).
    token: str
    guild_id: str
    channel_id: str
    user_id: str
    in_thread: bool
    text: str

    @property
    def conversation_id(self) -> str:
        return conversation_id(
            guild_id=self.guild_id, channel_id=self.channel_id, user_id=self.user_id,
            in_thread=self.in_thread,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Pressed:
    discord_id: str
    guild_id: str
    channel_id: str
    user_id: str
    custom_id: str


def conversation_id(*, guild_id: str, channel_id: str, user_id: str, in_thread: bool) -> str:
    """A thread is one conversation, whoever asks in it (as a Slack thread is); in a channel
    or a direct message each member's questions are their own conversation, so two members
    asking side by side never get each other's exchanges as history. Ids fit the intake's
    conversation ids (64 of [A-Za-z0-9_-])."""
    place = f"{guild_id}:{channel_id}" if in_thread else f"{guild_id}:{channel_id}:{user_id}"
    return f"discord-{hashlib.sha256(place.encode()).hexdigest()[:40]}"


def member_key(user_id: str) -> str:
    """A Discord user as memory and privacy name them (one id in every server)."""
    return f"discord:{user_id}"


def server_of(*, guild_id: str, user_id: str) -> str:
    """The server a question is counted against (its rate limit); a direct message is its
    member's own."""
    return guild_id or f"dm-{user_id}"


def asked_in(payload: Mapping[str, Any]) -> Asked | None:
    """The question of an `/ask` interaction, or None (another command, no question)."""
    data = payload.get("data")
    if payload.get("type") != APPLICATION_COMMAND or not isinstance(data, Mapping):
        return None
    if data.get("name") != COMMAND:
        return None
    text = ""
    for option in data.get("options") or ():
        if isinstance(option, Mapping) and option.get("name") == OPTION:
            text = str(option.get("value") or "")
    channel = _channel(payload)
    asked = Asked(
        discord_id=str(payload.get("id") or ""),
        application_id=str(payload.get("application_id") or ""),
        token=str(payload.get("token") or ""), guild_id=str(payload.get("guild_id") or ""),
        channel_id=str(payload.get("channel_id") or channel.get("id") or ""),
        user_id=_user_id(payload), in_thread=channel.get("type") in THREAD_TYPES,
        text=" ".join(text.split()),
    )  # fmt: skip
    if not (asked.discord_id and asked.application_id and asked.token and asked.channel_id):
        return None
    return asked if asked.user_id and asked.text else None


def pressed_in(payload: Mapping[str, Any]) -> Pressed | None:
    """The button pressed in a MESSAGE_COMPONENT interaction, or None."""
    data = payload.get("data")
    if payload.get("type") != MESSAGE_COMPONENT or not isinstance(data, Mapping):
        return None
    channel = _channel(payload)
    pressed = Pressed(
        discord_id=str(payload.get("id") or ""), guild_id=str(payload.get("guild_id") or ""),
        channel_id=str(payload.get("channel_id") or channel.get("id") or ""),
        user_id=_user_id(payload), custom_id=str(data.get("custom_id") or ""),
    )  # fmt: skip
    if not (pressed.discord_id and pressed.user_id and pressed.custom_id):
        return None
    return pressed


def _channel(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    channel = payload.get("channel")
    return channel if isinstance(channel, Mapping) else {}


def _user_id(payload: Mapping[str, Any]) -> str:
    """Who asked: `member.user` in a server, `user` in a direct message."""
    member = payload.get("member")
    user = member.get("user") if isinstance(member, Mapping) else payload.get("user")
    return str(user.get("id") or "") if isinstance(user, Mapping) else ""
