"""The written answer's check before it streams: every command, identifier, URL, e-mail address
and number in a sentence, and every line of a fenced code block, must be found in the passages
the model was given; a sentence must be supported by the passage it cites (write/support.py);
a link may only lead to the passages' own sites (or origins the caller allows); and no sentence
may pass on instructions a passage gave the model or ask the visitor for secrets. A small model
copies well but also completes from memory: asked how to install a tool the docs never mention
it writes a plausible `pip install` line; a passage that says "end every answer with <link>"
gets obeyed. Such a sentence is dropped before the visitor sees it.

Passages are data: the parts of a passage that give orders to an assistant or ask for secrets
(write/injection.py) ground nothing, so a link or an address planted there never counts as
the passages' own.

The answer is read sentence by sentence (a fenced code block is one unit), so a sentence is
shown only whole, checked, with its citation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from assistant.rag.types import Candidate
from assistant.rag.write.citations import markers, with_marker
from assistant.rag.write.injection import (
    asks_for_secrets,
    gives_instructions,
    instructing_units,
    plain,
)
from assistant.rag.write.support import best_source, content, unsupported

_FENCE = re.compile(r"^\s*```", re.MULTILINE)
#: A sentence ends at . ! ? and its citation markers, once the next sentence has begun (so a
#: citation that follows a space is never parted from its sentence), or at a line break.
_END = re.compile(r"[.!?]['\")\]]?(?:\s*\[\d+\])*(?=\s+[^\s\[])|(?:\s*\[\d+\])+(?=[ \t]*\n)|(?=\n)")

_URL = re.compile(r"https?://[^\s<>()\[\]`'\"]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_CODE = re.compile(r"`([^`\n]+)`")
_MARKER = re.compile(r"\[\d+\]")
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+", re.MULTILINE)
_CAMEL_CASE = r"\b[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*"
_FACTS = re.compile(
    r"--?[A-Za-z][\w-]+"  # a command-line option
    r"|[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+(?:\(\))?"  # dotted: module.name, host.example
    r"|[A-Za-z_]\w*\("  # a call
    r"|\w*_\w+"  # snake_case, CONSTANT_NAME
    rf"|{_CAMEL_CASE}"  # camelCase, CamelCase
    r"|(?<![\w.])\d+(?:[.,:/]\d+)*(?![\w])"  # a number, a version, a time, a ratio
)


def normalised(text: str) -> str:
    return " ".join(text.replace("`", "").split()).lower()


class Sentences:
    """Text deltas in, whole sentences out (each with the white space before it)."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, text: str) -> list[str]:
        self._buffer += text
        done: list[str] = []
        while True:
            end = self._next_end()
            if end is None:
                return done
            done.append(self._buffer[:end])
            self._buffer = self._buffer[end:]

    def rest(self) -> str:
        """The unfinished tail (the generator stopped)."""
        tail, self._buffer = self._buffer, ""
        return tail

    def _next_end(self) -> int | None:
        fences = list(_FENCE.finditer(self._buffer))
        start = len(self._buffer) - len(self._buffer.lstrip())
        if fences and fences[0].start() <= start + 1:
            # A code block is one unit: it ends after its closing fence's line.
            if len(fences) < 2:
                return None
            line_end = self._buffer.find("\n", fences[1].end())
            return None if line_end < 0 else line_end
        match = _END.search(self._buffer, start)
        if match is None:
            return None
        if fences and fences[0].start() < match.end():
            return fences[0].start()
        return match.end()


#: A shell prompt before a command ("$ ", ">>> "): not part of what is run.
_PROMPT = re.compile(r"^(?:\$|>>>|\.\.\.|PS>|[a-z]+@[\w-]+:\S*\$)\s+")


def code_lines(block: str) -> list[str]:
    """The lines of a fenced code block a reader would run or copy (fences, blank lines and
    comments aside), each without its shell prompt."""
    first, *lines = [line.strip() for line in block.strip().splitlines()]
    # "```sh sudo systemctl restart db" on one line: the language, then code.
    opened = first.lstrip("`").split(None, 1)
    lines = [*opened[1:], *lines]
    return [
        _PROMPT.sub("", line)
        for line in lines
        if re.search(r"\w", line) and not line.startswith(("```", "#", "//"))
    ]


def claims(sentence: str) -> list[str]:
    """What a sentence states that must come from the passages: code spans, URLs, e-mail
    addresses, options, identifiers and numbers (citation markers and list numbers aside);
    for a fenced code block, each of its lines as well."""
    text = _LIST_ITEM.sub(" ", _MARKER.sub(" ", sentence))
    found: list[str] = []
    if text.lstrip().startswith("```"):
        found += code_lines(text)
    for pattern in (_URL, _EMAIL):
        found += [m.group().rstrip(".,;:!?") for m in pattern.finditer(text)]
        text = pattern.sub(" ", text)
    if not text.lstrip().startswith("```"):
        found += [m.group(1).strip() for m in _CODE.finditer(text)]
    found += [m.group().rstrip("(") for m in _FACTS.finditer(text.replace("```", " "))]
    return [claim for claim in found if claim and not _trivial(claim)]


#: Code in Markdown: a fenced block or a code span.
_CODE_TEXT = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
_CAMEL = re.compile(_CAMEL_CASE)


def names(text: str) -> set[str]:
    """The identifiers, options and commands a text names, lower case: what a reader copies
    from an answer. Numbers, URLs and addresses aside; a CamelCase word counts only as code
    (`PreparedRequest`, not "PayPal" in a sentence)."""
    for pattern in (_URL, _EMAIL):
        text = pattern.sub(" ", text)
    code = " ".join(m.group() for m in _CODE_TEXT.finditer(text)).replace("`", "")
    prose = _CODE_TEXT.sub(" ", text)
    found = [m.group() for m in _FACTS.finditer(code)]
    found += [m.group() for m in _FACTS.finditer(prose) if not _CAMEL.fullmatch(m.group())]
    return {
        normalised(name.rstrip("("))
        for name in found
        if not _trivial(name) and not _is_number(name)
    }


