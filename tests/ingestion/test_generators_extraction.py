"""Page shapes of other documentation generators (Javadoc, Doxygen, pydoctor, DocBook): what a
browser shows of them is read, with its headings and anchors."""

from __future__ import annotations

from assistant.rag.chunking.pieces import chunk_markdown
from assistant.rag.chunking.sections import split_sections
from ingestion.extraction import anchor_aliases, extract_page, html_tree

#: Javadoc 11: every section sits in a one-item layout list, its heading inside the item.
JAVADOC = """<!DOCTYPE HTML><html><head><title>Enclosed (JUnit API)</title></head><body>
<header role="banner"><nav role="navigation"><ul><li><a href="../index.html">Overview</a></li>
</ul></nav></header>
<main role="main"><div class="header"><h2 title="Class Enclosed" class="title">Class Enclosed</h2>
</div><div class="contentContainer"><div class="description"><ul class="blockList">
<li class="blockList"><pre>public class Enclosed extends Suite</pre>
<div class="block">If you put tests in inner classes, Ant, for example, won't find them.</div>
<ul><li>Runs each inner class.</li><li>Ignores abstract inner classes.</li></ul>
</li></ul></div>
<div class="summary"><ul class="blockList"><li class="blockList"><section role="region">
<ul class="blockList"><li class="blockList"><a id="method.summary"><!-- --></a>
<h3>Method Summary</h3><table class="memberSummary"><tr><th>Modifier</th><th>Method</th></tr>
<tr><td>void</td><td>run the tests of each inner class in turn</td></tr></table>
</li></ul></section></li></ul></div></div></main></body></html>"""


def test_a_list_item_that_holds_a_heading_is_layout_and_its_heading_stays_a_heading() -> None:
    page = extract_page(JAVADOC)
    sections = {s.headings[-1] if s.headings else "": s for s in split_sections(page.markdown)}
    summary = sections["Method Summary"]
    assert summary.blocks[0].anchor == "method.summary"
    assert "run the tests of each inner class in turn" in summary.body
    # A real list stays a list.
    lines = [line.strip() for line in page.markdown.splitlines()]
    assert "- Runs each inner class." in lines and "- Ignores abstract inner classes." in lines
    pieces = chunk_markdown(page.markdown, count_tokens=lambda t: len(t.split()), max_tokens=200)
    assert [p.anchor for p in pieces if "Method" in p.heading_path] == ["method.summary"]


def test_every_id_of_a_section_names_the_anchor_extraction_gives_it() -> None:
    tree = html_tree(
        """<html><body><main><span id="pairing"></span><span id="pair"></span>
<section id="s-pairing"><h2>Pairing<a class="headerlink" href="#s-pairing">¶</a></h2>
<p>Press twice.</p></section><section id="battery"><h2 id="h-battery">Battery</h2>
<p>Nine days.</p></section></main></body></html>"""
    )
    assert anchor_aliases(tree) == {
        "s-pairing": "s-pairing", "pairing": "s-pairing", "pair": "s-pairing",
        "h-battery": "h-battery", "battery": "h-battery",
    }  # fmt: skip


def test_the_extraction_measure_reads_xhtml_and_counts_a_layout_item_as_a_container() -> None:
    from measuring.evaluation.extraction import PageChunk, page_figures

    xhtml = '<?xml version="1.0" encoding="UTF-8"?>\n' + JAVADOC.split("\n", 1)[1]
    page = extract_page(xhtml)
    pieces = chunk_markdown(page.markdown, count_tokens=lambda t: len(t.split()), max_tokens=200)
    chunks = [PageChunk(url=f"p#{p.anchor}" if p.anchor else "p", heading_path=p.heading_path,
                        text=p.text, title=page.title) for p in pieces]  # fmt: skip
    figures, missing = page_figures(xhtml, chunks)
    assert missing == {}
    assert figures.texts == figures.texts_kept == 2  # the layout <li>s are not texts
    assert figures.headings == figures.headings_kept == 2


#: Doxygen: each member group is a table whose first row is the group's heading.
DOXYGEN = """<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
 "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>JsonCpp: Json::Reader Class Reference
</title></head><body><div class="contents">
<table class="memberdecls"><tr class="heading"><td colspan="2"><h2 class="groupheader">
<a name="pub-types"></a>Public Types</h2></td></tr>
<tr><td class="memItemLeft">using</td><td class="memItemRight">Char = char</td></tr>
</table><table class="memberdecls"><tr class="heading"><td colspan="2"><h2 class="groupheader">
<a name="pub-methods"></a>Public Member Functions</h2></td></tr>
<tr><td class="memItemLeft">bool</td>
<td class="memItemRight">parse (const std::string &amp;document)</td></tr>
<tr><td></td><td class="mdescRight">Read a Value from a JSON document held in a string.</td></tr>
</table></div></body></html>"""


def test_a_table_row_that_is_only_a_heading_becomes_a_heading_before_its_rows() -> None:
    page = extract_page(DOXYGEN)
    sections = {s.headings[-1]: s for s in split_sections(page.markdown) if s.headings}
    assert list(sections) == ["Public Types", "Public Member Functions"]
    assert sections["Public Types"].blocks[0].anchor == "pub-types"
    assert "Char = char" in sections["Public Types"].body
    methods = sections["Public Member Functions"].body
    assert "parse (const std::string &document)" in methods
    assert "Read a Value from a JSON document held in a string." in methods
    assert "Public" not in methods  # the heading left the table


