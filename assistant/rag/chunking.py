"""Structure-aware chunking: headings first, then paragraphs, then sentences, bounded by the
embedder's own token count, with a small overlap between neighbouring pieces of one section."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

TokenCounter = Callable[[str], int]

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Section:
    headings: tuple[str, ...]
    body: str


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


def slugify(heading: str) -> str:
    """The anchor most documentation generators give a heading."""
    slug = re.sub(r"[^\w\s-]", "", heading.lower()).strip()
    return re.sub(r"[\s_]+", "-", slug)


def split_sections(markdown: str) -> list[Section]:
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    body: list[str] = []
    in_code = False

    def flush() -> None:
        text = "\n".join(body).strip()
        if text:
            sections.append(Section(tuple(h for _, h in path), text))
        body.clear()

    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
        match = None if in_code else _HEADING.match(line)
        if match:
            flush()
            level = len(match.group(1))
            path = [(lvl, h) for lvl, h in path if lvl < level]
            path.append((level, match.group(2).strip()))
        else:
            body.append(line)
    flush()
    return sections


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _split_long(text: str, count: TokenCounter, max_tokens: int) -> list[str]:
    """A paragraph over the limit is cut at sentences, and a sentence over it at words."""
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
            if current and count(" ".join([*current, word])) > max_tokens:
                pieces.append(" ".join(current))
                current = []
            current.append(word)
        if current:
            pieces.append(" ".join(current))
    return pieces


def chunk_markdown(
    markdown: str,
    *,
    count_tokens: TokenCounter,
    max_tokens: int = 256,
    overlap_tokens: int = 32,
    title: str = "",
) -> list[Piece]:
    """Split a document into pieces of at most `max_tokens` tokens of text (the title path
    that is embedded with each piece is counted too, so the whole fits the model's window)."""
    pieces: list[Piece] = []
    for section in split_sections(markdown):
        heading_path = " > ".join(section.headings)
        header_tokens = count_tokens(" > ".join(filter(None, [title, heading_path])))
        budget = max(32, max_tokens - header_tokens)
        anchor = slugify(section.headings[-1]) if section.headings else ""

        units: list[str] = []
        for paragraph in _paragraphs(section.body):
            units.extend(_split_long(paragraph, count_tokens, budget))

        current: list[str] = []
        for unit in units:
            candidate = "\n\n".join([*current, unit])
            if current and count_tokens(candidate) > budget:
                text = "\n\n".join(current)
                pieces.append(Piece(heading_path, text, anchor, count_tokens(text)))
                current = _overlap(current, count_tokens, overlap_tokens)
                if current and count_tokens("\n\n".join([*current, unit])) > budget:
                    current = []
            current.append(unit)
        if current:
            text = "\n\n".join(current)
            pieces.append(Piece(heading_path, text, anchor, count_tokens(text)))
    return pieces


def _overlap(units: list[str], count: TokenCounter, overlap_tokens: int) -> list[str]:
    """The last sentence of the previous piece, when it is short enough, starts the next one."""
    if overlap_tokens <= 0 or not units:
        return []
    last_sentence = _SENTENCE_END.split(units[-1])[-1]
    return [last_sentence] if count(last_sentence) <= overlap_tokens else []
