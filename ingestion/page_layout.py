"""Layout that generators build out of lists and tables, read as what it is before a page
becomes Markdown (ingestion/extraction.py): a list item holding a section (Javadoc), a table
row that is a heading (Doxygen), a table around a code block (pydoctor)."""

from __future__ import annotations

from typing import Any

from lxml import etree

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def unwrap_layout_lists(region: Any) -> None:
    """A list item that holds a heading is layout, not a list (Javadoc nests every section in
    `<ul class="blockList"><li>`): it reads as a block, so its headings stay headings."""
    for item in list(region.iter("li")):
        if next(item.iter(*_HEADINGS), None) is not None:
            item.tag = "div"
    for listing in list(region.iter("ul", "ol")):
        if not any(getattr(child, "tag", None) == "li" for child in listing):
            listing.tag = "div"


def lift_table_headings(region: Any) -> None:
    """A table row that is only a heading is a heading (Doxygen opens each member group's
    table with one): it stands before the rows it heads, which go on as a table of their own."""
    for heading in list(region.iter(*_HEADINGS)):
        row = next((a for a in heading.iterancestors("tr")), None)
        table = next((a for a in heading.iterancestors("table")), None)
        if row is None or table is None or _words(row) != _words(heading):
            continue
        rows = table.xpath("./tr|./thead/tr|./tbody/tr|./tfoot/tr")
        if row not in rows:
            continue
        after = rows[rows.index(row) + 1 :]
        heading.getparent().remove(heading)  # its tail (white space in the cell) goes with it
        row.getparent().remove(row)
        heading.tail = None
        table.addnext(heading)
        if after:
            rest = etree.Element("table", dict(table.attrib))
            for moved in after:
                rest.append(moved)
            heading.addnext(rest)
        if not table.xpath(".//tr"):
            drop(table)


def unwrap_code_tables(region: Any) -> None:
    """A Markdown table cannot hold a code block or another table: a table whose cells hold
    one (pydoctor's "Value" box around a constant's value, a layout table around a data table
    as in Doxygen's own manual) reads as blocks, cell after cell; a table inside stays a table."""
    for table in list(region.iter("table")):
        if table.tag != "table" or not any(
            _owner(block) is table for block in table.iter("pre", "table") if block is not table
        ):
            continue
        parts = ("thead", "tbody", "tfoot", "tr", "td", "th", "caption")
        for part in [p for p in table.iter(*parts) if _owner(p) is table]:
            part.tag = "div"
        table.tag = "div"


def _owner(element: Any) -> Any:
    """The table an element belongs to: its nearest table ancestor."""
    return next(element.iterancestors("table"), None)


def _words(element: Any) -> str:
    return " ".join(element.text_content().split())


def drop(element: Any) -> None:
    """Remove an element but keep the text that follows it."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    previous = element.getprevious()
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)
