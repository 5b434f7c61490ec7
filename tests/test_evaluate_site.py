"""`evaluate --site` end to end on a small real site served from a folder: the Website
connector crawls it, the sync indexes it, extraction is measured against the pages' own HTML,
and the questions are scored against gold URLs relative to the site root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.test_bench_smoke import _Sink

FAQ = """<!doctype html><html><head><title>Widget FAQ — Acme docs</title></head><body>
<nav role="navigation"><a href="../index.html">Home</a> <a href="../genindex.html">Index</a></nav>
<main>
<section id="widget-faq"><h1>Widget FAQ<a class="headerlink" href="#widget-faq">¶</a></h1>
<section id="how-do-i-reset-a-widget">
<h2>How do I reset a widget?<a class="headerlink" href="#how-do-i-reset-a-widget">¶</a></h2>
<p>Hold the reset button for five seconds, then run:</p>
<pre>acme widget reset --hard
acme widget status</pre>
</section>
<section id="what-colours-are-there">
<h2>What colours are there?<a class="headerlink" href="#what-colours-are-there">¶</a></h2>
<table><tr><th>Colour</th><th>Code</th></tr><tr><td>Teal</td><td>T1</td></tr>
<tr><td>Amber</td><td>A2</td></tr></table>
</section></section></main></body></html>"""

INDEX = """<!doctype html><html><head><title>Acme docs</title></head><body><main>
<h1>Acme docs</h1><p>Acme widgets are small devices that count visitors at a door.</p>
<p><a href="faq/widgets.html">Widget FAQ</a> · <a href="genindex.html">Index</a></p>
</main></body></html>"""

GENINDEX = """<!doctype html><html><head><title>Index</title></head><body><main>
<h1>Index</h1><p>reset, 1 · colours, 2 · widget, 3</p></main></body></html>"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "faq").mkdir(parents=True)
    (root / "index.html").write_text(INDEX)
    (root / "genindex.html").write_text(GENINDEX)
    (root / "faq" / "widgets.html").write_text(FAQ)
    return root


@pytest.fixture
def queries(tmp_path: Path) -> Path:
    rows = [
        {"id": "q1", "question": "How do I reset a widget?", "answerable": True,
         "gold_page": "faq/widgets.html", "gold_url": "faq/widgets.html#how-do-i-reset-a-widget",
         "answers_all": ["Hold the reset button for five seconds."],
         "key_facts": ["acme widget reset --hard", ["five seconds", "5 s"]]},
        {"id": "q3", "question": "Which colour codes do widgets come in?", "answerable": True,
         "gold_page": "faq/widgets.html", "gold_url": "faq/widgets.html#what-colours-are-there",
         "key_facts": ["Z9"]},
        {"id": "q2", "question": "What is the price of a widget in Japan?", "answerable": False},
    ]  # fmt: skip
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.bench
def test_evaluate_site_crawls_measures_and_asks(site, queries, tmp_path, settings) -> None:  # noqa: ANN001
    settings.DATA_DIR = tmp_path / "data"
    out, misses = tmp_path / "report.json", tmp_path / "misses.md"
    call_command("evaluate", site=str(site), queries=queries, start="index.html", json=out,
                 answers=True, misses=misses, stdout=_Sink(), stderr=_Sink())  # fmt: skip
    report = json.loads(out.read_text())
    by_id = {o["id"]: o for o in report["per_query"]}

    first, resync = report["syncs"]
    assert (first["added"], first["pages"]) == (2, 2)  # the index page is left out
    assert first["chunks"] >= 3 and first["chunks_per_second"] > 0
    assert (resync["unchanged"], resync["added"], resync["changed"]) == (2, 0, 0)
    assert [s["url"].rsplit("/", 1)[-1] for s in first["skipped"]] == ["genindex.html"]
    assert first["errors"] == []

    extraction = report["extraction"]
    assert extraction["anchors_valid"] == 1.0
    assert extraction["headings_kept"] == 1.0
    assert extraction["code_blocks_kept"] == 1.0
    assert extraction["text_kept"] == 1.0

    assert report["page_hit@5"] == 1.0 and report["refused"] == 1.0
    # Every section found is a guide's: a FAQ page is neither reference nor changelog.
    assert report["top5_kinds"] == {"guide": 1.0}
    assert by_id["q1"]["top5_kinds"] and set(by_id["q1"]["top5_kinds"]) == {""}
    # The reset answer quotes the command with its lead; no answer can hold a code the pages
    # never give (q3's "Z9"), so one of two answerable questions holds its key facts.
    assert by_id["q1"]["key_facts_hit"] is True and by_id["q1"]["answered"] is True
    assert by_id["q3"]["key_facts_hit"] is False
    assert report["key_facts_hit"] == 0.5
    # q3's miss stops at the quote: its gold section was kept, the code is in no page.
    assert by_id["q3"]["gold_kept"] is True and report["limits"] == {"quote": 1}
    assert by_id["q1"]["cited"] == ["faq/widgets.html#how-do-i-reset-a-widget"]
    # The quote names the command the page gives, so nothing it names is unheld.
    assert "acme widget reset --hard" in by_id["q1"]["answer_text"]
    assert by_id["q1"]["unheld"] == [] and report["unheld_names"] == 0
    assert by_id["q1"]["kept"][0]["section"] == "faq/widgets.html#how-do-i-reset-a-widget"
    # Nothing about prices reads as relevant: the gate turns it away, and the report keeps the
    # best candidates it turned away, best first, to read why.
    assert by_id["q2"]["refused_by"] == "gate" and by_id["q2"]["kept"] == []
    below = [p["relevance"] for p in by_id["q2"]["below_gate"]]
    assert len(below) == 3 and below == sorted(below, reverse=True) and below[0] < 0.5
    written = misses.read_text()
    assert written.startswith("# Misses: 1 of 3 questions")
    assert "## q3: key facts held: 0%" in written and "- key facts: ['Z9']" in written
    assert "Kept (" in written and "## q1" not in written

    # A second run re-syncs the index it kept instead of crawling anew.
    call_command("evaluate", site=str(site), queries=queries, start="index.html", json=out,
                 stdout=_Sink(), stderr=_Sink())  # fmt: skip
    again = json.loads(out.read_text())
    assert len(again["syncs"]) == 1 and again["syncs"][0]["unchanged"] == 2


