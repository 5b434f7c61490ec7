"""Pages of every kind a documentation generator writes, read as a browser would, against a real
local web server: XHTML with an XML declaration (asciidoc, DocBook, Javadoc), a Sphinx source
listing (not read by default), a changelog and an API reference (read, and known as such)."""

from __future__ import annotations

import re

import lxml.html
import pytest

from ingestion.extraction import decode_page, extract_page
from ingestion.models import Document
from ingestion.page_kinds import CHANGELOG, REFERENCE, SOURCE, page_kind
from ingestion.sync import source_sync
from tests.ingestion.conftest import docs_source
from tests.ingestion.site_server import page

pytestmark = pytest.mark.django_db

XHTML = """<?xml version="1.0" encoding="ISO-8859-1"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head><title>git-stash(1)</title></head>
<body><div id="header"><h1>git-stash(1) Manual Page</h1></div>
<div id="content"><div class="sect1"><h2 id="_description">DESCRIPTION</h2>
<div class="paragraph"><p>Use git stash when you want to record the current state of the
working directory and the index, but want to go back to a clean working directory.
Caf\xe9.</p></div>
</div></div></body></html>"""

#: Sphinx's viewcode: the module's text, each documented object linked back to its entry.
LISTING = page(
    "Source code for acme.tasks",
    "<div class='highlight'><pre>"
    + "\n".join(
        f"<div class='viewcode-block' id='task_{n}'><a class='viewcode-back' "
        f"href='../../api.html#acme.tasks.task_{n}'>[docs]</a>def task_{n}(x):\n"
        f"    return x + {n}</div>\n"
        for n in range(40)
    )
    + "</pre></div>",
)
CHANGELOG_PAGE = page(
    "Release History",
    "".join(
        f"<section id='v{n}'><h2>2.{n}.0 (2022-0{n % 9 + 1}-01)</h2><ul><li>Fixed bug {n} in the "
        f"session code.</li></ul></section>"
        for n in range(6)
    ),
)
REFERENCE_PAGE = page(
    "acme.client",
    "<p>The client module.</p>"
    + "".join(
        f"<dl class='py method'><dt id='acme.Client.m{n}'>m{n}(<em>x</em>)"
        f"<a class='reference internal' href='_modules/acme/client.html#m{n}'>"
        f"<span class='viewcode-link'><span class='pre'>[source]</span></span></a></dt>"
        f"<dd><p>Method number {n} sends the request and returns its answer.</p></dd></dl>"
        for n in range(6)
    ),
)


def test_an_xhtml_page_with_an_xml_declaration_is_read_in_its_own_encoding() -> None:
    body = XHTML.encode("iso-8859-1")
    text = decode_page(body)  # no charset in the HTTP header: the declaration says it
    read = " ".join(extract_page(text).markdown.split())
    assert "record the current state of the working directory and the index" in read
    assert "Café." in read


def test_page_kinds_come_from_the_structure() -> None:
    kinds = {}
    for name, html in (("listing", LISTING), ("changelog", CHANGELOG_PAGE),
                       ("reference", REFERENCE_PAGE)):  # fmt: skip
        kinds[name] = extract_page(html).kind
    assert kinds == {"listing": SOURCE, "changelog": CHANGELOG, "reference": REFERENCE}
    guide = lxml.html.fromstring(page("Guide", "<p>Install it. Then run it.</p>"))
    assert page_kind(guide, "Guide") == ""


def test_an_api_entry_reads_as_its_signature_without_source_links() -> None:
    markdown = extract_page(REFERENCE_PAGE).markdown
    assert "[source]" not in markdown and "_modules" not in markdown
    assert "m3(x)\n:   Method number 3 sends the request" in markdown


def test_the_title_heading_is_not_repeated_after_a_version_banner() -> None:
    html = (
        "<html><head><title>Calling Tasks — Acme 5.2 documentation</title></head><body>"
        "<div role='main'><div class='admonition'><p>This document describes the current "
        "stable version.</p></div><section id='calling-tasks'><h1>Calling Tasks</h1>"
        "<section id='routing'><h2>Routing options</h2><p>Route tasks to queues.</p>"
        "</section></section></div></body></html>"
    )
    extracted = extract_page(html)
    assert extracted.title == "Calling Tasks"
    assert "# Calling Tasks" not in extracted.markdown
    assert "## Routing options {#routing}" in extracted.markdown


def test_a_site_of_every_kind_is_read_and_its_source_listing_is_skipped(  # noqa: ANN001
    site, store, project
) -> None:
    (site.root / "docs/stash.html").write_bytes(XHTML.encode("iso-8859-1"))
    site.write("docs/listing.html", LISTING)
    (site.root / "docs/_modules/acme").mkdir(parents=True)
    site.write("docs/_modules/acme/client.html", LISTING)
    site.write("docs/history.html", CHANGELOG_PAGE)
    site.write("docs/client.html", REFERENCE_PAGE)
    index = (site.root / "docs/index.html").read_text()
    links = "".join(
        f'<li><a href="{n}">{n}</a></li>'
        for n in ("stash.html", "listing.html", "_modules/acme/client.html", "history.html",
                  "client.html")
    )  # fmt: skip
    site.write("docs/index.html", index.replace("</ul>", links + "</ul>"))
    source = docs_source(project, site)

    run = source_sync(source=source)

    kinds = dict(Document.objects.filter(source=source).values_list("url", "kind"))
    by_name = {url.rsplit("/", 1)[-1]: kind for url, kind in kinds.items()}
    assert by_name["stash.html"] == ""  # read, every word of it
    stash = Document.objects.get(source=source, url__endswith="stash.html")
    assert "Café" in stash.chunks.first().text
    assert by_name["history.html"] == CHANGELOG and by_name["client.html"] == REFERENCE
    assert "listing.html" not in by_name and "client.html" in by_name
    reasons = {s["url"].rsplit("/", 1)[-1]: s["reason"] for s in run.changes["skipped"]}
    assert reasons["listing.html"] == "a source code listing (not read by default)"
    assert "excluded by the pattern */_modules/*" in reasons.values()
    # The fixture's one broken page is the only failure: every page of every kind was read.
    assert [e["url"].rsplit("/", 1)[-1] for e in run.errors] == ["broken.html"]


