"""What extraction and chunking kept of each crawled page, measured against the page's own
HTML (the reader's view of it), so no measure trusts the extractor it measures:

- anchors_valid: of the chunk URLs with a #fragment, the share whose fragment is an id (or an
  <a name>) on the page: a citation link lands on its section.
- headings_kept: of the page's h1–h4 that a reader sees (not in navigation, not hidden), the
  share that is the document's title or a heading on some chunk's heading path.
- code_blocks_kept: of the page's visible <pre> blocks, the share whose lines survive
  intact, in order, in the page's chunks (in one chunk, or run on across the next ones when
  the block is longer than a chunk).
- text_kept: of the page's visible paragraphs, list items, definitions and table cells (20
  characters or more), the share whose every sentence is found in the page's chunks: what
  the reader can see is what the assistant can quote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ingestion.extraction import html_tree, is_hidden, is_navigation, strip_permalink_glyphs

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_MARKUP = re.compile(r"[`*\\]|\*\*|__")
_ANCHOR_LINE = re.compile(r"^\{#[^}\s]+\}$")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
#: Markdown's quotation markers at the start of a line ("> " before each line of a quote).
_QUOTE_MARKERS = re.compile(r"^[ \t]*(?:>(?:[ \t]|$))+", re.MULTILINE)
MIN_TEXT_CHARS = 20


@dataclass(frozen=True, slots=True)
class PageChunk:
    url: str
    heading_path: str
    text: str
    title: str = ""


@dataclass(slots=True)
class PageFigures:
    anchors: int = 0
    anchors_valid: int = 0
    chunks: int = 0
    headings: int = 0
    headings_kept: int = 0
    code_blocks: int = 0
    code_blocks_kept: int = 0
    texts: int = 0
    texts_kept: int = 0


def extraction_report(
    *, pages: Mapping[str, Sequence[PageChunk]], html: Mapping[str, str]
) -> dict[str, Any]:
    """Shares over all pages (each element counted once), plus the pages that lost most."""
    totals = PageFigures()
    worst: list[tuple[float, str, dict[str, Any]]] = []
    for url, chunks in pages.items():
        if url not in html:
            continue
        figures, missing = page_figures(html[url], chunks)
        for name in PageFigures.__dataclass_fields__:
            setattr(totals, name, getattr(totals, name) + getattr(figures, name))
        lost = (figures.headings - figures.headings_kept) + (
            figures.code_blocks - figures.code_blocks_kept
        )
        if lost:
            worst.append((lost, url, missing))
    worst.sort(key=lambda row: -row[0])
    return {
        "pages": len(html),
        "chunks": totals.chunks,
        "anchored": _share(totals.anchors, totals.chunks),
        "anchors_valid": _share(totals.anchors_valid, totals.anchors),
        "headings_kept": _share(totals.headings_kept, totals.headings),
        "code_blocks_kept": _share(totals.code_blocks_kept, totals.code_blocks),
        "text_kept": _share(totals.texts_kept, totals.texts),
        "counts": {
            "headings": totals.headings,
            "code_blocks": totals.code_blocks,
            "texts": totals.texts,
        },
        "worst_pages": [{"url": url, **missing} for _, url, missing in worst[:10]],
    }


def page_figures(html: str, chunks: Sequence[PageChunk]) -> tuple[PageFigures, dict[str, Any]]:
    tree = html_tree(html)
    visible = [e for e in tree.iter() if isinstance(e.tag, str) and not _skipped(e)]
    ids = {e.get("id") for e in tree.iter() if isinstance(e.tag, str) and e.get("id")} | {
        e.get("name") for e in tree.iter("a") if e.get("name")
    }
    figures = PageFigures(chunks=len(chunks))
    missing: dict[str, list[str]] = {"headings": [], "code_blocks": [], "anchors": []}
    for chunk in chunks:
        fragment = chunk.url.partition("#")[2]
        if fragment:
            figures.anchors += 1
            if fragment in ids:
                figures.anchors_valid += 1
            elif len(missing["anchors"]) < 5:
                missing["anchors"].append(fragment)

    # A heading that kept its permalink glyph ("Programming FAQ¶") is damaged but kept.
    path_headings = {
        _norm(strip_permalink_glyphs(h)) for c in chunks for h in c.heading_path.split(" > ") if h
    }
    path_headings |= {_norm(strip_permalink_glyphs(c.title)) for c in chunks}
    for element in visible:
        if element.tag in ("h1", "h2", "h3", "h4"):
            text = _norm(strip_permalink_glyphs(element.text_content()))
            if not text:
                continue
            figures.headings += 1
            if text in path_headings:
                figures.headings_kept += 1
            elif len(missing["headings"]) < 5:
                missing["headings"].append(text)

    chunk_lines = [_code_lines(c.text) for c in chunks]
    all_lines = [line for lines in chunk_lines for line in lines]
    for element in visible:
        if element.tag != "pre":
            continue
        block = [line.rstrip() for line in element.text_content().strip("\n").splitlines()]
        block = [line for line in block if line.strip()]
        if not block:
            continue
        figures.code_blocks += 1
        if any(_contains(lines, block) for lines in chunk_lines) or _contains(all_lines, block):
            figures.code_blocks_kept += 1
        elif len(missing["code_blocks"]) < 3:
            missing["code_blocks"].append(block[0][:80])

    flat = _flat(" ".join(_QUOTE_MARKERS.sub("", c.text) for c in chunks))
    for element in visible:
        if element.tag in ("p", "li", "dd", "td") and not _has_block_child(element):
            text = element.text_content()
            if len(_flat(text)) >= MIN_TEXT_CHARS:
                figures.texts += 1
                # Sentence by sentence: a long paragraph is cut between chunks, and the
                # sentence one chunk repeats from the last would break a whole-text match.
                figures.texts_kept += all(_flat(s) in flat for s in _SENTENCES.split(text))
    return figures, {k: v for k, v in missing.items() if v}


def _skipped(element: Any) -> bool:
    """Hidden, navigation, or inside either."""
    return any(is_hidden(e) or is_navigation(e) for e in _self_and_ancestors(element))


def _self_and_ancestors(element: Any) -> Iterable[Any]:
    while element is not None:
        yield element
        element = element.getparent()


#: Blocks that make their parent a container rather than a text of its own (a Javadoc list
#: item that holds a whole section with its heading).
_BLOCKS = frozenset(
    {"p", "ul", "ol", "dl", "pre", "table", "div", "section", "article", "blockquote",
     "h1", "h2", "h3", "h4", "h5", "h6"}
)  # fmt: skip


def _has_block_child(element: Any) -> bool:
    return any(isinstance(c.tag, str) and c.tag in _BLOCKS for c in element)


def _code_lines(text: str) -> list[str]:
    """A chunk's lines without its fences and anchor lines. A fence opens a block and only a
    fence of its own kind, at least as long, closes it: the lines of a block that shows
    Markdown ("```python" in MkDocs' guide to writing docs) stay lines of the block."""
    lines: list[str] = []
    fence = ""
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match:
            marker = re.match(r"`+|~+", line.strip())
            run = marker.group(0) if marker else match.group(1)
            if not fence:
                fence = run
                continue
            if run[0] == fence[0] and len(run) >= len(fence) and line.strip() == run:
                fence = ""
                continue
        if line.strip() and (fence or not _ANCHOR_LINE.match(line.strip())):
            lines.append(line.rstrip())
    return lines


def _contains(lines: Sequence[str], block: Sequence[str]) -> bool:
    """`block` as a contiguous run of `lines` (code indentation may differ by the fence's)."""
    if len(block) > len(lines):
        return False
    stripped = [line.strip() for line in lines]
    wanted = [line.strip() for line in block]
    first = wanted[0]
    return any(
        stripped[i : i + len(wanted)] == wanted
        for i, line in enumerate(stripped[: len(stripped) - len(wanted) + 1])
        if line == first
    )


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _flat(text: str) -> str:
    """Text with Markdown's inline markup and all white space taken out, for comparing what
    a reader sees with what a chunk holds."""
    return "".join(_INLINE_MARKUP.sub("", text).split()).casefold()


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None
