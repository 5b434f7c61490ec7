"""Crawling as docs teams expect, against a real local web server: generated index and search
pages left out by default, include/exclude patterns, noindex, sitemaps named in robots.txt,
conditional re-syncs (ETag, Last-Modified) and a run report that names what changed."""

from __future__ import annotations

import os
import time

import pytest

from ingestion.models import Document, Source
from ingestion.sync import source_sync
from tests.ingestion.site_server import page

pytestmark = pytest.mark.django_db


def website(project, url: str, **config) -> Source:  # noqa: ANN001, ANN003
    return Source.objects.create(
        project=project, kind=Source.Kind.WEBSITE, name="docs", config={"start_url": url, **config}
    )


def indexed(source: Source) -> set[str]:
    return {url.rsplit("/", 1)[-1] for url in source.documents.values_list("url", flat=True)}


def link_from_index(site, *names: str) -> None:  # noqa: ANN001
    index = (site.root / "docs/index.html").read_text()
    links = "".join(f'<li><a href="{n}">{n}</a></li>' for n in names)
    site.write("docs/index.html", index.replace("</ul>", links + "</ul>"))


def age(site, *paths: str) -> None:  # noqa: ANN001
    """Files written a while ago: their Last-Modified is a validator worth keeping."""
    past = time.time() - 3600
    for path in paths:
        os.utime(site.root / path, (past, past))


def test_generated_index_and_search_pages_are_left_out_by_default(site, store, project) -> None:  # noqa: ANN001
    site.write("docs/genindex.html", page("Index", "<p>" + "install, 1 " * 200 + "</p>"))
    site.write("docs/search.html", page("Search", "<p>Please activate JavaScript to search.</p>"))
    link_from_index(site, "genindex.html", "search.html")

    run = source_sync(source=website(project, f"{site.url}/docs/index.html"))

    assert "genindex.html" not in indexed(run.source) and "search.html" not in indexed(run.source)
    assert "/docs/genindex.html" not in site.requests  # never even downloaded
    assert run.skipped == 2
    assert {(s["url"].rsplit("/", 1)[-1], s["reason"]) for s in run.changes["skipped"]} == {
        ("genindex.html", "excluded by the pattern */genindex*"),
        ("search.html", "excluded by the pattern */search.html"),
    }


def test_include_and_exclude_patterns_choose_the_pages(site, store, project) -> None:  # noqa: ANN001
    source = website(
        project, f"{site.url}/docs/index.html",
        include=["/docs/", "/docs/*.html"], exclude=["*/faq.html"],
    )  # fmt: skip
    run = source_sync(source=source)
    assert "faq.html" not in indexed(source)
    assert {"install.html", "billing.html"} <= indexed(source)
    assert any(s["reason"] == "excluded by the pattern */faq.html" for s in run.changes["skipped"])


def test_a_folders_page_is_matched_by_its_index_html_name_too(site, store, project) -> None:  # noqa: ANN001
    """/docs/index.html is read as /docs/: an include rule /docs/*.html still means it."""
    source = website(project, f"{site.url}/docs/index.html", include=["/docs/*.html"])
    run = source_sync(source=source)
    assert run.status == "partial"  # broken.html errors, as in every crawl of this site
    assert {"", "install.html", "billing.html"} <= indexed(source)


def test_a_start_page_the_include_rules_leave_out_is_read_for_its_links(site, store, project):  # noqa: ANN001, ANN201
    source = website(project, f"{site.url}/docs/", include=["/docs/install*", "/docs/faq*"])
    run = source_sync(source=source)
    assert indexed(source) == {"install.html", "faq.html"}  # install-print: its canonical
    assert {
        "url": f"{site.url}/docs/",
        "reason": "not matched by the include patterns: the start page, read for its links only",
    } in run.changes["skipped"]


def test_a_sync_that_indexed_nothing_is_not_a_success(site, store, project) -> None:  # noqa: ANN001
    source = website(project, f"{site.url}/docs/", include=["/guide/*"])
    run = source_sync(source=source)
    source.refresh_from_db()
    assert run.status == "failed" and source.status == "failed"
    assert run.message.startswith("Nothing was indexed: the source holds no document (")
    assert "not matched by the include patterns" in run.message, run.message
    assert run.message.endswith("Edit the source's paths to read or skip.")


