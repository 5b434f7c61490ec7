"""Reference entries a page marks without a heading: a configuration parameter, a PRAGMA, a
limit, a function or an option that a manual lists one after another, each at a place a link
can land on (`<a name="pragma_user_version"></a>` before a bold term; DocBook's
`<dt><a id="GUC-WORK-MEM"></a><span class="term">…`; an id'd target before a `<dt>`).

Such a place is an entry of its own: extraction marks it as an anchor, so the chunker starts a
piece there (assistant/rag/chunking/pieces.py) and a search hit or a citation lands on the
entry, not on the list's heading. An empty target before ordinary prose (Sphinx's index
targets, a link into the middle of a paragraph) is not an entry: only one followed by a term
(bold, code, a definition term) is."""

from __future__ import annotations

from typing import Any

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: Elements a manual sets its entry's name in.
_TERM_TAGS = frozenset({"b", "strong", "code", "tt", "kbd", "dt", "var"})


def entry_anchors(region: Any, is_hidden: Any) -> dict[Any, str]:
    """Each element that should carry an entry's anchor, with the anchor."""
    marked: dict[Any, str] = {}
    for element in region.iter():
        if not isinstance(element.tag, str) or _in_heading(element):
            continue
        if element.tag == "dt" and not element.get("id"):
            inner = _leading_target(element)
            if inner is not None:
                marked[element] = _name(inner)
            continue
        if element.tag != "a" or not _name(element) or _text(element):
            continue
        following = _next_shown(element, is_hidden)
        if following is None or following.tag in _HEADINGS:
            continue  # a heading's own place: extraction names it already
        if following.tag == "dt" and not following.get("id"):
            marked.setdefault(following, _name(element))
        elif _opens_with_term(following):
            marked[element] = _name(element)
    return marked


def _name(element: Any) -> str:
    return str(element.get("id") or (element.get("name") if element.tag == "a" else "") or "")


def _text(element: Any) -> str:
    return "".join(element.itertext()).strip()


def _in_heading(element: Any) -> bool:
    return element.tag in _HEADINGS or any(a.tag in _HEADINGS for a in element.iterancestors())


def _leading_target(term: Any) -> Any:
    """An empty target with a name at the very start of a definition term."""
    if (term.text or "").strip():
        return None
    for child in term:
        if not isinstance(child.tag, str):
            continue
        if _name(child) and not _text(child):
            return child
        return None
    return None


def _next_shown(element: Any, is_hidden: Any) -> Any:
    """The next element in reading order after `element` (its tail text counts: a target in
    running text is followed by words), skipping hidden ones and rules."""
    if (element.tail or "").strip():
        return element.getparent()
    node = element
    while node is not None:
        sibling = node.getnext()
        while sibling is not None and (
            not isinstance(sibling.tag, str) or is_hidden(sibling) or sibling.tag in ("hr", "br")
        ):
            if (sibling.tail or "").strip():
                return node.getparent()
            sibling = sibling.getnext()
        if sibling is not None:
            return sibling
        node = node.getparent()
    return None


def _opens_with_term(block: Any) -> bool:
    """The block (or its first child block) starts with a term: `<p><b>PRAGMA …`,
    `<li><p><b>Maximum Number Of Columns</b>`."""
    node = block
    for _ in range(3):
        if (node.text or "").strip():
            return node.tag in _TERM_TAGS
        first = next((c for c in node if isinstance(c.tag, str)), None)
        if first is None:
            return False
        if first.tag in _TERM_TAGS:
            return bool(_text(first))
        node = first
    return False
