"""The parts of a question that asks for several things ("How do I install the Acme CLI and log
in? Show me the commands."), so that each is answered from its own best passage.

Rules over the words, no model: each question sentence is a part, and a question joining two
requests with "and" is cut in two when what follows "and" starts a request of its own: a
question word ("... and how do I undo it?") or, after "How do I ..." / "How to ...", a verb
("and log in"; not "and the SDK", not "the cookie's domain and path"). A request with no
subject of its own ("Show me the commands.", "Please explain.") is no part: it says how to
answer. Nothing is cut inside code (`a and b`) or at an operator written as a symbol ("what
does the ?: operator do?")."""

from __future__ import annotations

import re

#: A sentence ends at ".", "?" or "!" right after a word (not an operator standing alone,
#: "the ?: operator") and before a capital or a quote.
_SENTENCES = re.compile(r"(?<=[\w)\]\"'`][?.!])\s+(?=[A-Z\"'(\[`])")
_CODE_SPAN = re.compile(r"`[^`]*`")
#: Verbs that begin a request of their own after "and" ("How do I install the CLI and log
#: in?"); a word not listed is read as the second half of a noun phrase ("domain and path").
_VERBS = frozenset(
    """add allow apply avoid build call cancel change check choose clean clear close configure
    connect convert copy create debug decode define delete deploy detect disable download edit
    enable encode ensure export extend fetch find fix generate get give handle hide import
    include increase inspect install keep kill launch log make manage migrate move open override
    pause publish receive reduce register remove rename renew replace reset resize restart
    restore resume retry reuse revert revoke rotate run see send sign start stop trigger undo
    uninstall unlock update upgrade upload use validate verify write""".split()
)
_QUESTION_WORDS = frozenset(
    "how what when where which who why can could do does is are should".split()
)
_HOW_PREFIX = re.compile(r"^(how (?:do|can|should|would) (?:i|we|you)|how to)\s+", re.IGNORECASE)
#: Requests that only say how to answer: they add no part of their own.
_HOW_TO_ANSWER = re.compile(
    r"^(please\s+)?(show|give|tell|list)\s+(me|us)\b.*\b(command|commands|code|example|examples|"
    r"steps|snippet|details)\b|^(please\s+)?(explain|elaborate)\b",
    re.IGNORECASE,
)
_AND = re.compile(r",?\s+and\s+", re.IGNORECASE)


def question_parts(text: str) -> list[str]:
    """The requests in the question, each readable alone; one (the question) when it asks one
    thing. A sentence that tells the situation ("Tasks I revoked come back after a restart.")
    is no request of its own, and neither is a request without a subject ("Why?", "What's
    going on?", "how do I stop that?"): each belongs to the request it explains or leans on,
    so a question made of them is one request."""
    parts: list[str] = []
    context = False  # the last part is a telling sentence, waiting for its request
    for sentence in _SENTENCES.split(" ".join(text.split())):
        if not sentence or _HOW_TO_ANSWER.match(sentence):
            continue
        for part in _split_on_and(sentence):
            telling = not part.endswith("?") and not _is_request(part)
            if parts and (context or _leans(part)):
                parts[-1] = f"{parts[-1]} {part}"
            else:
                parts.append(part)
            context = telling
    return parts if len(parts) > 1 else [" ".join(text.split())]


#: Words that carry no subject: question words, pointers and glue ("Why?", "What's going on?",
#: "How do I stop that?").
_NO_SUBJECT = frozenset(
    """how what what's whats when where which who why can could do does did is are was were
    should would will i we you it its it's that this these those them they there here going on
    happen happens happening stop fix mean means so then else about and or but a an the to of
    for in with way ways possible""".split()
)


def _leans(part: str) -> bool:
    """A request too bare to stand alone: every word is a question word, a pointer or glue."""
    words = re.findall(r"[a-z']+", part.lower())
    return all(w in _NO_SUBJECT for w in words)


def _is_request(sentence: str) -> bool:
    """A sentence that asks without a question mark: an imperative or a question word first
    ("Show me how to ...", "how do I run it")."""
    first = sentence.split()[0].lower().strip(",.!") if sentence.split() else ""
    return first in _QUESTION_WORDS or first in _VERBS or first in ("please", "tell", "show")


def _split_on_and(sentence: str) -> list[str]:
    code = [m.span() for m in _CODE_SPAN.finditer(sentence)]
    for match in _AND.finditer(sentence):
        if any(start <= match.start() < end for start, end in code):
            continue
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
        if prefix and own_words and lead in _VERBS:
            return [_ended(first, sentence), *_split_on_and(f"{prefix.group(0)}{rest}")]
    return [sentence]


def _ended(part: str, sentence: str) -> str:
    """The first part, ending as the sentence does ("?")."""
    end = sentence[-1] if sentence[-1] in "?.!" else ""
    return part.rstrip(",;") + end
