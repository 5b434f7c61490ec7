"""What a reader sees of a web page, as Markdown that keeps the page's structure.

The page's main region (<main>, role=main, a lone <article>, else the body without its
banners, navigation and footers) is cleaned of what a reader never sees (hidden elements,
templates, scripts, permalink glyphs, in-page tables of contents) and converted by
markdownify (ingestion/page_markdown.py): headings stay headings, <pre> blocks stay whole and
fenced, tables become Markdown tables, definition lists keep their terms.

Anchors are the page's own ids, so a citation lands on its section: each heading carries
`{#id}` (the id its permalink points at, its own, or that of the section it opens), and a
definition term with an id (an API entry) is preceded by a `{#id}` line. The chunker reads
both and gives each chunk the nearest id at or above its start.

Measured on the Python 3.11 docs (`evaluate --site`) against trafilatura, which this
replaces: see the README's "Documentation websites" section.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any

import lxml.html
from lxml import etree

from ingestion.page_entries import entry_anchors
from ingestion.page_kinds import page_kind
from ingestion.page_layout import drop as _drop
from ingestion.page_layout import lift_table_headings, unwrap_code_tables, unwrap_layout_lists
from ingestion.page_markdown import (
    ANCHOR_ATTRIBUTE,
    is_permalink_glyph,
    region_markdown,
    strip_permalink_glyphs,
)

__all__ = [
    "EXTRACTION_VERSION",
    "ExtractedPage",
    "anchor_aliases",
    "decode_page",
    "extract_page",
    "html_tree",
    "is_hidden",
    "is_navigation",
    "main_region",
    "strip_permalink_glyphs",
]

#: Changes whenever extraction would turn the same page into other text: a crawl then reads
#: every page again instead of trusting its HTTP validators (ETag, Last-Modified).
EXTRACTION_VERSION = "9"

#: Landmarks a reader skips: site navigation, banners, footers, search, side panels.
_NAVIGATION_TAGS = frozenset({"nav", "header", "footer", "aside"})
_NAVIGATION_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "complementary"})
_HIDDEN_STYLE = re.compile(r"(display\s*:\s*none|visibility\s*:\s*hidden)", re.IGNORECASE)
_NEVER_SHOWN = frozenset({"template", "noscript", "script", "style"})
#: Nothing to read in these (controls, media, embedded frames).
_NOT_TEXT = frozenset(
    {"button", "form", "input", "select", "textarea", "svg", "img", "picture", "video",
     "audio", "iframe", "object", "canvas", "map", "link", "meta"}
)  # fmt: skip
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


#: An XML declaration (XHTML from asciidoc, DocBook, older Javadoc): lxml refuses a decoded
#: string that still carries one.
_XML_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")
#: The encoding a page declares in its first bytes: in an XML declaration or a <meta> charset.
_DECLARED_ENCODING = re.compile(
    rb"""<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._:-]+)|<meta[^>]*charset\s*=\s*["']?([A-Za-z0-9._:-]+)""",
    re.IGNORECASE,
)
#: Links a generator adds beside an API entry to its highlighted source (Sphinx's viewcode
#: "[source]", pydoctor's and others' "source"): noise in a quote and in a search.
_SOURCE_LINK_TEXTS = frozenset({"[source]", "source", "[src]", "[view source]"})


def decode_page(body: bytes, charset: str | None = None) -> str:
    """A page's text in its own encoding: the HTTP header's charset, else the one the page
    declares (an XML declaration or a <meta> charset), else UTF-8."""
    for name in (charset, _declared(body[:2048]), "utf-8"):
        if name:
            try:
                codecs.lookup(name)
            except LookupError:
                continue
            return body.decode(name, "replace")
    return body.decode("utf-8", "replace")  # pragma: no cover - utf-8 always exists


def _declared(head: bytes) -> str | None:
    match = _DECLARED_ENCODING.search(head)
    if not match:
        return None
    return (match.group(1) or match.group(2)).decode("ascii", "replace")


def html_tree(source: str) -> Any:
    """The page's element tree, XHTML with an XML declaration included."""
    return lxml.html.fromstring(_XML_DECLARATION.sub("", source, count=1))


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    title: str
    markdown: str
    #: ingestion/page_kinds.py: "" (a guide), "reference", "changelog" or "source".
    kind: str = ""


def is_hidden(element: Any) -> bool:
    """Never shown to a reader: `hidden`, `aria-hidden`, an inline display:none or
    visibility:hidden, <template>, <noscript>, scripts and styles."""
    if element.tag in _NEVER_SHOWN:
        return True
    if element.get("hidden") is not None or element.get("aria-hidden") == "true":
        return True
    return bool(_HIDDEN_STYLE.search(element.get("style") or ""))