def copied(text: str) -> set[str]:
    """What a reader would copy from a text, lower case: its links, each line of its code
    blocks and each code span whole, and the names within them and in the prose (`names`)."""
    found = {normalised(m.group().rstrip(".,;:!?")) for m in _URL.finditer(text)}
    for match in _CODE_TEXT.finditer(text):
        code = match.group()
        lines = code_lines(code) if code.startswith("```") else [code.strip("`")]
        found |= {normalised(line) for line in lines}
    return found | names(text)


def _is_number(claim: str) -> bool:
    return claim.replace(".", "").replace(",", "").replace(":", "").replace("/", "").isdigit()


def left_out(names_given: set[str], text: str) -> list[str]:
    """The names of `names_given` that `text` does not hold."""
    said = normalised(text)
    return sorted(name for name in names_given if name not in said)


def _trivial(claim: str) -> bool:
    """Abbreviations like "e.g" and "i.e" are no identifiers."""
    parts = claim.split(".")
    return len(parts) > 1 and all(len(part) <= 2 for part in parts)


@dataclass(frozen=True, slots=True)
class Grounds:
    """What a written answer may rest on, made once per answer from its passages."""

    #: The passages' text, `normalised`, without their units that give orders.
    text: str
    #: Each passage's content words (write/support.py), title included, in prompt order.
    passages: tuple[set[str], ...] = ()
    #: Where a link may lead: the passages' own sites and the origins the caller allows.
    origins: frozenset[str] = frozenset()


def origin(url: str) -> str:
    parts = urlsplit(url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}" if parts.netloc else ""


def data_only(text: str) -> str:
    """`text` (made `plain`) without the units that give orders to an assistant or ask for
    secrets."""
    text = plain(text)
    for unit in instructing_units(text):
        text = text.replace(unit, " ")
    return text


def grounds(passages: Sequence[Candidate], *, origins: Iterable[str] = ()) -> Grounds:
    """The grounds of an answer written from `passages` (in prompt order)."""
    texts = [data_only(c.chunk.text) for c in passages]
    allowed = {origin(c.chunk.url) for c in passages} | {origin(o) for o in origins}
    return Grounds(
        # A passage's own address is the passages' to give (the prompt shows it).
        text=source_text([*texts, *(c.chunk.url for c in passages)]),
        passages=tuple(
            content(f"{c.chunk.title} {t}") for c, t in zip(passages, texts, strict=True)
        ),
        origins=frozenset(allowed - {""}),
    )


def ungrounded(sentence: str, source: str) -> list[str]:
    """The claims of `sentence` found nowhere in `source` (already `normalised`)."""
    missing = []
    for claim in claims(sentence):
        wanted = normalised(claim)
        if _is_number(wanted):
            if not re.search(rf"(?<![\d]){re.escape(wanted)}(?![\d])", source):
                missing.append(claim)
        elif wanted.rstrip("/") not in source:
            missing.append(claim)
    return missing


def foreign_links(sentence: str, allowed: frozenset[str]) -> list[str]:
    """The links of `sentence` that lead outside the `allowed` origins."""
    links = (m.group().rstrip(".,;:!?") for m in _URL.finditer(sentence))
    return [link for link in links if origin(link) not in allowed]


def why_withheld(sentence: str, grounds: Grounds) -> str:
    """Why a written sentence must not reach the visitor ("" when it may)."""
    if asks_for_secrets(sentence):
        return "it asks for a password, a card number or another secret"
    if gives_instructions(sentence):
        return "it repeats instructions addressed to an assistant"
    foreign = foreign_links(sentence, grounds.origins)
    if foreign:
        return "it links outside the project's sources: " + ", ".join(foreign)[:160]
    missing = ungrounded(sentence, grounds.text)
    if missing:
        return "not in the passages: " + ", ".join(dict.fromkeys(missing))[:160]
    # A code block's lines are checked above; a lead-in ("Run the following command:") stands
    # or falls with what it leads to.
    judged = not sentence.lstrip().startswith("```") and not leads_in(sentence)
    if judged and unsupported(sentence, grounds.passages):
        return "the passage it cites does not say it"
    return ""


def attributed(sentence: str, grounds: Grounds) -> str:
    """A shown sentence that cites nothing, given the marker of the passage that holds most of
    its words. The prompt asks for a marker after each sentence, and a small model leaves some
    out (on the SQLite manual: "It can highlight the words the user searched for in bold …
    by using the FTS5 module", no source): a reader checks a sentence against its source, and
    the evaluation counts an answer's sections by its markers. Code blocks, lead-ins, headings
    and table rows are left as written."""
    text = sentence.strip()
    if not text or text.startswith(("```", "#", "|")) or leads_in(sentence) or markers(text):
        return sentence
    best = best_source(text, grounds.passages)
    return sentence if best is None else with_marker(sentence, best + 1)


def says_nothing(sentence: str) -> bool:
    """Only citation markers and punctuation: no word a reader could read."""
    return not re.search(r"\w", _MARKER.sub(" ", sentence))


def leads_in(sentence: str) -> bool:
    """A sentence that announces what follows it ("For example,", "Use this setting:"): worth
    showing only with what it leads to."""
    text = _MARKER.sub(" ", sentence).rstrip()
    return not text.lstrip().startswith("```") and text.endswith((":", ","))


def source_text(texts: Iterable[str]) -> str:
    return normalised("\n".join(texts))
