"""A cleaned page region as Markdown (ingestion/extraction.py prepares the region): headings
keep their anchors as `{#id}`, <pre> blocks stay whole and fenced with their language, tables
become Markdown tables, definition terms stand on lines of their own, link targets go."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from markdownify import ATX, MarkdownConverter

#: Where extraction writes the id a heading or a definition term is cited at; the converter
#: reads it back.
ANCHOR_ATTRIBUTE = "data-askdocs-anchor"
#: Link glyphs that documentation generators put after a heading to link to it.
_PERMALINK_GLYPHS = "¶#§🔗"
_LANGUAGE = re.compile(r"\b(?:highlight|language|lang)-([A-Za-z0-9_+#.-]+)")


def is_permalink_glyph(char: str) -> bool:
    """A permalink sign, or an icon font's character (MkDocs' themes link a heading with
    Font Awesome's U+F0C1, from Unicode's private use area, which no text uses)."""
    return char in _PERMALINK_GLYPHS or unicodedata.category(char) == "Co"


def strip_permalink_glyphs(text: str) -> str:
    text = text.strip()
    while text and (is_permalink_glyph(text[-1]) or text[-1] in " \u00a0"):
        text = text[:-1]
    return text.strip()


def region_markdown(html: str, *, title: str) -> str:
    """The region's HTML as tidy Markdown, without a first heading that repeats `title`."""
    return _drop_title_heading(_tidy(_Converter().convert(html)), title)


class _Converter(MarkdownConverter):
    def __init__(self) -> None:
        super().__init__(
            heading_style=ATX, bullets="-", escape_asterisks=False, escape_underscores=False,
            escape_misc=False, table_infer_header=True, strip_pre="strip", bs4_options="lxml",
            code_language_callback=_language,
        )  # fmt: skip

    def convert_hN(self, n: int, el: Any, text: str, parent_tags: set[str]) -> str:  # noqa: N802
        # Plain text: a heading is a chunk's breadcrumb, shown and embedded as it reads.
        text = strip_permalink_glyphs(" ".join(el.get_text().split()))
        if "_inline" in parent_tags or not text:
            return text
        anchor = el.get(ANCHOR_ATTRIBUTE)
        return f"\n\n{'#' * max(1, min(6, n))} {text}{f' {{#{anchor}}}' if anchor else ''}\n\n"

    def convert_p(self, el: Any, text: str, parent_tags: set[str]) -> str:
        # A line of a paragraph that starts with "#" (a comment in prose, pydoctor's doctests
        # written as text) is no heading: it is escaped, or the chunker would read one.
        return _LINE_HASH.sub(r"\1\\\2", super().convert_p(el, text, parent_tags))  # type: ignore[misc]

    def convert_dt(self, el: Any, text: str, parent_tags: set[str]) -> str:
        """The term on a line of its own (preceded by its `{#id}` line when it has an id),
        its definition following as `:   ...` (markdownify's convert_dd)."""
        # An API entry's signature reads as written, without the emphasis markup of its
        # parts ("class celery.app.task.Task(*args, **kwargs)", not "*class* ...(**args*)").
        text = " ".join(strip_permalink_glyphs(el.get_text()).split())
        if "_inline" in parent_tags:
            return f" {text} "
        if not text:
            return "\n"
        anchor = el.get(ANCHOR_ATTRIBUTE)
        return f"\n\n{{#{anchor}}}\n{text}\n" if anchor else f"\n\n{text}\n"

    def convert_blockquote(self, el: Any, text: str, parent_tags: set[str]) -> str:
        """Generators indent with <blockquote> (Sphinx does): one that holds code, a table or
        a list is indentation, not a quotation, and its blocks stay plain Markdown blocks."""
        text = text.strip()
        if el.find(["pre", "table", "ul", "ol", "dl"]) is not None or not text:
            return f"\n\n{text}\n\n" if text else ""
        quoted = "\n".join(f"> {line}" if line else ">" for line in text.splitlines())
        return f"\n\n{quoted}\n\n"

    def convert_a(self, el: Any, text: str, parent_tags: set[str]) -> str:
        anchor = el.get(ANCHOR_ATTRIBUTE)
        if anchor and not text.strip():
            # A reference entry's place (ingestion/page_entries.py): its blocks carry its anchor.
            return f"\n\n{{#{anchor}}}\n\n"
        return text  # link targets are noise to a search and to a quote

    def convert_pre(self, el: Any, text: str, parent_tags: set[str]) -> str:
        code = el.get_text().strip("\n")
        if not code.strip():
            return ""
        fence = "````" if "```" in code else "```"
        return f"\n\n{fence}{_language(el) or ''}\n{code}\n{fence}\n\n"


def _language(el: Any) -> str | None:
    """A code block's language from its class, its code element's or its wrappers' (Sphinx's
    highlight-python3, highlight.js's language-js)."""
    nodes = [el.find("code"), el, el.parent, el.parent.parent if el.parent else None]
    for node in nodes:
        classes = node.get("class") if node is not None else None
        if classes:
            match = _LANGUAGE.search(" ".join(classes) if isinstance(classes, list) else classes)
            if match:
                return match.group(1)
    return None


_BLANK_RUNS = re.compile(r"\n{3,}")
_LINE_HASH = re.compile(r"^([ \t]*)(#{1,6}(?:[ \t]|$))", re.MULTILINE)


def _tidy(markdown: str) -> str:
    lines = [line.rstrip() for line in markdown.splitlines()]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip() + "\n"


_FIRST_HEADING = re.compile(r"^#{1,6}\s+(.*?)(?:\s+\{#([^}\s]+)\})?$", re.MULTILINE)


def _drop_title_heading(markdown: str, title: str) -> str:
    """The page title is already the document title; its heading would repeat it in every
    chunk's heading path ("Calling Tasks > Calling Tasks > Routing options"). The first heading
    of the page is dropped when it is the title, wherever it stands (a version banner or a
    breadcrumb may come before it); its anchor stays, as the place's anchor."""
    match = _FIRST_HEADING.search(markdown)
    if match and match.group(1).strip() == title.strip():
        anchor = f"{{#{match.group(2)}}}" if match.group(2) else ""
        before, after = markdown[: match.start()], markdown[match.end() :]
        return (
            (before + anchor + after).lstrip("\n")
            if before.strip()
            else (anchor + "\n\n" + after.lstrip("\n") if anchor else after.lstrip("\n"))
        )
    return markdown