def is_navigation(element: Any) -> bool:
    return element.tag in _NAVIGATION_TAGS or (element.get("role") or "") in _NAVIGATION_ROLES


def extract_page(html: str | Any, *, fallback_title: str = "") -> ExtractedPage:
    """The page's title and main content as Markdown (empty when there is nothing to read).
    `html` is the page's source or an lxml tree of it (which is changed)."""
    tree = html_tree(html) if isinstance(html, str) else html
    region = main_region(tree)
    page_title = _own_title(region, _page_title(tree))
    kind = page_kind(region, _first_heading(region) or page_title)
    ids = _ids(tree)
    _mark_anchors(region, ids)
    _clean(region, inside_main=region.tag != "body")
    unwrap_layout_lists(region)
    lift_table_headings(region)
    unwrap_code_tables(region)
    title = _named_by(region, page_title) or fallback_title
    html_region = etree.tostring(region, encoding="unicode", method="html")
    return ExtractedPage(title=title, markdown=region_markdown(html_region, title=title), kind=kind)


def main_region(tree: Any) -> Any:
    for path in ("//main", '//*[@role="main"]'):
        found = [e for e in tree.xpath(path) if not _in_hidden(e)]
        if found:
            return found[0]
    articles = [e for e in tree.xpath("//article") if not _in_hidden(e)]
    if len(articles) == 1:
        return articles[0]
    body = tree.find("body") if tree.tag == "html" else None
    return body if body is not None else tree


def _in_hidden(element: Any) -> bool:
    while element is not None:
        if isinstance(element.tag, str) and is_hidden(element):
            return True
        element = element.getparent()
    return False


def _page_title(tree: Any) -> str:
    for text in tree.xpath("//head/title/text()"):
        if text.strip():
            return " ".join(text.split())
    return ""


def _named_by(region: Any, page_title: str) -> str:
    """The page's name: its h1, or its <title> when it has several h1s, each a numbered part
    of the page ("1. Overview", "2. ALTER TABLE RENAME"), none of them the page's name."""
    tops = {
        " ".join(strip_permalink_glyphs(h.text_content()).split())
        for h in region.iter("h1")
        if h.text_content().strip()
    }
    if len(tops) > 1 and page_title:
        return page_title
    return _first_heading(region) or page_title


def _first_heading(region: Any, levels: tuple[str, ...] = ("h1",)) -> str:
    for heading in region.iter(*levels):
        text = " ".join(strip_permalink_glyphs(heading.text_content()).split())
        if text:
            return text
    return ""


#: What stands between a page's own name and the site's in its <title>: "Tasks — Celery 5.2
#: documentation", "Variables and Mutability - The Rust Programming Language", "Intro | Docs".
_TITLE_PARTS = re.compile(r"\s+(?:[-\u2013\u2014|\u00b7:\u00bb/]{1,2})\s+")


def _own_title(region: Any, page_title: str) -> str:
    """The page's own name where its <title> adds the site's: a page whose top heading is not
    an h1 (mdBook's chapters start at h2) is named by that heading when the <title> is that
    heading and the site's name, so every chunk's path does not carry the site's name and the
    heading is not repeated under it ("Variables and Mutability - The Rust Programming
    Language > Variables and Mutability")."""
    first = _first_heading(region, _HEADINGS)
    parts = {part.casefold() for part in _TITLE_PARTS.split(page_title)}
    if first and len(parts) > 1 and first.casefold() in parts:
        return first
    return page_title


def _ids(tree: Any) -> set[str]:
    ids = {e.get("id") for e in tree.iter() if isinstance(e.tag, str) and e.get("id")}
    return ids | {e.get("name") for e in tree.iter("a") if e.get("name")}


def _mark_anchors(region: Any, ids: set[str]) -> None:
    """Each heading (and definition term with an id) gets the id a link to it should use."""
    for heading in region.iter(*_HEADINGS):
        anchor = _heading_anchor(heading, ids)
        if anchor:
            heading.set(ANCHOR_ATTRIBUTE, anchor)
    for term in region.iter("dt"):
        if term.get("id"):
            term.set(ANCHOR_ATTRIBUTE, term.get("id"))
    for element, anchor in entry_anchors(region, is_hidden).items():
        element.set(ANCHOR_ATTRIBUTE, anchor)
    if region.find(f".//*[@{ANCHOR_ATTRIBUTE}]") is None:
        # No heading here has a place of its own (Javadoc's "Uses of Class" pages): the first
        # is cited at the nearest place before it (the skip link's target before the content)
        # rather than at a name made up from its words, which the page does not have.
        first = next((h for h in region.iter(*_HEADINGS) if not _in_hidden(h)), None)
        place = _place_before(first) if first is not None else None
        if first is not None and place is not None:
            first.set(ANCHOR_ATTRIBUTE, str(place.get("id") or _link_name(place)))


