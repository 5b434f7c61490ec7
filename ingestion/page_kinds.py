"""What kind of page a documentation page is, read from its structure rather than from one
generator's file names: a guide (prose a reader follows), an API reference (a run of
documented objects), a changelog (sections named by versions or dates), or a source listing
(a page that is one program text).

Source listings are not read by default: they repeat the reference in code and answer no
question in words. Reference and changelog pages are read, but a guide that answers as well
comes first (assistant/rag/retrieve/gate.py), and a changelog never answers a question about a
version it does not name (assistant/rag/judge/answerability.py)."""

from __future__ import annotations

import re
from typing import Any

GUIDE = ""
REFERENCE = "reference"
CHANGELOG = "changelog"
SOURCE = "source"

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: A heading that names a release: "5.2.0", "v2.28.1 (2022-06-29)", "Version 3.0",
#: "Release 1.4: Codename", "2022-06-29". A bare number followed by words is a section number
#: ("2.1 Overview", "5.6.1. Adding a Column": a manual's numbered headings), no release: after
#: a bare version only a date, a bracket, a dash or a release word may follow.
_RELEASE_HEADING = re.compile(
    r"^\s*(?:version|release|v)\s*\d+\.\d+"
    r"|^\s*\d+\.\d+(?:\.\d+)*(?:[a-z]+\d*)?"
    r"(?:\s*$|\s*[(\[\u2013\u2014:,-]|\s+\d{4}-\d{2}-\d{2}"
    r"|\s+(?:released?|final|beta|alpha|rc|lts)\b)"
    r"|^\s*\d{4}-\d{2}-\d{2}\b",
    re.IGNORECASE,
)
#: Share of the main text inside program blocks above which a page is a listing.
SOURCE_SHARE = 0.85
#: Share of the main text inside documented objects (definition terms with an id) above which
#: a page is an API reference.
REFERENCE_SHARE = 0.5
#: How many headings must name releases, and what share of all headings, for a changelog.
RELEASE_HEADINGS = 3
RELEASE_SHARE = 0.5


#: A page titled as release notes ("Change history for Celery 3.0", "What's new in 5.0",
#: "Release History", "Changelog", "NEWS").
_RELEASE_TITLE = re.compile(
    r"^\s*(change\s*log|changes\b|change history|release (notes|history)|what['’]s new|"
    r"news\b|history of changes|version history)",
    re.IGNORECASE,
)


def page_kind(region: Any, title: str = "") -> str:
    """The kind of the page whose main region (an lxml element, before cleaning) and title
    are given."""
    total = _text_length(region)
    if total == 0:
        return GUIDE
    programs = _outermost(region, _is_program)
    code = sum(_text_length(e) for e in programs)
    if code / total >= SOURCE_SHARE and _prose_sentences(region) < 5 and _is_listing(programs):
        return SOURCE
    headings = [" ".join(h.text_content().split()) for h in region.iter(*_HEADINGS)]
    releases = sum(1 for h in headings if _RELEASE_HEADING.match(h))
    if releases >= RELEASE_HEADINGS and releases / max(1, len(headings)) >= RELEASE_SHARE:
        return CHANGELOG
    if _RELEASE_TITLE.match(title or (headings[0] if headings else "")):
        return CHANGELOG
    documented = sum(_text_length(e) for e in _outermost(region, _is_documented_object))
    if documented / total >= REFERENCE_SHARE:
        return REFERENCE
    return GUIDE


def _text_length(element: Any) -> int:
    return len("".join(element.itertext()).split())


def _is_program(element: Any) -> bool:
    if element.tag == "pre":
        return True
    classes = str(element.get("class") or "")
    # Doxygen's and others' line-by-line listings: a block of one element per source line.
    return element.tag in ("div", "table") and any(
        name in classes.split() for name in ("fragment", "highlight", "sourcecode", "code")
    )


def _is_listing(programs: list[Any]) -> bool:
    """One program text as a generator lists a source file: its lines carry anchors (Doxygen's
    `l00012`, rustdoc's and Javadoc's line ids) or links into the documentation (Sphinx's
    `[docs]`). A chapter that shows its finished code (mdBook's "Final Code") has neither, and
    an API page of many members each with its source (RDoc) is no one program text."""
    lengths = [_text_length(e) for e in programs]
    largest = programs[lengths.index(max(lengths))] if lengths else None
    if largest is None or max(lengths) < sum(lengths) / 2:
        return False
    return any(
        e.get("id") or e.get("name") or (e.tag == "a" and e.get("href"))
        for e in largest.iter()
        if e is not largest and isinstance(e.tag, str)
    ) or _has_line_numbers(largest)


def _has_line_numbers(program: Any) -> bool:
    """Line numbers beside the code in a block of their own (rustdoc's src-line-numbers)."""
    parent = program.getparent()
    siblings = [] if parent is None else [e for e in parent if e is not program]
    return any(
        isinstance(s.tag, str)
        and "".join(s.text_content().split()).isdigit()
        and any(e.get("id") for e in s.iter() if isinstance(e.tag, str))
        for s in siblings
    )


def _is_documented_object(element: Any) -> bool:
    """A definition list whose terms carry ids: Sphinx's API entries, Javadoc's and
    pydoctor's member lists."""
    if element.tag != "dl":
        return False
    terms = [t for t in element if getattr(t, "tag", None) == "dt"]
    return bool(terms) and all(t.get("id") or t.find(".//*[@id]") is not None for t in terms)


def _outermost(region: Any, wanted: Any) -> list[Any]:
    found: list[Any] = []

    def walk(element: Any) -> None:
        for child in element:
            if not isinstance(child.tag, str):
                continue
            if wanted(child):
                found.append(child)
            else:
                walk(child)

    walk(region)
    return found


_SENTENCE = re.compile(r"[A-Za-z][^.!?]{20,}[.!?](?:\s|$)")


def _prose_sentences(region: Any) -> int:
    """Sentences outside program blocks."""
    count = 0
    for element in region.iter("p", "li", "dd"):
        if any(_is_program(a) for a in element.iterancestors()):
            continue
        count += len(_SENTENCE.findall(" ".join(element.text_content().split())))
    return count
