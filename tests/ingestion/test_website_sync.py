"""The crawler against a local website: scope, robots.txt, redirects, canonical URLs, errors,
and a second sync after pages were added, changed and removed."""

from __future__ import annotations

import pytest

from assistant.wiring import runtime
from ingestion.models import Document, Source, SyncRun
from ingestion.sync import source_sync
from tests.ingestion.conftest import retrieved, vector_ids
from tests.ingestion.site_server import page

pytestmark = pytest.mark.django_db


def website(project, url: str, **config) -> Source:  # noqa: ANN001, ANN003
    return Source.objects.create(
        project=project, kind=Source.Kind.WEBSITE, name="docs", config={"start_url": url, **config}
    )


def test_it_crawls_the_site_within_scope_obeying_robots(site, store, project) -> None:  # noqa: ANN001
    run = source_sync(source=website(project, f"{site.url}/docs/index.html"))

    docs = set(
        Document.objects.filter(source__project=project).values_list("external_id", flat=True)
    )
    assert docs == {
        f"{site.url}/docs/",  # index.html is the folder
        f"{site.url}/docs/install.html",  # install-print.html names it as canonical
        f"{site.url}/docs/billing.html",  # reached through a redirect
        f"{site.url}/docs/faq.html",
    }
    assert run.status == SyncRun.Status.PARTIAL
    assert run.errors == [{"url": f"{site.url}/docs/broken.html", "error": "HTTP 500"}]
    assert (run.added, run.failed) == (4, 1)
    # A link that leads to no page is listed: the admin sees why a page seen was not added.
    assert run.changes["not found"] == [{
        "url": f"{site.url}/docs/missing.html",
        "reason": "HTTP 404: a link on the site leads to no page",
    }]  # fmt: skip
    # Never asked for: disallowed by robots.txt, another host, outside /docs/.
    assert "/docs/private/secret.html" not in site.requests
    assert "/blog/post.html" not in site.requests
    install = Document.objects.get(external_id=f"{site.url}/docs/install.html")
    assert install.title == "Installing Acme"
    chunk = install.chunks.get(heading_path="Requirements")
    assert chunk.url == f"{site.url}/docs/install.html#requirements"
    assert "Windows 10" in chunk.text
    assert "Copyright" not in "".join(install.chunks.values_list("text", flat=True))
    assert set(store.ids()) == set(vector_ids(project))


def test_a_resync_re_embeds_exactly_what_changed(site, store, project) -> None:  # noqa: ANN001
    source = website(project, f"{site.url}/docs/index.html")
    source_sync(source=source)
    before = vector_ids(project)
    assert any("without a connection" in t for t in retrieved(project, "Can I track time offline?"))

    # Changed: one section of the install page. Removed: the FAQ. Added: a pricing page.
    site.write(
        "docs/install.html",
        (site.root / "docs/install.html")
        .read_text()
        .replace("Windows 10 or newer", "Windows 11 or newer"),
    )
    site.remove("docs/faq.html")
    index = (site.root / "docs/index.html").read_text()
    site.write("docs/index.html", index)  # unchanged content
    site.write(
        "docs/pricing.html",
        page(
            "Pricing", "<p>The team plan costs nine euros per person per month, billed yearly.</p>"
        ),
    )
    site.write(
        "docs/billing.html",
        (site.root / "docs/billing.html")
        .read_text()
        .replace(
            "</main>", '<p>See the <a href="pricing.html">pricing page</a> for plans.</p></main>'
        ),
    )

    run = source_sync(source=source)
    after = vector_ids(project)

    new = {vid: doc for vid, doc in after.items() if vid not in before}
    gone = {vid: doc for vid, doc in before.items() if vid not in after}
    install, billing, pricing, faq = (
        f"{site.url}/docs/{name}.html" for name in ("install", "billing", "pricing", "faq")
    )
    # Only the changed section of install, the changed billing section and the new page.
    assert sorted(new.values()) == sorted([install, billing, pricing])
    assert sorted(gone.values()) == sorted([install, billing, faq])
    assert run.chunks_embedded == len(new) == 3
    assert (run.added, run.changed, run.unchanged, run.removed) == (1, 2, 1, 1)
    # The FAQ, now answering 404, is listed as removed; only the link never indexed as not found.
    assert [d["url"] for d in run.changes["removed"]] == [faq]
    assert [d["url"] for d in run.changes["not found"]] == [f"{site.url}/docs/missing.html"]
    unchanged_install = [vid for vid, doc in before.items() if doc == install and vid in after]
    assert len(unchanged_install) == 2  # the intro and "Uninstalling" kept their vectors

    texts = retrieved(project, "Can I track time offline?")
    assert not any("without a connection" in t for t in texts)
    assert any("nine euros" in t for t in retrieved(project, "How much does the team plan cost?"))
    assert any("Windows 11" in t for t in texts + retrieved(project, "system requirements"))
    assert set(store.ids()) == set(after)


