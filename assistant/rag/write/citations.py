"""An answer's citation markers counted from [1] in the order it first cites its sources.

A model cites the passages by their place in its prompt: an answer that draws on the second
and third only reads "... [2] ... [3]", and a reader looking for [1] finds none. Where the
written answer is the whole answer (a door that answers in one piece: the API, SMS, Slack, the
CLI), its markers are renumbered and its sources put in the same order. Markers inside code
are code (`a[1]`), not citations.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_MARKER = re.compile(r"\[(\d{1,3})\]")
#: A marker with the space before it, dropped whole.
_SPACED_MARKER = re.compile(r"\s*\[\d{1,3}\]")
#: A fenced block (to its end, or the text's) or a code span: left as written.
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)


def renumbered(text: str, count: int) -> tuple[str, list[int]]:
    """`text` with its markers of sources 1..`count` renumbered by first appearance, and the
    sources' old numbers in their new order: the cited ones first, then the others as they
    were. A marker for a number beyond `count` is left as it is."""
    order: list[int] = []

    def new_number(match: re.Match[str]) -> str:
        old = int(match.group(1))
        if not 1 <= old <= count:
            return match.group(0)
        if old not in order:
            order.append(old)
        return f"[{order.index(old) + 1}]"

    text = _outside_code(text, new_number)
    return text, [*order, *(n for n in range(1, count + 1) if n not in order)]


def markers(text: str) -> list[int]:
    """The numbers of `text`'s citation markers outside code, in order."""
    found: list[int] = []

    def noted(match: re.Match[str]) -> str:
        found.append(int(match.group(1)))
        return match.group(0)

    _outside_code(text, noted)
    return found


def with_marker(sentence: str, number: int) -> str:
    """`sentence` citing source `number`: the marker before the full stop that ends it, as the
    model writes one ("... in the configuration [1]."), or after its last word."""
    body = sentence.rstrip()
    end = len(body)
    if body.endswith((".", "!", "?")) and not body.endswith(("..", "?!")):
        end -= 1
    return f"{body[:end]} [{number}]{body[end:]}{sentence[len(body) :]}"


def uncited(text: str) -> str:
    """`text` without its citation markers; a marker inside code is code (`<Response [200]>`)."""
    return _outside_code(text, lambda _: "", _SPACED_MARKER)


def _outside_code(
    text: str, marker: Callable[[re.Match[str]], str], pattern: re.Pattern[str] = _MARKER
) -> str:
    """`text` with each marker outside code replaced by what `marker` makes of it."""
    pieces: list[str] = []
    at = 0
    for code in _CODE.finditer(text):
        pieces += [pattern.sub(marker, text[at : code.start()]), code.group(0)]
        at = code.end()
    pieces.append(pattern.sub(marker, text[at:]))
    return "".join(pieces)
