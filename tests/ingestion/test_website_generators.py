"""Sites of other generators served by the real test server: an XHTML page with an XML
declaration in its own encoding is read, and a file a page links to that is no page (an icon,
an archive) is left out rather than failing the sync."""

from __future__ import annotations

import pytest

from ingestion.models import Document, SyncRun
from ingestion.sync import source_sync
from tests.ingestion.conftest import docs_source
from tests.ingestion.site_server import page

pytestmark = pytest.mark.django_db

#: asciidoc's xhtml11 backend, written in Latin-1 and saying so in its declaration.
XHTML = """<?xml version="1.0" encoding="ISO-8859-1"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en"><head>
<meta http-equiv="Content-Type" content="application/xhtml+xml; charset=ISO-8859-1" />
<title>widget-reset(1)</title></head><body class="manpage"><div id="header"><h1>widget-reset(1)</h1>
</div><div id="content"><div class="sect1"><h2 id="_description">DESCRIPTION</h2>
<div class="sectionbody"><div class="paragraph"><p>Resets the widget's caf\u00e9 counter to
z\u00e9ro.</p></div></div></div></div></body></html>"""


def test_an_xhtml_page_and_a_link_to_an_icon(site, store, project) -> None:  # noqa: ANN001
    links = '<a href="reset.html">R</a> <a href="favicon.ico">I</a> <a href="broken.html">B</a>'
    site.write("docs/index.html", page("Docs", f"<p>{links}</p>"))
    (site.root / "docs" / "reset.html").write_bytes(XHTML.encode("latin-1"))
    (site.root / "docs" / "favicon.ico").write_bytes(b"\x00\x00\x01\x00 not a page")
    source = docs_source(project, site)
    run = source_sync(source=source)

    reset = Document.objects.get(external_id=f"{site.url}/docs/reset.html")
    assert reset.title == "widget-reset(1)"
    chunk = reset.chunks.get()
    assert "Resets the widget's café counter to zéro." in " ".join(chunk.text.split())
    assert chunk.url.endswith("reset.html#_description")
    # The icon is never fetched (a link to a file, not a page); only the real error fails it.
    assert run.errors == [{"url": f"{site.url}/docs/broken.html", "error": "HTTP 500"}]
    assert "/docs/favicon.ico" not in site.requests
    assert run.status == SyncRun.Status.PARTIAL and run.failed == 1


#: mdBook: a chapter that is its finished program, introduced by one sentence (the code block
#: nested in a playground <pre>, as mdBook writes it).
MDBOOK_FINAL_CODE = page(
    "Final Code",
    "<main><h1 id='final-code'><a class='header' href='#final-code'>Final Code</a></h1>"
    "<p>Here's the final code, with some added comments and re-ordered imports:</p>"
    "<pre><pre class='playground'><code class='language-rust'>"
    + "\n".join(f"fn step_{n}(counter: &amp;AtomicUsize) {{\n    counter.fetch_add({n}, "
                "Ordering::Relaxed);\n}" for n in range(60))
    + "</code></pre></pre></main>",
)  # fmt: skip
#: RDoc (darkfish): a class whose members each carry their source, shown on a click.
RDOC_CLASS = page(
    "class Widget::Converter",
    "<main role='main'><h1 id='class-Widget::Converter'>class Widget::Converter</h1>"
    "<section id='public-instance-5Buntitled-5D-method-details'><h3>Public Instance Methods</h3>"
    + "".join(
        f"<div id='method-i-convert_{n}' class='method-detail'><div class='method-heading'>"
        f"<span class='method-name'>convert_{n}</span><span class='method-args'>(node)</span>"
        f"<span class='method-click-advice'>click to toggle source</span></div>"
        f"<div class='method-description'><p>Converts a node of kind {n}.</p>"
        f"<div class='method-source-code' id='convert_{n}-source'><pre># File lib/widget.rb, "
        f"line {10 * n}\ndef convert_{n} node\n"
        + "".join(f"  node.attr{k} = transform(node.attr{k}, {n})\n" for k in range(12))
        + "end</pre></div></div></div>"
        for n in range(8)
    )
    + "</section></main>",
)  # fmt: skip


def test_a_chapter_of_code_and_a_class_of_members_with_their_source_are_read(  # noqa: ANN001
    site, store, project
) -> None:
    """Neither is a generated source listing (one program text whose lines carry anchors or
    links into the docs), so neither is skipped as one."""
    links = '<a href="final.html">F</a> <a href="Converter.html">C</a>'
    site.write("docs/index.html", page("Docs", f"<p>{links}</p>"))
    site.write("docs/final.html", MDBOOK_FINAL_CODE)
    site.write("docs/Converter.html", RDOC_CLASS)
    source = docs_source(project, site)

    run = source_sync(source=source)

    assert run.changes.get("skipped", []) == []
    final = Document.objects.get(external_id=f"{site.url}/docs/final.html")
    assert "Ordering::Relaxed" in "".join(c.text for c in final.chunks.all())
    converter = Document.objects.get(external_id=f"{site.url}/docs/Converter.html")
    assert "Converts a node of kind 7." in "".join(c.text for c in converter.chunks.all())