def test_evaluate_site_names_a_missing_folder(queries, tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(CommandError, match="No such folder"):
        call_command("evaluate", site=str(tmp_path / "nowhere"), queries=queries,
                     stdout=_Sink(), stderr=_Sink())  # fmt: skip


#: A theme that gives each section two ids: `s-…` on the section (its permalink's target) and
#: the label on an empty span before it. The product cites `#s-…`; a gold label may use either.
TWO_NAMES = """<!doctype html><html><head><title>Gadget FAQ</title></head><body><main>
<span id="gadget-faq"></span><section id="s-gadget-faq">
<h1>Gadget FAQ<a class="headerlink" href="#s-gadget-faq">¶</a></h1>
<span id="how-do-i-pair-a-gadget"></span><section id="s-how-do-i-pair-a-gadget">
<h2>How do I pair a gadget?<a class="headerlink" href="#s-how-do-i-pair-a-gadget">¶</a></h2>
<p>Press the pair key twice, then hold the gadget within a metre of the hub until it blinks
green.</p></section>
<span id="how-long-does-the-battery-last"></span><section id="s-how-long-does-the-battery-last">
<h2>How long does the battery last?<a class="headerlink"
href="#s-how-long-does-the-battery-last">¶</a></h2>
<p>A charged battery lasts about nine days of ordinary counting.</p></section>
</section></main></body></html>"""


@pytest.mark.bench
def test_evaluate_site_knows_a_section_by_either_of_its_ids(tmp_path, settings) -> None:  # noqa: ANN001
    settings.DATA_DIR = tmp_path / "data"
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text(INDEX.replace("faq/widgets.html", "gadgets.html"))
    (root / "gadgets.html").write_text(TWO_NAMES)
    rows = [
        {"id": "span", "question": "How do I pair a gadget with the hub?", "answerable": True,
         "gold_page": "gadgets.html", "gold_url": "gadgets.html#how-do-i-pair-a-gadget"},
        {"id": "section", "question": "How long does a gadget battery last?", "answerable": True,
         "gold_page": "gadgets.html", "gold_url": "gadgets.html#s-how-long-does-the-battery-last"},
        {"id": "other", "question": "How do I pair a gadget with the hub?", "answerable": True,
         "gold_page": "gadgets.html", "gold_url": "gadgets.html#how-long-does-the-battery-last"},
    ]  # fmt: skip
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "report.json"
    call_command("evaluate", site=str(root), queries=queries, start="index.html", json=out,
                 stdout=_Sink(), stderr=_Sink())  # fmt: skip
    report = json.loads(out.read_text())
    by_id = {o["id"]: o for o in report["per_query"]}
    assert report["extraction"]["anchors_valid"] == 1.0
    # Gold on the span's id and gold on the section's id both name the section the product
    # cites; gold on another section's span is still another section.
    assert by_id["span"]["hit@1"] is True
    assert by_id["section"]["hit@1"] is True
    assert by_id["other"]["hit@1"] is False
