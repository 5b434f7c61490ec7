"""Structure-aware chunking: headings first, then paragraphs, then sentences, bounded by the
embedder's own token count, with a small overlap between neighbouring pieces of one section."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from assistant.rag.chunking.sections import FENCE, Block, Section, split_sections

TokenCounter = Callable[[str], int]

#: Changes whenever the same Markdown would be cut into other chunks (cached evaluation
#: indexes are keyed by it).
CHUNKING_VERSION = "6"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

#: A piece never holds more than this many characters per token of its budget, whatever the
#: tokenizer counts: a run of text the tokenizer reads as one token (a base64 blob, a minified
#: bundle, a 19 MB line without a space) is cut like any other over-long text. Documentation
#: runs at 3 to 6 characters a token; the densest real chunk measured (Ray's docs, long
#: hashes) at 16.4.
MAX_CHARS_PER_TOKEN = 24


@dataclass(frozen=True, slots=True)
class Piece:
    """A chunk before it is stored: its heading path, text, and an anchor for the URL."""

    heading_path: str
    text: str
    anchor: str
    token_count: int

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(f"{self.heading_path}\n{self.text}".encode()).hexdigest()


def bounded_counter(count_tokens: TokenCounter, max_tokens: int) -> TokenCounter:
    """Tokens as the chunker weighs them: at least one per `MAX_CHARS_PER_TOKEN` characters.
    A text over `max_tokens` by its length alone is never handed to the tokenizer (a 19 MB
    line costs nothing to weigh); every comparison is against a budget no larger, so that
    lower bound is enough."""

    def count(text: str) -> int:
        by_length = -(-len(text) // MAX_CHARS_PER_TOKEN)
        return by_length if by_length > max_tokens else max(by_length, count_tokens(text))

    return count


def _cut(text: str, count: TokenCounter, max_tokens: int) -> list[str]:
    """A text with no place left to cut (one word, one line of code) cut by characters into
    parts within the limit."""
    parts: list[str] = []
    size = max_tokens * MAX_CHARS_PER_TOKEN
    start = 0
    while start < len(text):
        part = text[start : start + size]
        tokens = count(part)
        while tokens > max_tokens and len(part) > 1:
            part = part[: max(1, len(part) * max_tokens // (tokens + 1))]
            tokens = count(part)
        parts.append(part)
        start += len(part)
        size = len(part)  # the next stretch is likely as dense
    return parts


def _split_long(text: str, count: TokenCounter, max_tokens: int) -> list[str]:
    """A paragraph over the limit is cut at sentences, a sentence over it at words, and a
    word over it by characters."""
    if count(text) <= max_tokens:
        return [text]
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if count(sentence) <= max_tokens:
            pieces.append(sentence)
            continue
        words = sentence.split()
        current: list[str] = []
        for word in words:
            if count(word) > max_tokens:
                if current:
                    pieces.append(" ".join(current))
                    current = []
                pieces.extend(_cut(word, count, max_tokens))
                continue
            if current and count(" ".join([*current, word])) > max_tokens:
                pieces.append(" ".join(current))
                current = []
            current.append(word)
        if current:
            pieces.append(" ".join(current))
    return pieces


def _split_code(
    block: str, count: TokenCounter, max_tokens: int, first_tokens: int | None = None
) -> list[str]:
    """A code block over the limit is cut between lines, each part fenced again, so no line
    of code is ever broken or flattened. The first part may be kept shorter (`first_tokens`),
    leaving room for the sentence that leads into it."""
    if count(block) <= max_tokens:
        return [block]
    lines = block.splitlines()
    opening, closing = lines[0].strip(), lines[-1].strip()
    body = lines[1:-1] if FENCE.match(lines[-1]) else lines[1:]
    room = max(1, max_tokens - count(f"{opening}\n{closing}"))
    body = [part for line in body for part in _cut_line(line, count, room)]
    parts: list[str] = []
    current: list[str] = []
    for line in body:
        candidate = "\n".join([opening, *current, line, closing])
        limit = max_tokens if parts or first_tokens is None else first_tokens
        if current and count(candidate) > limit:
            parts.append("\n".join([opening, *current, closing]))
            current = []
        current.append(line)
    if current:
        parts.append("\n".join([opening, *current, closing]))
    return parts


def _cut_line(line: str, count: TokenCounter, max_tokens: int) -> list[str]:
    """A line of code over the limit (a minified bundle) is the one line that is broken."""
    return [line] if count(line) <= max_tokens else _cut(line, count, max_tokens)


@dataclass(frozen=True, slots=True)
class _Unit:
    text: str
    anchor: str
    code: bool


_TABLE_ROW = re.compile(r"^\s*\|")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def _split_rows(block: str, count: TokenCounter, max_tokens: int) -> list[str]:
    """A table or a list over the limit is cut between rows or items (a table's header goes
    with every part), never inside one; a row or item over the limit is cut as prose."""
    lines = block.splitlines()
    header = lines[:2] if _TABLE_ROW.match(lines[0]) else []
    rows: list[str] = []
    for line in lines[len(header) :]:
        if rows and not _TABLE_ROW.match(line) and not _LIST_ITEM.match(line):
            rows[-1] += "\n" + line  # an item's continuation line
        else:
            rows.append(line)
    parts: list[str] = []
    current: list[str] = []
    for row in rows:
        if current and count("\n".join([*header, *current, row])) > max_tokens:
            parts.append("\n".join([*header, *current]))
            current = []
        if count("\n".join([*header, row])) > max_tokens:
            parts.extend(_split_long(row, count, max_tokens))
            continue
        current.append(row)
    if current:
        parts.append("\n".join([*header, *current]))
    return parts


def _split_block(block: Block, count: TokenCounter, budget: int, lead_in: str = "") -> list[str]:
    if block.code:
        room = budget - count(lead_in) - 2 if lead_in else None
        first = room if room is not None and room >= budget // 2 else None
        return _split_code(block.text, count, budget, first)
    if count(block.text) > budget and (
        _TABLE_ROW.match(block.text) or _LIST_ITEM.match(block.text)
    ):
        return _split_rows(block.text, count, budget)
    return _split_long(block.text, count, budget)


def _units(section: Section, count: TokenCounter, budget: int) -> list[_Unit]:
    units: list[_Unit] = []
    for block in section.blocks:
        lead_in = units[-1].text if units and not units[-1].code else ""
        units += [
            _Unit(text, block.anchor, block.code)
            for text in _split_block(block, count, budget, lead_in)
        ]
    return units


def chunk_markdown(
    markdown: str,
    *,
    count_tokens: TokenCounter,
    max_tokens: int = 256,
    overlap_tokens: int = 32,
    title: str = "",
) -> list[Piece]:
    """Split a document into pieces of at most `max_tokens` tokens of text (the title path
    that is embedded with each piece is counted too, so the whole fits the model's window).
    A code block stays whole where it fits, and with the paragraph that leads into it, which
    may take the overlap's room (`overlap_tokens`) past `max_tokens`. No
    piece holds more than `MAX_CHARS_PER_TOKEN` characters per token of the budget either,
    whatever the tokenizer makes of it."""
    real_count = count_tokens
    count_tokens = bounded_counter(count_tokens, max_tokens + max(overlap_tokens, 0))
    pieces: list[Piece] = []
    for section in split_sections(markdown):
        heading_path = " > ".join(section.headings)
        header_tokens = count_tokens(" > ".join(filter(None, [title, heading_path])))
        budget = max(32, max_tokens - header_tokens)

        def emit(units: list[_Unit], heading_path: str = heading_path) -> None:
            text = "\n\n".join(u.text for u in units)
            pieces.append(Piece(heading_path, text, units[0].anchor, real_count(text)))

        current: list[_Unit] = []
        for unit in _units(section, count_tokens, budget):
            if current and unit.anchor != current[-1].anchor:
                # A new anchored place in the section (an API entry, a term with an id): a
                # piece links to one place, so a search hit and a citation land on the entry
                # that holds the text, not on the first of several the piece would span.
                emit(current)
                current = []
            candidate = "\n\n".join(u.text for u in [*current, unit])
            if current and count_tokens(candidate) > budget:
                # The sentence that leads into a code block goes with it, taking the overlap's
                # room past the budget if it must: code alone reads as nothing to the
                # reranker ("consume a streaming API line by line" and Requests' iter_lines
                # example: relevance 0.13 alone, 0.67 after its lead).
                lead_in = _lead_in(current, unit, count_tokens, budget + overlap_tokens)
                done = current[: len(current) - len(lead_in)]
                if done:
                    emit(done)
                current = lead_in or _overlap(done, count_tokens, overlap_tokens)
                room = budget + overlap_tokens if lead_in else budget
                if current and count_tokens("\n\n".join(u.text for u in [*current, unit])) > room:
                    current = []
            current.append(unit)
        if current:
            emit(current)
    return pieces


def _lead_in(current: list[_Unit], code: _Unit, count: TokenCounter, budget: int) -> list[_Unit]:
    """The paragraph just before a code block goes on with it when both fit in one piece."""
    if not code.code or current[-1].code:
        return []
    lead = current[-1]
    return [lead] if count(f"{lead.text}\n\n{code.text}") <= budget else []


def _overlap(units: list[_Unit], count: TokenCounter, overlap_tokens: int) -> list[_Unit]:
    """The last sentence of the previous piece, when it is short enough, starts the next one
    (never code, a table or a list)."""
    if overlap_tokens <= 0 or not units or units[-1].code:
        return []
    last = units[-1]
    last_sentence = _SENTENCE_END.split(last.text)[-1]
    if not last_sentence.rstrip().endswith((".", "!", "?")) or "\n|" in f"\n{last_sentence}":
        return []  # a table, a list or a term is not a sentence to carry over
    if count(last_sentence) > overlap_tokens:
        return []
    return [_Unit(last_sentence, last.anchor, False)]