#: Doxygen's own manual (langhowto.html): a layout table whose one cell holds the data table.
NESTED_TABLE = page(
    "Internationalization",
    "<div class='contents'><table align='center' cellspacing='0' cellpadding='0' border='0'>"
    "<tr bgcolor='#000000'><td><table cellspacing='1' cellpadding='2' border='0'>"
    "<tr bgcolor='#4040c0'><td><b>Language</b></td><td><b>Maintainer</b></td>"
    "<td><b>Status</b></td></tr>"
    + "".join(
        f"<tr><td>Language {n}</td><td>Maintainer {n}<br/>Second maintainer of language {n}"
        f"</td><td>1.{n}.0</td></tr>"
        for n in range(80)
    )
    + "</table></td></tr></table></div>",
)  # fmt: skip


def test_a_table_inside_a_layout_table_keeps_its_rows(site, store, project) -> None:  # noqa: ANN001
    site.write("docs/index.html", page("Docs", '<p><a href="langs.html">L</a></p>'))
    site.write("docs/langs.html", NESTED_TABLE)
    source = docs_source(project, site)

    source_sync(source=source)

    langs = Document.objects.get(external_id=f"{site.url}/docs/langs.html")
    lines = {line.strip() for c in langs.chunks.all() for line in c.text.splitlines()}
    for n in (0, 41, 79):  # every row a row of its own, never one line of the whole table
        row = f"| Language {n} | Maintainer {n} Second maintainer of language {n} | 1.{n}.0 |"
        assert row in lines


#: Javadoc 11's "Uses of Class" page: its headings carry no id; the skip link's target before
#: the content is the one place on the page near them.
JAVADOC_USES = """<!DOCTYPE HTML><html lang="en"><head><title>Uses of Class Widget</title></head>
<body><header role="banner"><nav role="navigation"><a id="navbar.top"><!-- --></a>
<ul><li><a href="../Widget.html">Class</a></li></ul><a id="skip.navbar.top"><!-- --></a></nav>
</header><main role="main"><div class="header"><h2 title="Uses of Class acme.Widget"
class="title">Uses of Class<br>acme.Widget</h2></div><div class="classUseContainer">
<ul class="blockList"><li class="blockList"><section role="region"><h3>Uses of Widget in acme</h3>
<table><caption><span>Methods in acme that return Widget</span></caption>
<tr><th>Modifier and Type</th><th>Method</th></tr>
<tr><td>static Widget</td><td>Factory.newWidget(String name) creates a widget by its name</td></tr>
</table></section></li></ul></div></main></body></html>"""


def test_headings_without_ids_are_cited_at_a_place_the_page_has(site, store, project) -> None:  # noqa: ANN001
    site.write("docs/index.html", page("Docs", '<p><a href="uses.html">U</a></p>'))
    site.write("docs/uses.html", JAVADOC_USES)
    source = docs_source(project, site)

    source_sync(source=source)

    uses = Document.objects.get(external_id=f"{site.url}/docs/uses.html")
    chunks = list(uses.chunks.all())
    assert "creates a widget by its name" in "".join(c.text for c in chunks)
    # Never a name made up from a heading's words (#uses-of-widget-in-acme is no id there).
    assert {c.url.partition("#")[2] for c in chunks} == {"skip.navbar.top"}


#: pydoctor's index of names: each letter's heading follows an empty <a name> target.
PYDOCTOR_NAMES = page(
    "Index of Names",
    "".join(
        f'<a name="{letter}">\n  </a><h2>{letter}</h2><ul>'
        + "".join(
            f'<li>{letter.lower()}{n}name - <code><a href="acme.html#{letter}{n}">acme.'
            f"{letter.lower()}{n}name</a></code> returns the widget of the named kind</li>"
            for n in range(30)
        )
        + "</ul>"
        for letter in "ABC"
    ),
)


def test_a_heading_after_an_empty_named_target_is_cited_at_it(site, store, project) -> None:  # noqa: ANN001
    site.write("docs/index.html", page("Docs", '<p><a href="names.html">N</a></p>'))
    site.write("docs/names.html", PYDOCTOR_NAMES)
    source = docs_source(project, site)

    source_sync(source=source)

    names = Document.objects.get(external_id=f"{site.url}/docs/names.html")
    by_anchor: dict[str, str] = {}
    for chunk in names.chunks.all():
        anchor = chunk.url.partition("#")[2]
        by_anchor[anchor] = by_anchor.get(anchor, "") + chunk.text
    assert set(by_anchor) == {"A", "B", "C"}  # the page's names, not slugs ("a", "b")
    assert "b7name" in by_anchor["B"]


#: pydoctor: a docstring's example written as a paragraph, its first line a comment.
PYDOCTOR_EXAMPLE = page(
    "hyperlink._url",
    "<h2 id='idna'>Encoding</h2><p>Hosts are encoded with IDNA.</p>"
    "<p># Similar behavior for decodes below\n&gt;&gt; idna.decode(u'Mahmoud.io')\n"
    "u'mahmoud.io'</p><p>Decoding is case-insensitive.</p>",
)


def test_a_paragraph_line_that_starts_with_a_hash_is_no_heading(site, store, project) -> None:  # noqa: ANN001
    site.write("docs/index.html", page("Docs", '<p><a href="url.html">U</a></p>'))
    site.write("docs/url.html", PYDOCTOR_EXAMPLE)
    source = docs_source(project, site)

    source_sync(source=source)

    chunks = list(Document.objects.get(external_id=f"{site.url}/docs/url.html").chunks.all())
    assert {c.heading_path for c in chunks} == {"Encoding"}
    text = "".join(c.text for c in chunks)
    assert "Similar behavior for decodes below" in text and "case-insensitive" in text
