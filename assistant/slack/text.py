"""Slack wording: an answer's Markdown as Slack's mrkdwn, its sources as links, the question
taken out of a message. No Django here: pure functions, tested on their own.

Slack reads `&`, `<` and `>` as markup (`<url|text>` links, `<!channel>` pings, `<@U…>`
mentions), so every character of the answer is escaped first and only the markup made here
is Slack's: raw HTML in an answer is shown as text, and nothing in it can ping a channel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from assistant.ask.pages import cited_pages

#: Slack's limit for one section block's text.
SECTION_LIMIT = 3000

_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_CODE = re.compile(r"`[^`\n]+`")
_LINK = re.compile(r"\[([^\]\n]+)\]\(\s*((?:[^()\s]|\([^()\s]*\))+)\s*\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+", re.MULTILINE)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HOLD = "\x00{}\x00"
_HELD = re.compile(r"\x00(\d+)\x00")


#: What Slack writes for a link, a channel or a special mention in a message's text:
#: `<https://x.example|x.example>`, `<#C123|general>`, `<!here>`.
_SLACK_REFERENCE = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


def question_of(text: str) -> str:
    """A message's question as the member typed it: the app's (and anyone's) mentions taken
    out; a link as its label (or address), a channel as `#name`, special mentions dropped;
    Slack's escapes of `&`, `<` and `>` undone (a question about `a < b` is asked as such)."""
    text = _MENTION.sub(" ", text)

    def readable(match: re.Match[str]) -> str:
        target, label = match.group(1), match.group(2)
        if target.startswith("#"):
            return f"#{label}" if label else target
        if target.startswith("!"):
            return " "
        return label or target

    text = _SLACK_REFERENCE.sub(readable, text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(text.split())


def escape(text: str) -> str:
    """Text Slack shows as written (its three control characters escaped, as it asks)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, title: str) -> str:
    """`<url|title>` for an http(s) URL; the escaped title alone for anything else."""
    label = escape(" ".join(title.split()) or url).replace("|", "¦")
    if not url.startswith(("https://", "http://")):
        return label
    # Characters that would end the link early are percent-encoded; `&` is escaped as Slack asks.
    safe = quote(url, safe=":/?#[]@!$&'()*+,;=%-._~").replace("&", "&amp;")
    return f"<{safe}|{label}>"


def mrkdwn(markdown: str) -> str:
    """The answer's Markdown as mrkdwn: bold, italics, strike, code, links, headings (bold
    lines) and bullets kept; everything else shown as text."""
    held: list[str] = []

    def hold(text: str) -> str:
        held.append(text)
        return _HOLD.format(len(held) - 1)

    text = markdown.replace("\x00", "")
    text = _FENCE.sub(lambda m: hold(_fenced(m.group(0))), text)
    text = _CODE.sub(lambda m: hold(escape(m.group(0))), text)
    text = _LINK.sub(lambda m: hold(link(m.group(2), m.group(1))), text)
    text = escape(text)
    text = _HEADING.sub(lambda m: hold(f"*{m.group(1).strip('*_ ')}*"), text)
    text = _BULLET.sub(lambda m: f"{m.group(1)}• ", text)
    text = _BOLD.sub(lambda m: hold(f"*{m.group(2)}*"), text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text)
    while _HELD.search(text):  # held text may hold more (a link in bold)
        text = _HELD.sub(lambda m: held[int(m.group(1))], text)
    return text.strip()


def _fenced(block: str) -> str:
    body = block[3:].removesuffix("```")
    # The fence's language tag means nothing to Slack: drop it.
    first, _, rest = body.partition("\n")
    code = rest if rest and " " not in first.strip() else body
    return f"```{escape(code.strip(chr(10)))}```"


def sources_line(sources: Iterable[Mapping[str, Any]], *, heading: str = "Sources") -> str:
    """`*Sources*  1. <url|title>  2. …`: each page once, numbered as the answer cites them."""
    links = [f"{number}. {link(url, title)}" for number, url, title in cited_pages(sources)]
    return f"*{heading}*\n" + "\n".join(links) if links else ""


def pieces(text: str, *, limit: int = SECTION_LIMIT) -> list[str]:
    """The text in pieces of at most `limit` characters, cut between paragraphs, lines or
    words (a section block holds 3,000)."""
    parts: list[str] = []
    while len(text) > limit:
        room = text[:limit]
        cut = max(room.rfind("\n\n"), room.rfind("\n"), room.rfind(" "))
        cut = cut if cut > limit // 2 else limit
        parts.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        parts.append(text)
    return parts