def test_a_table_that_holds_code_reads_as_blocks_and_the_code_stays_whole() -> None:
    # pydoctor puts a constant's value in a one-column table.
    page = extract_page(
        """<html><body><main><div class="basevariable"><div class="functionHeader">
DeferredCallback =</div><div class="functionBody"><table class="valueTable"><tr class="fieldStart">
<td class="fieldName">Value</td></tr><tr><td><pre class="constant-value">Callable[
    ..., object]</pre></td></tr></table></div></div>
<table><tr><th>Name</th><th>Use</th></tr><tr><td>succeed</td><td>a fired Deferred</td></tr></table>
</main></body></html>"""
    )
    assert "Value\n\n```\nCallable[\n    ..., object]\n```" in page.markdown
    assert "| succeed | a fired Deferred |" in page.markdown  # a table without code stays one


#: mdBook: a note as a quotation whose paragraph runs over several source lines.
MDBOOK_NOTE = """<!DOCTYPE HTML><html lang="en"><head><title>Subtyping</title></head><body>
<main><h1 id="subtyping"><a class="header" href="#subtyping">Subtyping</a></h1>
<p>Subtyping is a relationship between types.</p>
<p>In a session written as text
&gt;&gt; subtype(a, b) says whether a is a subtype of b.</p>
<blockquote>
<p>NOTE: The typed-ness of lifetimes is a fairly arbitrary construct that some
disagree with. However it simplifies our analysis to treat lifetimes
and types uniformly.</p>
</blockquote></main></body></html>"""


def test_the_extraction_measure_reads_a_quotation_without_its_markers() -> None:
    from measuring.evaluation.extraction import PageChunk, page_figures

    page = extract_page(MDBOOK_NOTE)
    assert "> disagree with." in page.markdown  # each line of the quote is marked
    pieces = chunk_markdown(page.markdown, count_tokens=lambda t: len(t.split()), max_tokens=200)
    chunks = [PageChunk(url="p", heading_path=p.heading_path, text=p.text, title=page.title)
              for p in pieces]  # fmt: skip
    figures, _ = page_figures(MDBOOK_NOTE, chunks)
    assert figures.texts == figures.texts_kept == 3  # and ">>" in a paragraph is no marker


#: MkDocs' guide to writing docs: a code block that shows Markdown, fences and all.
MKDOCS_FENCES = """<!DOCTYPE html><html><head><title>Writing your docs</title></head><body>
<div role="main"><h1 id="writing">Writing your docs</h1><p>Fence your code:</p>
<pre><code class="language-md">Some text.

```python
def hello():
    print("hi")
```

~~~~{.py}
x = 1
~~~~
</code></pre></div></body></html>"""


def test_the_extraction_measure_keeps_a_code_block_that_shows_fences() -> None:
    from measuring.evaluation.extraction import PageChunk, page_figures

    page = extract_page(MKDOCS_FENCES)
    pieces = chunk_markdown(page.markdown, count_tokens=lambda t: len(t.split()), max_tokens=200)
    chunks = [PageChunk(url="p", heading_path=p.heading_path, text=p.text, title=page.title)
              for p in pieces]  # fmt: skip
    figures, missing = page_figures(MKDOCS_FENCES, chunks)
    assert figures.code_blocks == figures.code_blocks_kept == 1, missing


#: mdBook: a chapter's sections start at h2 (no h1), and the <title> adds the book's name.
MDBOOK_CHAPTER = """<!DOCTYPE HTML><html lang="en"><head>
<title>Variables and Mutability - The Rust Programming Language</title></head><body>
<main><h2 id="variables-and-mutability"><a class="header" href="#variables-and-mutability">
Variables and Mutability</a></h2><p>By default, variables are immutable.</p>
<h3 id="constants"><a class="header" href="#constants">Constants</a></h3>
<p>Constants are always immutable.</p></main></body></html>"""


def test_a_page_without_an_h1_is_named_by_its_top_heading_not_by_the_site_s_name() -> None:
    page = extract_page(MDBOOK_CHAPTER)
    assert page.title == "Variables and Mutability"
    pieces = chunk_markdown(page.markdown, count_tokens=lambda t: len(t.split()), max_tokens=200)
    # The top heading is the title: not repeated in any path, its anchor kept for its text.
    assert [(p.heading_path, p.anchor) for p in pieces] == [
        ("", "variables-and-mutability"),
        ("Constants", "constants"),
    ]
    # A <title> that is not the top heading and the site's name stays the title.
    other = MDBOOK_CHAPTER.replace("<title>Variables and Mutability - ", "<title>Chapter 3 - ")
    assert extract_page(other).title == "Chapter 3 - The Rust Programming Language"


#: MkDocs' themes link a heading with an icon font's glyph (Font Awesome U+F0C1).
MKDOCS_ICON_PERMALINK = """<!DOCTYPE html><html><head><title>Configuration - MkDocs</title>
</head><body><div role="main"><h1 id="configuration">Configuration<a class="headerlink"
href="#configuration" title="Permanent link">\uf0c1</a></h1><h3 id="site_dir">site_dir<a
class="headerlink" href="#site_dir" title="Permanent link">\uf0c1</a></h3>
<p>The directory where the output HTML and other files are created.</p></div></body></html>"""


def test_an_icon_font_permalink_is_not_part_of_the_heading() -> None:
    page = extract_page(MKDOCS_ICON_PERMALINK)
    assert page.title == "Configuration"
    assert "### site_dir {#site_dir}" in page.markdown
    assert "\uf0c1" not in page.markdown
