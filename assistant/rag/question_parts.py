"""The parts of a question that asks for several things ("How do I install the Acme CLI and log
in? Show me the commands."), so that each is answered from its own best passage.

Rules over the words, no model: each question sentence is a part, and a question joining two
requests with "and" is cut in two when what follows "and" starts a request of its own: a
question word ("... and how do I undo it?") or, after "How do I ..." / "How to ...", words
that are not a noun phrase ("and log in", not "and the SDK"). A request with no subject of
its own ("Show me the commands.", "Please explain.") is no part: it says how to answer."""

from __future__ import annotations

import re

_SENTENCES = re.compile(r"(?<=[?.!])\s+")
_QUESTION_WORDS = frozenset(
    "how what when where which who why can could do does is are should".split()
)
_HOW_PREFIX = re.compile(r"^(how (?:do|can|should|would) (?:i|we|you)|how to)\s+", re.IGNORECASE)
_NOT_A_REQUEST = frozenset(
    """a an the my our your this that these those it its them their some any all each every
    other another more less also then""".split()
)
#: Requests that only say how to answer: they add no part of their own.
_HOW_TO_ANSWER = re.compile(
    r"^(please\s+)?(show|give|tell|list)\s+(me|us)\b.*\b(command|commands|code|example|examples|"
    r"steps|snippet|details)\b|^(please\s+)?(explain|elaborate)\b",
    re.IGNORECASE,
)
_AND = re.compile(r",?\s+and\s+", re.IGNORECASE)


def question_parts(text: str) -> list[str]:
    """The requests in the question, each readable alone; one (the question) when it asks one
    thing."""
    parts: list[str] = []
    for sentence in _SENTENCES.split(" ".join(text.split())):
        if not sentence or _HOW_TO_ANSWER.match(sentence):
            continue
        parts.extend(_split_on_and(sentence))
    return parts if len(parts) > 1 else [" ".join(text.split())]


def _split_on_and(sentence: str) -> list[str]:
    for match in _AND.finditer(sentence):
        first, rest = sentence[: match.start()], sentence[match.end() :]
        words = rest.split()
        if not words or not first.split():
            continue
        lead = words[0].lower().strip("?.!,")
        if lead in _QUESTION_WORDS:
            return [_ended(first, sentence), *_split_on_and(rest[:1].upper() + rest[1:])]
        prefix = _HOW_PREFIX.match(first)
        # "How do I create and rotate a key?" shares its object: one request.
        own_words = prefix and len(first.split()) >= len(prefix.group(0).split()) + 2
        if prefix and own_words and lead not in _NOT_A_REQUEST:
            return [_ended(first, sentence), *_split_on_and(f"{prefix.group(0)}{rest}")]
    return [sentence]


def _ended(part: str, sentence: str) -> str:
    """The first part, ending as the sentence does ("?")."""
    end = sentence[-1] if sentence[-1] in "?.!" else ""
    return part.rstrip(",;") + end
