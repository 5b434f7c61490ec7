"""SMS wording: commands, and answers made short and plain enough for a text message.

No Django here: these are pure functions, tested on their own.
"""

from __future__ import annotations

import re
from enum import Enum

from assistant.rag.types import SORRY

#: The longest reply (two concatenated GSM-7 segments and a bit; Twilio splits and rejoins it).
SMS_LIMIT = 320
#: Shorter than this, a cut answer keeps its room for text instead of the source link.
_MIN_TEXT_BEFORE_LINK = 120

CLEARED = "Conversation cleared. How can I help you?"
MAY_HELP = "This page may help:"
EMPTY_REPLY = "Please send your question as text."
_HELP = (
    "Text a question and I will answer from the {name} documentation. "
    "I remember this conversation for {minutes} minutes. "
    "Send RESET (or CLEAR) to start over, HELP for this message. Reply STOP to opt out."
)

# Twilio's own opt-out, opt-in and help keywords: Twilio answers them itself (Advanced
# Opt-Out), so the model never does. HELP is the exception the product asks for.
TWILIO_KEYWORDS = frozenset(
    {
        "stop", "stopall", "unsubscribe", "cancel", "end", "quit", "optout", "revoke",
        "start", "unstop", "yes",
    }
)  # fmt: skip


class Command(Enum):
    QUESTION = "question"
    HELP = "help"
    RESET = "reset"
    EMPTY = "empty"
    OPT_OUT = "opt_out"


def classify(body: str) -> Command:
    """What a text asks for. Keywords match the whole message, any case, spaces ignored."""
    word = " ".join(body.split()).casefold()
    if not word:
        return Command.EMPTY
    if word == "help":
        return Command.HELP
    if word in ("reset", "clear"):
        return Command.RESET
    if word in TWILIO_KEYWORDS:
        return Command.OPT_OUT
    return Command.QUESTION


def help_text(*, project_name: str, idle_minutes: int) -> str:
    return _HELP.format(name=project_name, minutes=idle_minutes)


_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)\s]+)\)")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_BULLET = re.compile(r"^\s*[*+]\s+", re.MULTILINE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def plain_text(markdown: str) -> str:
    """Markdown as one plain line: no citation markers, emphasis, headings or line breaks."""
    text = _CITATION.sub("", markdown)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    text = _HEADING.sub("", text)
    text = _BULLET.sub("- ", text)
    return " ".join(text.split())


def cut(text: str, limit: int) -> str:
    """At most `limit` characters: the whole text, or up to the last sentence that fits when
    that keeps at least half of it, or up to the last whole word followed by '...'."""
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text) if m.end() <= limit]
    if ends and ends[-1] >= limit // 2:
        return text[: ends[-1]]
    room = text[: limit - 3]
    if text[limit - 3] != " " and " " in room:
        room = room[: room.rfind(" ")]
    return room.rstrip(" ,;:-") + "..."


def sms_reply(answer: str, *, url: str = "", limit: int = SMS_LIMIT) -> str:
    """The answer as one text message, with the top source's URL when it fits.

    A whole answer beats a cut answer plus a link; a cut answer keeps the link when there is
    still room for a useful text, because the link leads to the rest."""
    text = plain_text(answer)
    if not url or len(url) + 1 >= limit:
        return cut(text, limit)
    room = limit - len(url) - 1
    if len(text) <= room:
        return f"{text} {url}"
    if len(text) > limit and room >= _MIN_TEXT_BEFORE_LINK:
        return f"{cut(text, room)} {url}"
    return cut(text, limit)


def refusal_reply(*, related_url: str = "", limit: int = SMS_LIMIT) -> str:
    """The sorry-sentence and, when the refusal has a related page with a link that fits, that
    one link: a text message has room for one page, not the widget's list of three."""
    with_link = f"{SORRY} {MAY_HELP} {related_url}"
    if related_url.startswith(("https://", "http://")) and len(with_link) <= limit:
        return with_link
    return SORRY
