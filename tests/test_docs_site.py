"""The manual: docs/ built by MkDocs strictly (a broken link, anchor or nav entry fails the
suite), a short README that points at it, and the server serving it at /docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_the_manual_builds_with_no_warning(built_docs):
    site, output = built_docs
    assert "WARNING" not in output
    for page in ("widget", "console", "sources", "api", "sms", "models", "configuration",
                 "scaling-out", "security", "measuring", "measuring/results",
                 "measuring/history"):  # fmt: skip
        assert (site / page / "index.html").is_file(), page


def test_every_console_link_into_the_manual_lands_on_a_heading(built_docs):
    from assistant.templatetags.docs import DOCS_PAGES

    for target in DOCS_PAGES.values():
        page, _, anchor = target.partition("#")
        html = (built_docs[0] / page / "index.html").read_text()
        assert not anchor or f'id="{anchor}"' in html, target


def test_the_readme_fits_on_two_screens_and_its_links_exist():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert "./.bin/run" in readme and "./.bin/test" in readme
    # The manual's landing page lists its pages; the README points at it, not a copy of its table.
    assert "](docs/index.md)" in readme and "| page |" not in readme
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO / target).is_file(), target


def test_the_measuring_pages_date_their_figures():
    for name in ("results.md", "history.md"):
        text = (REPO / "docs" / "measuring" / name).read_text()
        for heading in re.findall(r"^## .+$", text, flags=re.M):
            section = text.split(heading, 1)[1].split("\n## ", 1)[0]
            assert re.search(r"20\d\d-\d\d-\d\d", heading + section), f"{heading} has no date"


def test_dated_runs_stay_in_the_measuring_pages():
    """A user page says what the product does, with at most a current figure: dated runs,
    before-and-after comparisons and levers tried belong to docs/measuring/."""
    for page in sorted((REPO / "docs").glob("*.md")):
        text = page.read_text()
        assert not re.search(r"20\d\d-\d\d-\d\d", text), f"{page.name} has a dated figure"


def test_the_landing_page_lists_every_page_of_the_manual():
    docs = REPO / "docs"
    listed = set(re.findall(r"\]\(([^)#]+\.md)", (docs / "index.md").read_text()))
    pages = {str(p.relative_to(docs)) for p in docs.rglob("*.md")} - {"index.md"}
    assert pages - listed == set(), "pages docs/index.md does not list"
    assert listed - pages == set(), "pages docs/index.md lists that do not exist"


@pytest.mark.django_db
def test_the_server_serves_the_built_manual(client, settings, built_docs):
    settings.ASKDOCS_DOCS_DIR = built_docs[0]
    page = client.get("/docs/console/")
    assert page.status_code == 200
    assert b'id="logging-in"' in b"".join(page.streaming_content)
    assert client.get("/docs/").status_code == 200
    assert client.get("/docs/../settings.py").status_code in (400, 404)
    assert client.get("/docs/assets/").status_code == 404  # never a folder listing


@pytest.mark.django_db
def test_an_unbuilt_manual_says_how_to_build_it(client, settings, tmp_path):
    settings.ASKDOCS_DOCS_DIR = tmp_path
    page = client.get("/docs/console/")
    assert page.status_code == 404
    assert b"mkdocs build" in page.content
