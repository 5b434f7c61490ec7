"""The messages the app writes in Discord, as the JSON Discord takes: an answer with its sources
and buttons, a refusal with related pages, short notices. No Django here: pure functions,
tested on their own.

Discord reads Markdown much as the answers are written, so an answer keeps its bold, code and
lists. What is changed: links show no preview card (`[title](<url>)`), headings deeper than
Discord's three are bold lines, and nothing in an answer may ping anyone (`allowed_mentions`
is empty on every message, so an `@everyone` in a document is only text). A message holds at
most 2,000 characters: a longer answer is cut between paragraphs, lines or sentences into
several messages, a code block closed at the cut and opened again in the next message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from assistant.ask.pages import cited_pages
from assistant.rag.types import SORRY

#: Discord's limit for a message's content.
CONTENT_LIMIT = 2000
#: An answer longer than this many messages is cut (the answers' own limit keeps them shorter).
MAX_MESSAGES = 5
EPHEMERAL = 1 << 6
NO_PINGS: dict[str, list[str]] = {"parse": []}

VOTE_UP = "askdocs_vote_up"
VOTE_DOWN = "askdocs_vote_down"
HANDOFF = "askdocs_handoff"
ACTIONS = frozenset({VOTE_UP, VOTE_DOWN, HANDOFF})
MAY_HELP = "These pages may help"
CUT = "…"

_FENCE = "```"
_CLOSE = "\n```"
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_LINK = re.compile(r"\[([^\]\n]+)\]\(\s*<?((?:[^()\s<>]|\([^()\s]*\))+)>?\s*\)")
_DEEP_HEADING = re.compile(r"^[ \t]{0,3}#{4,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_HOLD = "\x00{}\x00"
_HELD = re.compile(r"\x00(\d+)\x00")
_MARKUP = re.compile(r"([\\*_~`|\[\]()<>#])")


def answer_messages(
    *,
    answer: str,
    sources: Sequence[Mapping[str, Any]],
    answer_id: str,
    conversation_id: str,
    handoff: bool,
) -> list[dict[str, Any]]:
    """The messages of an answer: its text, then its sources, the buttons under the last."""
    return _messages(
        markdown(answer), sources_block(sources),
        _buttons(answer_id=answer_id, conversation_id=conversation_id, handoff=handoff),
    )  # fmt: skip


def refusal_messages(
    *,
    related: Sequence[Mapping[str, Any]],
    answer_id: str,
    conversation_id: str,
    handoff: bool,
) -> list[dict[str, Any]]:
    """The sorry-sentence, and the nearest pages when there are any (as the widget offers)."""
    return _messages(
        SORRY, sources_block(related, heading=MAY_HELP),
        _buttons(answer_id=answer_id, conversation_id=conversation_id, handoff=handoff),
    )  # fmt: skip


def notice_message(text: str, *, url: str = "", ephemeral: bool = False) -> dict[str, Any]:
    """A short plain notice (busy, unavailable, a vote's thanks, a handoff's next step)."""
    content = f"{text} {link(url, url)}" if url else text
    message: dict[str, Any] = {"content": content[:CONTENT_LIMIT], "allowed_mentions": NO_PINGS}
    if ephemeral:
        message["flags"] = EPHEMERAL
    return message


def custom_id(action: str, value: str) -> str:
    """A button's id: which button, and the answer or conversation it is for (at most 100)."""
    return f"{action}:{value}"[:100]


def action_of(button_id: str) -> tuple[str, str] | None:
    """(action, value) of one of the app's buttons; None for anything else."""
    action, _, value = button_id.partition(":")
    return (action, value) if action in ACTIONS and value else None


def markdown(answer: str) -> str:
    """The answer's Markdown as Discord shows it (see the module's docstring)."""
    held: list[str] = []

    def hold(text: str) -> str:
        held.append(text)
        return _HOLD.format(len(held) - 1)

    text = answer.replace("\x00", "")
    text = _CODE.sub(lambda m: hold(m.group(0)), text)
    text = _LINK.sub(lambda m: hold(link(m.group(2), m.group(1), escaped=True)), text)
    text = _DEEP_HEADING.sub(lambda m: f"**{m.group(1).strip('*_ ')}**", text)
    while _HELD.search(text):
        text = _HELD.sub(lambda m: held[int(m.group(1))], text)
    return text.strip()