def test_a_noindex_page_is_not_indexed_but_its_links_are_followed(site, store, project) -> None:  # noqa: ANN001
    site.write(
        "docs/overview.html",
        '<html><head><title>Overview</title><meta name="robots" content="noindex"></head>'
        '<body><main><p>All guides in one list.</p><a href="deep.html">Deep guide</a></main>'
        "</body></html>",
    )
    site.write("docs/deep.html", page("Deep guide", "<p>Only the overview links here.</p>"))
    link_from_index(site, "overview.html")

    run = source_sync(source=website(project, f"{site.url}/docs/index.html"))

    assert "overview.html" not in indexed(run.source)
    assert "deep.html" in indexed(run.source)
    assert any("noindex" in s["reason"] for s in run.changes["skipped"])


def test_a_sitemap_named_in_robots_txt_finds_pages_no_link_leads_to(site, store, project) -> None:  # noqa: ANN001
    site.write("docs/orphan.html", page("Orphan", "<p>Only the sitemap lists this page.</p>"))
    sitemap = (site.root / "docs/sitemap.xml").read_text()
    site.write(
        "docs/sitemap.xml",
        sitemap.replace("</urlset>", "<url><loc>{base}/docs/orphan.html</loc></url></urlset>"),
    )
    run = source_sync(source=website(project, f"{site.url}/docs/index.html"))
    assert "orphan.html" in indexed(run.source)


def test_an_unchanged_site_answers_304_and_is_not_downloaded_again(site, store, project) -> None:  # noqa: ANN001
    site.etags = True
    source = website(project, f"{site.url}/docs/index.html")
    first = source_sync(source=source)
    assert first.added == 4 and site.conditional == []

    second = source_sync(source=source)

    assert (second.added, second.changed, second.removed, second.unchanged) == (0, 0, 0, 4)
    # Every page was asked with its ETag and answered 304; none was downloaded again.
    assert {path for path, _ in site.conditional} == {
        f"/docs/{name}" for name in ("", "install.html", "billing.html", "faq.html")
    }
    assert {status for _, status in site.conditional} == {304}
    # A page reached only through a page that answered 304 is still crawled (its links were
    # kept), so nothing is removed.
    assert second.chunks_embedded == 0 and indexed(source) == indexed(first.source)

    site.conditional.clear()
    faq = (site.root / "docs/faq.html").read_text()
    site.write("docs/faq.html", faq.replace("</main>", "<p>Exports are CSV files.</p></main>"))
    third = source_sync(source=source)
    assert (third.changed, third.unchanged) == (1, 3)
    assert ("/docs/faq.html", 200) in site.conditional
    assert [c["url"].rsplit("/", 1)[-1] for c in third.changes["changed"]] == ["faq.html"]
    assert third.changes["changed"][0]["title"]


def test_last_modified_is_used_when_there_is_no_etag(site, store, project) -> None:  # noqa: ANN001
    age(site, "docs/index.html", "docs/install.html", "docs/faq.html", "docs/billing.html")
    source = website(project, f"{site.url}/docs/index.html")
    source_sync(source=source)
    run = source_sync(source=source)
    assert run.unchanged == 4
    assert "/docs/install.html" in site.conditional_since


def test_a_page_that_just_changed_is_read_again_next_time(site, store, project) -> None:  # noqa: ANN001
    """A Last-Modified within a second of the answer is weak: the page may change again in
    the same second, which the date cannot show, so it is not used as a validator."""
    # Modified after the answer's Date, as a page written again during the crawl would be.
    later = time.time() + 30
    for file in (site.root / "docs").glob("*.html"):
        os.utime(file, (later, later))
    source = website(project, f"{site.url}/docs/index.html")
    source_sync(source=source)
    source_sync(source=source)
    assert "/docs/install.html" not in site.conditional_since


def test_pages_read_by_older_extraction_are_read_again(site, store, project) -> None:  # noqa: ANN001
    site.etags = True
    source = website(project, f"{site.url}/docs/index.html")
    source_sync(source=source)
    install = Document.objects.get(source=source, url__endswith="install.html")
    install.fetch_state = {**install.fetch_state, "extraction": "an older version"}
    install.save()
    source_sync(source=source)
    assert ("/docs/install.html", 304) not in site.conditional
    assert ("/docs/faq.html", 304) in site.conditional


def test_the_run_report_names_the_documents_added_and_removed(site, store, project) -> None:  # noqa: ANN001
    source = website(project, f"{site.url}/docs/index.html")
    first = source_sync(source=source)
    assert sorted(c["url"].rsplit("/", 1)[-1] for c in first.changes["added"]) == [
        "", "billing.html", "faq.html", "install.html",
    ]  # fmt: skip
    site.remove("docs/faq.html")
    second = source_sync(source=source)
    assert [c["url"].rsplit("/", 1)[-1] for c in second.changes["removed"]] == ["faq.html"]
