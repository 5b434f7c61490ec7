"""Every fetch of a crawl has an end, and none reaches an address the deployment does not
allow: against a real local web server that trickles bytes, serves a 100 MB robots.txt or
redirects to an internal service, and a listening socket that must stay untouched."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ingestion.models import Source, SyncRun
from ingestion.sync import source_sync
from tests.ingestion.site_server import Listener, page, trickle

pytestmark = pytest.mark.django_db

MB = 1_000_000


def website(project, url: str, **config) -> Source:  # noqa: ANN001, ANN003
    return Source.objects.create(
        project=project, kind=Source.Kind.WEBSITE, name="docs", config={"start_url": url, **config}
    )


def indexed(source: Source) -> set[str]:
    return {url.rsplit("/", 1)[-1] for url in source.documents.values_list("url", flat=True)}


@pytest.fixture
def listener() -> Iterator[Listener]:
    internal = Listener("127.0.0.2")  # loopback, but not the allowed 127.0.0.1
    yield internal
    internal.close()


def huge_robots() -> Iterator[bytes]:
    yield b"User-agent: *\nDisallow: /docs/billing.html\nSitemap: /docs/sitemap.xml\n"
    block = b"".join(b"Disallow: /never-%06d\n" % i for i in range(3_000))
    for _ in range(100 * MB // len(block)):
        yield block


def test_a_100_mb_robots_txt_is_read_only_to_its_cap_and_the_report_says_so(
    site, store, project
) -> None:  # noqa: ANN001
    site.streams["/robots.txt"] = ("text/plain", huge_robots)

    run = source_sync(source=website(project, f"{site.url}/docs/index.html"))

    assert run.status == SyncRun.Status.PARTIAL  # broken.html; the crawl itself went on
    assert "install.html" in indexed(run.source)
    assert "billing.html" not in indexed(run.source)  # the rule in the first lines held
    assert site.sent["/robots.txt"] < 10 * MB  # the rest was never sent for
    [note] = [s for s in run.changes["skipped"] if s["url"].endswith("/robots.txt")]
    assert "robots.txt larger than 500 kB" in note["reason"]


def test_a_trickling_page_is_cut_at_its_deadline_and_the_crawl_goes_on(
    site, store, project
) -> None:  # noqa: ANN001
    slow = page("Slow", "<p>" + "one byte at a time " * 3 + "</p>").encode()
    site.streams["/docs/faq.html"] = ("text/html", trickle(slow, every=0.2))

    run = source_sync(source=website(project, f"{site.url}/docs/index.html", page_seconds=2))

    errors = {e["url"].rsplit("/", 1)[-1]: e["error"] for e in run.errors}
    assert errors["faq.html"] == "page not received within 2 s; stopped"
    assert site.sent["/docs/faq.html"] < len(slow)  # cut while it was still sending
    assert {"index.html", "install.html"} <= indexed(run.source) | {"index.html"}


def test_a_trickling_sitemap_is_cut_and_reported(site, store, project) -> None:  # noqa: ANN001
    xml = (site.root / "docs/sitemap.xml").read_text().replace("{base}", site.url).encode()
    site.streams["/docs/sitemap.xml"] = ("application/xml", trickle(xml, every=0.2))

    run = source_sync(source=website(project, f"{site.url}/docs/index.html", page_seconds=2))

    errors = {e["url"].rsplit("/", 1)[-1]: e["error"] for e in run.errors}
    assert "sitemap not received within 2 s; stopped" in errors["sitemap.xml"]
    assert "install.html" in indexed(run.source)  # the links still led to the pages


def test_a_sitemap_over_its_cap_is_not_read(site, store, project) -> None:  # noqa: ANN001
    def endless() -> Iterator[bytes]:
        yield b'<?xml version="1.0"?><urlset>'
        while True:
            yield b"<url><loc>https://example.com/x</loc></url>" * 1000

    site.streams["/big/sitemap.xml"] = ("application/xml", endless)
    source = Source.objects.create(
        project=project, kind=Source.Kind.WEBSITE, name="docs",
        config={"sitemap_url": f"{site.url}/big/sitemap.xml", "max_sitemap_bytes": 200_000},
    )  # fmt: skip

    run = source_sync(source=source)

    assert run.status == SyncRun.Status.FAILED
    assert "sitemap larger than 200 kB" in run.message
    assert site.sent["/big/sitemap.xml"] < 5 * MB


def test_a_crawl_past_its_deadline_stops_and_removes_nothing(site, store, project) -> None:  # noqa: ANN001
    source = website(project, f"{site.url}/docs/index.html")
    first = source_sync(source=source)
    before = indexed(first.source)
    assert {"install.html", "faq.html"} <= before

    site.delay = 1.5  # every page now takes longer than the whole run may
    source.config = {**source.config, "run_seconds": 1}
    source.save()
    run = source_sync(source=source)

    assert run.status == SyncRun.Status.PARTIAL and run.removed == 0
    assert any("crawl's deadline (1 s) passed" in e["error"] for e in run.errors)
    assert indexed(run.source) == before


def test_a_start_url_at_an_internal_address_is_never_requested(
    store, project, listener, allow_loopback
) -> None:  # noqa: ANN001
    run = source_sync(source=website(project, f"{listener.url}/docs/index.html"))

    assert run.status == SyncRun.Status.FAILED
    assert "non-public address 127.0.0.2" in run.message
    assert "ASKDOCS_ALLOWED_PRIVATE_HOSTS" in run.message
    assert not listener.touched()


def test_a_redirect_to_an_internal_address_is_checked_before_it_is_followed(
    site, store, project, listener
) -> None:  # noqa: ANN001
    site.redirects["/docs/faq.html"] = f"{listener.url}/admin"

    run = source_sync(source=website(project, f"{site.url}/docs/index.html"))

    errors = {e["url"].rsplit("/", 1)[-1]: e["error"] for e in run.errors}
    assert errors["faq.html"] == f"redirected off the site to {listener.url}/admin; skipped"
    assert not listener.touched()


def test_the_allow_list_lets_a_named_internal_host_through(site, store, project, settings) -> None:  # noqa: ANN001
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    refused = source_sync(source=website(project, f"{site.url}/docs/index.html"))
    assert refused.status == SyncRun.Status.FAILED and "127.0.0.1" in refused.message

    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = ["127.0.0.0/30"]
    allowed = source_sync(source=refused.source)
    assert "install.html" in indexed(allowed.source)