def escape(text: str) -> str:
    """Text Discord shows as written: its Markdown characters escaped."""
    return _MARKUP.sub(r"\\\1", text)


def link(url: str, title: str, *, escaped: bool = False) -> str:
    """`[title](<url>)` (a link without a preview card) for an http(s) URL; the title alone for
    anything else. `escaped`: the title is Markdown already (an answer's own link)."""
    label = " ".join(title.split()) or url
    label = label.replace("[", "(").replace("]", ")") if escaped else escape(label)
    if not url.startswith(("https://", "http://")):
        return label
    # Characters that would end the link early are percent-encoded.
    safe = quote(url, safe=":/?#@!$&'*+,;=%-._~")
    return f"[{label}](<{safe}>)"


def sources_block(sources: Iterable[Mapping[str, Any]], *, heading: str = "Sources") -> str:
    """`**Sources**` and a numbered link a line: each page once, numbered as the answer cites
    them."""
    lines = [f"{number}. {link(url, title)}" for number, url, title in cited_pages(sources)]
    return f"**{heading}**\n" + "\n".join(lines) if lines else ""


def pieces(text: str, *, limit: int = CONTENT_LIMIT) -> list[str]:
    """The text in pieces of at most `limit` characters, cut between paragraphs, lines,
    sentences or words; a code block open at a cut is closed there and opened again."""
    parts: list[str] = []
    while len(text) > limit:
        room = text[: limit - len(_CLOSE)]
        cut = _cut(room)
        part, text = text[:cut].rstrip(), text[cut:]
        if part.count(_FENCE) % 2:
            parts.append(part + _CLOSE)
            text = _FENCE + "\n" + text.lstrip("\n")
        else:
            parts.append(part)
            text = text.lstrip()
    if text.strip():
        parts.append(text)
    return parts


def _cut(room: str) -> int:
    """Where to cut: the last paragraph break, line break, sentence end or space in the back
    half of the room, or its end."""
    for separator, keep in (("\n\n", 0), ("\n", 0), (". ", 1), ("! ", 1), ("? ", 1), (" ", 0)):
        at = room.rfind(separator)
        if at > len(room) // 2:
            return at + keep
    return len(room)


def _buttons(*, answer_id: str, conversation_id: str, handoff: bool) -> list[dict[str, Any]]:
    buttons = []
    if answer_id:
        buttons += [
            _button("Helpful", custom_id(VOTE_UP, answer_id), emoji="👍"),
            _button("Not helpful", custom_id(VOTE_DOWN, answer_id), emoji="👎"),
        ]
    if handoff:
        buttons.append(_button("Ask a person", custom_id(HANDOFF, conversation_id), style=1))
    # An action row (type 1) of buttons; an empty row is refused, so none then.
    return [{"type": 1, "components": buttons}] if buttons else []


def _button(label: str, button_id: str, *, emoji: str = "", style: int = 2) -> dict[str, Any]:
    button: dict[str, Any] = {"type": 2, "style": style, "label": label, "custom_id": button_id}
    if emoji:
        button["emoji"] = {"name": emoji}
    return button


def _messages(body: str, tail: str, components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    parts = pieces(body) or [""]
    room = MAX_MESSAGES - 1 if tail else MAX_MESSAGES  # the sources are never the part cut
    if len(parts) > room:
        parts = parts[:room]
        parts[-1] = parts[-1][: CONTENT_LIMIT - len(CUT) - 1] + " " + CUT
    if tail:
        if len(parts[-1]) + 2 + len(tail) <= CONTENT_LIMIT:
            parts[-1] = f"{parts[-1]}\n\n{tail}".strip()
        else:
            parts += pieces(tail)[:1]
    messages: list[dict[str, Any]] = [
        {"content": part, "allowed_mentions": NO_PINGS} for part in parts
    ]
    if components:
        messages[-1]["components"] = components
    return messages
