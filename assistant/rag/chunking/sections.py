"""A Markdown document read as sections by heading, each a run of blocks (a paragraph, list or
table, or a whole fenced code block), with the anchor a link to it lands on."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
#: An id the page gives a heading (`## Title {#id}`) or a place (`{#id}` alone on a line),
#: written by the website extractor (ingestion/extraction.py).
_HEADING_ANCHOR = re.compile(r"\s*\{#([^}\s]+)\}$")
_ANCHOR_LINE = re.compile(r"^\{#([^}\s]+)\}$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_FENCE_INSIDE = re.compile(r"(?<=\S)\s*(`{3,}|~{3,})")
#: A heading longer than this is cut: it is embedded and reranked with every piece under it.
MAX_HEADING_CHARS = 300


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph (or list, table) or a whole fenced code block, with the anchor in effect
    where it starts."""

    text: str
    anchor: str = ""
    code: bool = False


@dataclass(frozen=True, slots=True)
class Section:
    headings: tuple[str, ...]
    blocks: tuple[Block, ...]

    @property
    def body(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


def title_path(document_title: str, heading_path: str) -> str:
    """A chunk's title: the document's, then its heading path, without the document's title
    repeated when the path starts with it ("Calling Tasks > Routing options", not "Calling
    Tasks > Calling Tasks > Routing options")."""
    headings = [h for h in heading_path.split(" > ") if h] if heading_path else []
    if headings and document_title and headings[0].strip() == document_title.strip():
        headings = headings[1:]
    return " > ".join([document_title, *headings]) if document_title else " > ".join(headings)


def slugify(heading: str) -> str:
    """The anchor most Markdown renderers give a heading (used when the document carries no
    ids of its own)."""
    slug = re.sub(r"[^\w\s-]", "", heading.lower()).strip()
    return re.sub(r"[\s_]+", "-", slug)


def _fence_lines(markdown: str) -> list[str]:
    """Lines with every code fence at a line start: an extractor may write one at the end of
    a sentence ("...as follows: ```python") or close one after the last line of code."""
    lines: list[str] = []
    for line in markdown.splitlines():
        match = _FENCE_INSIDE.search(line)
        if match and not FENCE.match(line):
            before, fence_and_rest = line[: match.start()], line[match.start(1) :]
            lines.extend([before.rstrip(), fence_and_rest])
        else:
            lines.append(line)
    return lines


def split_sections(markdown: str) -> list[Section]:
    """Sections by heading, each a run of blocks; headings and anchor lines inside code are
    code. Without any id in the document, a heading's slug is its anchor."""
    lines = _fence_lines(markdown)
    has_ids = any(_ANCHOR_LINE.match(line.strip()) or _HEADING_ANCHOR.search(line)
                  for line in lines)  # fmt: skip
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    blocks: list[Block] = []
    paragraph: list[str] = []
    code: list[str] = []
    fence = ""  # the open fence, while inside code
    anchor = ""

    def end_paragraph() -> None:
        text = "\n".join(paragraph).strip()
        if text:
            blocks.append(Block(text, anchor))
        paragraph.clear()

    def end_section() -> None:
        end_paragraph()
        if blocks:
            sections.append(Section(tuple(h for _, h in path), tuple(blocks)))
        blocks.clear()

    for line in lines:
        fence_match = FENCE.match(line)
        if fence:
            code.append(line)
            if (
                fence_match
                and fence_match.group(2)[0] == fence[0]
                and (
                    len(fence_match.group(2)) >= len(fence)
                    and not line.strip()[len(fence) :].strip()
                )
            ):
                blocks.append(Block(_dedent("\n".join(code)), anchor, code=True))
                code.clear()
                fence = ""
            continue
        if fence_match:
            end_paragraph()
            fence = fence_match.group(2)
            code.append(line)
            continue
        marker = _ANCHOR_LINE.match(line.strip())
        if marker:
            end_paragraph()
            anchor = marker.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            end_section()
            level = len(heading.group(1))
            title = heading.group(2).strip()
            own = _HEADING_ANCHOR.search(title)
            if own:
                title = title[: own.start()].strip()
                anchor = own.group(1)
            title = title[:MAX_HEADING_CHARS]
            if not own and not has_ids:
                anchor = slugify(title)
            path = [(lvl, h) for lvl, h in path if lvl < level]
            path.append((level, title))
            continue
        if not line.strip():
            end_paragraph()
        else:
            paragraph.append(line)
    if code:  # an unclosed fence: the rest of the document is its code
        blocks.append(Block(_dedent("\n".join([*code, fence])), anchor, code=True))
    end_section()
    return sections


def _dedent(fenced: str) -> str:
    """A fenced block indented as a list item's child, moved to the left margin."""
    lines = fenced.splitlines()
    indent = len(lines[0]) - len(lines[0].lstrip())
    if not indent:
        return fenced
    return "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines)
