"""A passage read as a quote reads it: sentences (not cut after "e.g."), list items, API
terms with their definitions, and whole code blocks, each knowing the paragraph, list or block
it belongs to. Pure Python."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from assistant.rag.types import Candidate

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`*])")
#: Words ending with a full stop that end no sentence ("(e.g. DNS failure ...)").
_ABBREVIATIONS = frozenset(
    "e.g. i.e. etc. vs. cf. approx. incl. no. nos. fig. ch. sec. vol. mr. mrs. ms. dr. st. "
    "jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec. inc. ltd. co.".split()
)


def sentences_of(paragraph: str) -> list[str]:
    """The paragraph's sentences: a break after ".", "!" or "?" before a capital, a digit or a
    quote, but not after an abbreviation ("e.g.") or a single initial ("J. Smith")."""
    pieces = _SENTENCE_END.split(paragraph)
    sentences: list[str] = []
    for piece in pieces:
        words = sentences[-1].split() if sentences else []
        last = words[-1].lower().lstrip("([{\"'") if words else ""
        if sentences and (last in _ABBREVIATIONS or re.fullmatch(r"[a-z]\.", last)):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
#: A quotation's markers at a line's start ("> ", "> > "): a quoted paragraph's lines are
#: joined without them, or a quote reads "You can declare > a VARCHAR(10) and ...".
_QUOTE_MARKERS = re.compile(r"^(?:>[ \t]?)+")
#: The sentences of this many kept passages are read (best first): the answer is almost always
#: in the top ones, and each sentence costs a cross-encoder run.
MAX_PASSAGES = 3
MAX_SENTENCES = 30


@dataclass(frozen=True, slots=True)
class Unit:
    """A sentence or a list item of one passage. `code`: the fenced code block that follows a
    sentence ending with a colon ("Install the CLI with pip:"), which belongs to it. `kind`:
    "sentence", "item" (of a list), "term" (an API entry's signature, the term its definition
    follows) or "code" (a whole fenced block, in `passage_items` only); `block`: which
    paragraph, list, term or code block of the passage it belongs to."""

    passage: int
    position: int
    text: str
    is_list_item: bool
    code: str = ""
    kind: str = "sentence"
    block: int = 0


#: A definition's first line in the extracted Markdown (":   text", after its term).
_DEFINITION = re.compile(r"^:\s+")


def passage_items(passage_index: int, text: str) -> list[Unit]:
    """Everything of one passage a quote may hold, in reading order: sentences, list items, API
    terms and whole code blocks. Headings and tables are skipped. A paragraph's lines are
    joined first: hard-wrapped Markdown must not cut a sentence in two. A passage that starts
    inside a code block (a chunk cut within one: an odd number of fences) skips its first
    lines, so no stray fence or half a program is ever quoted."""
    items: list[Unit] = []
    paragraph: list[str] = []
    block = 0

    def add(text: str, kind: str) -> None:
        nonlocal block
        if items and items[-1].block == block and (items[-1].kind == "item") != (kind == "item"):
            block += 1  # a list begins or ends
        items.append(Unit(passage_index, len(items), text, kind == "item", kind=kind, block=block))

    def flush(*, as_term: bool = False) -> None:
        nonlocal block
        joined = " ".join(paragraph)
        paragraph.clear()
        if not joined:
            return
        if as_term:
            add(joined, "term")
        else:
            for sentence in sentences_of(joined):
                if len(sentence.split()) >= 3:
                    add(sentence.strip(), "sentence")
        block += 1

    lines = text.splitlines()
    in_code = sum(1 for line in lines if line.strip().startswith("```")) % 2 == 1
    code: list[str] | None = None  # the lines of the block being read, with its fence
    skipping = in_code  # the tail of a block cut off before this passage
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            if skipping:
                skipping = False
            elif code is None:
                code = [stripped]  # the fence with its language ("```bash")
            else:
                add("\n".join([*code, "```"]), "code")
                block += 1
                code = None
            continue
        if skipping:
            continue
        if code is not None:
            code.append(line)
            continue
        if stripped.startswith(">"):
            line = _QUOTE_MARKERS.sub("", stripped)
            stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("|"):
            flush()
            continue
        if _DEFINITION.match(stripped):
            # The lines before were the term this definition explains (an API signature).
            flush(as_term=True)
            stripped = _DEFINITION.sub("", stripped)
        if _LIST_ITEM.match(line):
            flush()
            add(stripped, "item")
            continue
        if not paragraph and items and items[-1].kind == "item" and line[:1].isspace():
            # A list item's wrapped line.
            last = items[-1]
            items[-1] = replace(last, text=f"{last.text} {stripped}")
            continue
        paragraph.append(stripped)
    flush()
    return items


def split_units(passage_index: int, text: str) -> list[Unit]:
    """The sentences, list items and API terms of a passage (what the cross-encoder judges); a
    code block is kept only with the sentence ending with ':' right before it."""
    units: list[Unit] = []
    items = passage_items(passage_index, text)
    for number, item in enumerate(items):
        if item.kind == "code":
            continue
        after = items[number + 1] if number + 1 < len(items) else None
        if item.text.endswith(":") and after is not None and after.kind == "code":
            item = replace(item, code=after.text)
        units.append(item)
    return units


def units_of(passages: Sequence[Candidate]) -> list[Unit]:
    """The units the answerer (and the answerability check) read; a passage with no prose
    sentence (a code block, a table) counts as one unit, so it can still be judged."""
    units: list[Unit] = []
    for index, candidate in enumerate(passages[:MAX_PASSAGES]):
        found = split_units(index, candidate.chunk.text)
        units.extend(found or [Unit(index, 0, candidate.chunk.text.strip(), False)])
    return units[:MAX_SENTENCES]