def _place_before(element: Any) -> Any:
    """The nearest element before this one, in the page's body and shown, that a link can
    land on."""
    for candidate in reversed(element.xpath("preceding::*[@id or self::a[@name]]")):
        if candidate.xpath("ancestor::body") and not _in_hidden(candidate):
            return candidate
    return None


def _heading_anchor(heading: Any, ids: set[str]) -> str:
    # 1. the id its permalink points at: the page itself says where this heading is
    for link in heading.iter("a"):
        target = (link.get("href") or "").partition("#")[2]
        if _is_permalink(link) and target in ids:
            return str(target)
    # 2. its own id, or one inside it (<h2><a name="x"></a>...</h2>)
    if heading.get("id"):
        return str(heading.get("id"))
    for inner in heading.iter():
        if inner is not heading and (inner.get("id") or inner.get("name")):
            return str(inner.get("id") or inner.get("name"))
    # 3. the section it opens: the nearest ancestor with an id whose first heading it is
    parent = heading.getparent()
    while parent is not None:
        first = next(parent.iter(*_HEADINGS), None)
        if first is not heading:
            break
        if parent.get("id"):
            return str(parent.get("id"))
        parent = parent.getparent()
    # 4. an empty target just before it (<span id="x"></span><h2>)
    previous = heading.getprevious()
    target = None if previous is None else previous.get("id") or _link_name(previous)
    if target and not previous.text_content().strip():
        return str(target)
    return ""


def _link_name(element: Any) -> str:
    """The name of an <a name="..."> target (pydoctor's, Doxygen's, older HTML's)."""
    return str(element.get("name") or "") if element.tag == "a" else ""


def anchor_aliases(tree: Any) -> dict[str, str]:
    """Every id that marks a heading's place (its permalink's target, its own id and those
    inside it, the section it opens, empty targets just before it), mapped to the anchor
    extraction gives that place: two names of one section are one section."""
    ids = _ids(tree)
    aliases: dict[str, str] = {}
    for heading in tree.iter(*_HEADINGS):
        anchor = _heading_anchor(heading, ids)
        if anchor:
            for name in _place_ids(heading, ids):
                aliases.setdefault(name, anchor)
    return aliases


def _place_ids(heading: Any, ids: set[str]) -> list[str]:
    names = [(link.get("href") or "").partition("#")[2] for link in heading.iter("a")]
    names = [n for n in names if n in ids]
    names += [
        str(e.get("id") or e.get("name")) for e in heading.iter() if e.get("id") or e.get("name")
    ]
    opened = [heading]  # the heading and the sections it opens
    parent = heading.getparent()
    while parent is not None and next(parent.iter(*_HEADINGS), None) is heading:
        opened.append(parent)
        names += [str(parent.get("id"))] if parent.get("id") else []
        parent = parent.getparent()
    for element in opened:
        previous = element.getprevious()
        while previous is not None and (previous.get("id") or previous.get("name")):
            if previous.text_content().strip():
                break
            names.append(str(previous.get("id") or previous.get("name")))
            previous = previous.getprevious()
    return names


def _clean(region: Any, *, inside_main: bool) -> None:
    doomed = []
    for element in region.iter():
        if not isinstance(element.tag, str):  # comments, processing instructions
            doomed.append(element)
        elif element is region:
            continue
        elif is_hidden(element) or element.tag in _NOT_TEXT:
            doomed.append(element)
        elif is_navigation(element) and not (inside_main and element.tag == "header"):
            doomed.append(element)
        elif element.tag == "a" and (_is_permalink(element) or _is_source_link(element)):
            doomed.append(element)
    for element in doomed:
        _drop(element)


def _is_permalink(link: Any) -> bool:
    text = link.text_content().strip()
    return link.get("href", "").startswith("#") and all(map(is_permalink_glyph, text))


def _is_source_link(link: Any) -> bool:
    """A link to an API entry's source listing ("[source]"), not part of what it says."""
    text = " ".join(link.text_content().split()).lower()
    return (
        text in _SOURCE_LINK_TEXTS
        and "viewcode"
        in (
            f"{link.get('class', '')} {link.get('href', '')} "
            + " ".join(str(e.get("class", "")) for e in link.iter())
        )
        or (text in _SOURCE_LINK_TEXTS and "/_modules/" in link.get("href", ""))
    )