def test_the_chunks_around_a_passage_in_its_section_are_read_in_order(site, store, project) -> None:  # noqa: ANN001
    from ingestion.models import Chunk
    from ingestion.selectors import chunks_by_vector_id, section_chunks

    long_section = "".join(
        f"<p>Step {n}: the scheduler keeps its state in a small local file, and it reads the "
        f"file again on every start of the worker process number {n}.</p>"
        for n in range(30)
    )
    site.write(
        "docs/schedule.html",
        page("Scheduling", f"<section id='every'><h2>Every few seconds</h2>{long_section}"
             "</section><section id='other'><h2>Other</h2><p>Unrelated words here.</p>"
             "</section>"),
    )  # fmt: skip
    index = (site.root / "docs/index.html").read_text()
    site.write("docs/index.html", index.replace("</ul>", '<li><a href="schedule.html">S</a></ul>'))
    source = docs_source(project, site)
    source_sync(source=source)
    rows = list(
        Chunk.objects.filter(document__source=source, url__endswith="#every").order_by("ordinal")
    )
    assert len(rows) >= 3
    first = chunks_by_vector_id([rows[0].vector_id])[rows[0].vector_id]

    after = section_chunks([first], depth=2)

    assert [c.id for c in after] == [rows[1].vector_id, rows[2].vector_id]
    last = chunks_by_vector_id([rows[-1].vector_id])[rows[-1].vector_id]
    # The chunk before the last is read too (what its first sentence points back to); the
    # next section is not this one's.
    assert [c.id for c in section_chunks([last])] == [rows[-2].vector_id]
    assert section_chunks([last], before=0) == []


#: A manual's chapter (SQLite's, PostgreSQL's): numbered parts, each an h1, under a <title>.
MANUAL_CHAPTER = (
    "<!doctype html><html><head><title>ALTER TABLE</title></head><body>"
    + "".join(
        f"<h1 id='part{n}'><span>{n}. </span>{name}</h1><p>The {name.lower()} form changes "
        f"a table in place. It runs in one transaction.</p>"
        f"<h2 id='part{n}_1'>{n}.1 Details</h2><p>More about {name.lower()} here.</p>"
        for n, name in enumerate(["Overview", "Rename", "Add Column", "Drop Column"], start=1)
    )
    + "</body></html>"
)


def test_numbered_headings_are_parts_of_a_manual_not_releases() -> None:
    read = extract_page(MANUAL_CHAPTER)
    assert read.kind == ""  # a guide: "2.1 Details" names no release
    assert page_kind(lxml.html.fromstring(CHANGELOG_PAGE), "Release History") == CHANGELOG
    bare = page("Changes", "".join(f"<h2>3.{n}.1</h2><p>Fixed {n}.</p>" for n in range(4)))
    assert extract_page(bare).kind == CHANGELOG


def test_a_page_of_several_numbered_h1s_is_named_by_its_title() -> None:
    read = extract_page(MANUAL_CHAPTER)
    assert read.title == "ALTER TABLE"
    assert "# 1. Overview {#part1}" in read.markdown


#: Entries a manual marks with a named place and a bold term (SQLite's PRAGMAs and limits),
#: or a DocBook variable list whose terms start with an empty target (PostgreSQL's settings).
ENTRIES = page(
    "PRAGMA Statements",
    "<h2 id='list'>List of PRAGMAs</h2>"
    "<p>Each pragma is described below. See <a name='inline'></a>the index too.</p>"
    "<a name='pragma_user_version'></a><h _id=x style='display:none'>user_version</h><hr>"
    "<p><b>PRAGMA user_version = </b><i>integer</i></p>"
    "<p>The user_version pragma gets or sets the user-version integer in the header.</p>"
    "<a name='pragma_foreign_keys'></a><hr><p><b>PRAGMA foreign_keys = </b><i>boolean</i></p>"
    "<p>Query, set, or clear the enforcement of foreign key constraints.</p>"
    "<dl class='variablelist'><dt><a id='GUC-WORK-MEM'></a><span class='term'>"
    "<code>work_mem</code> (integer)</span></dt><dd><p>Sets the memory a sort may use.</p></dd>"
    "</dl><span id='index-0'></span><p>An ordinary paragraph after an index target.</p>",
)


def test_reference_entries_marked_by_a_named_place_carry_their_own_anchor() -> None:
    markdown = extract_page(ENTRIES).markdown
    places = re.findall(r"\{#([^}]+)\}", markdown)
    assert places == ["list", "pragma_user_version", "pragma_foreign_keys", "GUC-WORK-MEM"]
    after = markdown.split("{#pragma_foreign_keys}")[1]
    assert "Query, set, or clear the enforcement" in after.split("{#GUC-WORK-MEM}")[0]
    assert "ordinary paragraph" in markdown  # an index target splits nothing
