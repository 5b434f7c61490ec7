"""How a selection of quoted units reads: paragraphs, list items and code blocks, each quote
with its citation marker (numbered by section), an API entry named by its signature."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant.rag.reading.units import Unit, passage_items
from assistant.rag.types import Candidate, Chunk

#: A Markdown code span (`timeout`), not a typographic quote (``like this'').
CODE_SPAN = re.compile(r"(?<!`)`[^`\s][^`]*(?<!\s)`(?!`)")


def whole_text(quote: Sequence[Unit], passages: Sequence[Candidate]) -> str:
    """What the cross-encoder reads of a quote read whole: its passage's title path, then the
    quote's units, a line each."""
    return f"{passages[quote[0].passage].chunk.title}\n" + "\n".join(u.text for u in quote)


@dataclass(frozen=True, slots=True)
class Selection:
    """What an extractive answer quotes: units grouped by passage, in reading order, and the
    parts of the question no sentence answers."""

    groups: list[list[Unit]]
    missing: list[str] = field(default_factory=list)


def paragraph_text(units: Sequence[Unit], marker: str) -> str:
    """Units of one paragraph (or list) with the marker after the last; an API term reads as
    code, followed by its definition."""
    end = f" {marker}" if marker else ""
    if all(u.is_list_item for u in units):
        return "\n".join([*(u.text for u in units[:-1]), f"{units[-1].text}{end}"])
    texts = [term_text(u.text) if u.kind == "term" else u.text for u in units]
    return " ".join(texts) + end


def term_text(signature: str) -> str:
    """A signature reads as code; a term in words (a definition's "Parameters") as words."""
    if "`" in signature or not names_code(signature):
        return f"{signature}:"
    return f"`{signature}`:"


_DOTTED_NAME = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+")


_CALLED_NAME = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


#: A signature that is a declaration keyword and a name ("property ok", "class Session").
_DECLARED_NAME = re.compile(
    r"(?:abstract|async|attribute|class|classmethod|const|data|def|enum|exception|final|fn|"
    r"function|interface|method|module|property|static|staticmethod|struct|trait|type|var)"
    r"\s+[A-Za-z_]\w*",
)


def names_code(term: str) -> bool:
    """An entry's signature ("get(timeout=None)", "requests.codes", "max_redirects", "property
    ok"), not a field of its definition in words ("Parameters", "Return type")."""
    return bool(
        _CALLED_NAME.search(term)
        or _DOTTED_NAME.search(term)
        or "_" in term
        or "=" in term
        or _DECLARED_NAME.fullmatch(term.strip("`").strip())
    )


def entry_name(chunk: Chunk, unit: Unit | None = None) -> str:
    """The documented object an API reference passage's `unit` belongs to: the nearest entry
    signature before it in the passage ("exception requests.ConnectTimeout(*args)" ->
    "requests.ConnectTimeout"), else the entry the passage's anchor names, for a passage cut
    after its signature ("celery.Celery.autodiscover_tasks"); "" for other passages. A
    reference passage may hold several entries: the anchor names only the first. Another
    page's section whose heading names code (a setting's own section, "result_expires") is
    named by its heading."""
    if chunk.kind != "reference":
        heading = chunk.title.rpartition(" > ")[2].strip().strip("`")
        return heading if heading and not heading.count(" ") and names_code(heading) else ""
    if unit is not None:
        terms = [
            u for u in passage_items(unit.passage, chunk.text)
            if u.kind == "term" and u.position < unit.position and names_code(u.text)
        ]  # fmt: skip
        if terms:
            signature = terms[-1].text.strip("`")
            called = _CALLED_NAME.search(signature)
            return called.group(1) if called else signature.split()[-1]
    fragment = chunk.url.partition("#")[2]
    return fragment if _DOTTED_NAME.fullmatch(fragment) else ""


def citation_number(passage: int, passages: Sequence[Candidate]) -> int:
    """The passage's citation number: the first of the passages of its section."""
    if passage < len(passages):
        url = passages[passage].chunk.url
        if url:
            for number, other in enumerate(passages[: passage + 1], start=1):
                if other.chunk.url == url:
                    return number
    return passage + 1


def in_document_order(units: Sequence[Unit], passages: Sequence[Candidate]) -> list[list[Unit]]:
    """Grouped by passage. Passages cut from one document follow its order (install, then log
    in), whatever their relevance; documents come in the order of their best passage."""
    groups: dict[int, list[Unit]] = {}
    for unit in sorted(units, key=lambda u: (u.passage, u.position)):
        groups.setdefault(unit.passage, []).append(unit)

    def document(passage: int) -> str:
        chunk = passages[passage].chunk
        return chunk.document if chunk.document and chunk.ordinal >= 0 else f"#{passage}"

    first_seen: dict[str, int] = {}
    for passage in sorted(groups):
        first_seen.setdefault(document(passage), passage)
    return [
        groups[p]
        for p in sorted(
            groups, key=lambda p: (first_seen[document(p)], passages[p].chunk.ordinal, p)
        )
    ]