def test_an_unchanged_resync_embeds_nothing(site, store, project) -> None:  # noqa: ANN001
    source = website(project, f"{site.url}/docs/index.html")
    source_sync(source=source)
    run = source_sync(source=source)
    assert (run.added, run.changed, run.removed, run.chunks_embedded) == (0, 0, 0, 0)
    assert run.unchanged == 4


def test_a_sitemap_lists_the_pages_and_a_dropped_page_disappears(site, store, project) -> None:  # noqa: ANN001
    source = Source.objects.create(
        project=project,
        kind=Source.Kind.WEBSITE,
        name="sitemap",
        config={"sitemap_url": f"{site.url}/docs/sitemap.xml"},
    )
    run = source_sync(source=source)
    docs = set(source.documents.values_list("external_id", flat=True))
    assert docs == {f"{site.url}/docs/{n}.html" for n in ("install", "billing", "faq")}
    assert run.errors == [
        {
            "url": "https://elsewhere.example/docs/other.html",
            "error": "outside the site's domain and path; skipped",
        }
    ]
    sitemap = (site.root / "docs/sitemap.xml").read_text()
    site.write(
        "docs/sitemap.xml", sitemap.replace("<url><loc>{base}/docs/faq.html</loc></url>", "")
    )
    run = source_sync(source=source)
    assert run.removed == 1
    assert not source.documents.filter(external_id__endswith="faq.html").exists()


def test_an_unreachable_site_fails_the_run_and_keeps_the_index(site, store, project) -> None:  # noqa: ANN001
    source = website(project, f"{site.url}/docs/index.html")
    source_sync(source=source)
    kept = vector_ids(project)
    site.stop()
    run = source_sync(source=source)
    source.refresh_from_db()
    assert run.status == SyncRun.Status.FAILED
    assert "Cannot reach" in run.message
    assert source.status == Source.Status.FAILED
    assert "Cannot reach" in source.last_error
    assert vector_ids(project) == kept  # nothing removed because the site was down
    assert set(runtime.chunk_store().ids()) == set(kept)


def test_it_refuses_a_start_url_that_is_not_a_web_address(store, project) -> None:  # noqa: ANN001
    run = source_sync(source=website(project, "file:///etc/passwd"))
    assert run.status == SyncRun.Status.FAILED
    assert "Not a web address" in run.message


def test_it_skips_pages_over_the_size_limit(site, store, project) -> None:  # noqa: ANN001
    site.write("docs/faq.html", page("Big", "<p>" + "word " * 5000 + "</p>"))
    run = source_sync(source=website(project, f"{site.url}/docs/index.html", max_page_bytes=10_000))
    assert {
        "url": f"{site.url}/docs/faq.html",
        "error": "page larger than 10 kB; skipped",
    } in run.errors
    assert run.added == 3


def test_a_crawls_bar_never_runs_ahead_of_the_pages_found(site, store, project, monkeypatch):  # noqa: ANN001, ANN201
    """A crawl finds its pages level by level: after the start page alone, the bar measures
    against the page limit, not against the one page known (which said 50% at once)."""
    monkeypatch.setattr("ingestion.sync.FLUSH_EVERY_SECONDS", 0)  # a report after every page
    links = "".join(f'<li><a href="p{n}.html">Page {n}</a></li>' for n in range(40))
    site.write("docs/index.html", page("Home", f"<ul>{links}</ul>"))
    for n in range(40):
        site.write(f"docs/p{n}.html", page(f"Page {n}", f"<p>Topic {n} explained at length.</p>"))
    seen: list[tuple[int, int, int]] = []
    source = website(project, f"{site.url}/docs/", max_pages=100)
    run = source_sync(
        source=source, on_progress=lambda r: seen.append((r.done, r.total, r.shown_percent))
    )
    running = seen[:-1]  # the last report is the finished run's
    assert run.status == SyncRun.Status.SUCCEEDED and len(running) >= 2
    assert all(shown <= 100 * done // total for done, total, shown in running), running
    assert [s for *_, s in running] == sorted(s for *_, s in running)
    assert run.percent == 100


@pytest.mark.django_db(transaction=True)
def test_a_slow_crawl_saves_its_progress_as_it_goes(site, store, project) -> None:  # noqa: ANN001
    """Fewer pages than a batch still move the progress bar: a slow crawl flushes every
    second. The crawl is held at its last page while we look."""
    import threading
    import time

    source = website(project, f"{site.url}/docs/", max_pages=10)
    site.delay = 0.6
    site.held = {"/docs/broken.html"}
    worker = threading.Thread(target=lambda: source_sync(source=source, trigger="test"))
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            run = SyncRun.objects.filter(source=source).first()
            if run is not None and run.done > 0:
                break
            time.sleep(0.2)
        assert run is not None and run.status == SyncRun.Status.RUNNING
        assert 0 < run.done < run.total and 0 < run.percent <= 100 * run.done // run.total
    finally:
        site.released.set()
        worker.join(timeout=60)
    run.refresh_from_db()
    assert run.status == SyncRun.Status.PARTIAL and run.percent == 100
