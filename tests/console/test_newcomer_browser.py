"""The console as a new team sees it on a 1,366-pixel laptop screen (issue 31): one row of
navigation with the manual's link, tables inside their cards, a marks column that lines up, a
breadcrumb that does not end in a slash, a button that reads as an action, and a sync whose bar
never goes back while "Sync now" waits. Screenshots: test-artifacts/console-1366-*.png."""

from __future__ import annotations

import re

import pytest

from assistant.models import Interaction, Project
from tests.console.history import log_history
from tests.console.test_console_browser import live, log_in, page, shot  # noqa: F401
from tests.ingestion.conftest import site, store  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def wide(tab) -> None:  # noqa: ANN001
    tab.set_viewport_size({"width": 1366, "height": 768})


def inside(tab, inner: str, outer: str) -> bool:  # noqa: ANN001
    """The inner element's right edge stays within the outer one's."""
    return tab.evaluate(
        """([inner, outer]) => {
             const a = document.querySelector(inner).getBoundingClientRect();
             const b = document.querySelector(outer).getBoundingClientRect();
             return a.right <= b.right + 0.5 && a.left >= b.left - 0.5;
           }""",
        [inner, outer],
    )


def test_the_console_fits_a_laptop_screen(live, page):  # noqa: ANN001, F811
    from assistant.demo import PROJECT_NAME

    demo = Project.objects.get(name=PROJECT_NAME)
    log_history(demo)
    Interaction.objects.create(
        project=demo, channel="widget", conversation_id="c-marks", question="Can I pay by cheque?",
        retrieval_query="q", answer="I'm sorry", refused=True,
    )  # fmt: skip
    wide(page)
    log_in(page, live.url)

    # One row of navigation, the manual's link in it.
    page.goto(f"{live.url}/admin/overview/?project={demo.pk}")
    tops = page.eval_on_selector_all(
        ".console-nav a", "links => links.map(a => Math.round(a.getBoundingClientRect().top))"
    )
    assert len(set(tops)) == 1, tops
    assert page.evaluate(  # nothing hidden under the account's links, nothing to scroll
        """() => { const nav = document.querySelector('.console-nav');
             const last = nav.lastElementChild.getBoundingClientRect();
             const who = document.querySelector('.who').getBoundingClientRect();
             return last.right <= who.left && nav.scrollWidth <= nav.clientWidth; }"""
    )
    docs = page.locator("a.docs-link")
    assert docs.is_visible() and docs.get_attribute("href") == "/docs/console/#overview"
    header = page.evaluate("document.querySelector('header.topbar').getBoundingClientRect().height")
    assert header < 70
    shot(page, "1366-overview")

    # The tuner's replay table fits its card.
    page.goto(f"{live.url}/admin/tuner/?project={demo.pk}")
    shot(page, "1366-tuner")
    assert inside(page, "table.tuner", ".table-scroll")
    assert inside(page, ".table-scroll", "section.card:has(table.tuner)")
    assert page.evaluate(
        "(() => { const s = document.querySelector('.table-scroll');"
        " return s.scrollWidth <= s.clientWidth; })()"
    )

    # The conversations' marks stay in their column: cells of a table, rows of equal height.
    page.goto(f"{live.url}/admin/conversations/?project={demo.pk}")
    rows = page.locator("tr[data-conversation]")
    assert rows.count() > 5
    displays = page.eval_on_selector_all(
        "td.marks", "cells => cells.map(td => getComputedStyle(td).display)"
    )
    assert set(displays) == {"table-cell"}
    misaligned = page.evaluate(
        """() => [...document.querySelectorAll('tr[data-conversation]')].filter(tr => {
             const row = tr.getBoundingClientRect();
             const cell = tr.querySelector('td.marks').getBoundingClientRect();
             return Math.abs(cell.top - row.top) > 0.5 || Math.abs(cell.height - row.height) > 0.5;
           }).length"""
    )
    assert misaligned == 0
    shot(page, "1366-conversations")

    # A transcript's breadcrumb names where you are, without a trailing slash.
    rows.first.locator("a.strong-link").click()
    page.wait_for_selector("section.turn")
    crumbs = page.inner_text(".crumbs").strip()
    assert crumbs == "Conversations" and not crumbs.endswith("/")
    shot(page, "1366-transcript")

    # Blind spots: the mark is an action, said as one.
    page.goto(f"{live.url}/admin/blind-spots/?project={demo.pk}")
    button = page.get_by_role("button", name="Mark resolved").first
    assert button.is_visible()
    assert page.get_by_role("button", name="Resolved", exact=True).count() == 0
    shot(page, "1366-blind-spots")

    # Relevance: the day's zone, said as the viewer's.
    page.goto(f"{live.url}/admin/metrics/?project={demo.pk}")
    text = page.inner_text("main .page-head")
    assert "Days in your time zone, America/New_York" in text
    shot(page, "1366-relevance")


def test_a_syncs_bar_only_moves_forward_and_sync_now_waits_for_it(live, page, site):  # noqa: ANN001, F811
    from assistant.demo import PROJECT_NAME
    from ingestion.models import Source

    demo = Project.objects.get(name=PROJECT_NAME)
    site.delay = 0.6
    site.held = {"/docs/broken.html"}  # the last level of the crawl waits until we let it go
    source = Source.objects.create(
        project=demo, kind="website", name="Levels", schedule="off",
        config={"start_url": f"{site.url}/docs/", "max_pages": 10},
    )  # fmt: skip
    wide(page)
    log_in(page, live.url)
    page.goto(f"{live.url}/admin/sources/{source.pk}/")
    page.click("#sync-now button")
    page.wait_for_url(re.compile(r"/admin/sources/\d+/\?after=\d+$"))
    # Every value the bar takes, as htmx swaps the run in each second.
    page.evaluate(
        """() => { window.seen = [];
             const bars = '[data-run-status=running] [role=progressbar]';
             const note = () => document.querySelectorAll(bars)
               .forEach(bar => window.seen.push(+bar.getAttribute('aria-valuenow')));
             new MutationObserver(note).observe(document.body, {subtree: true, childList: true});
             note(); }"""
    )
    page.wait_for_selector("[data-run-status=running] [role=progressbar]:not([aria-valuenow='0'])")
    button = page.locator("#sync-now button")
    assert button.is_disabled() and button.inner_text() == "Syncing…"
    shot(page, "1366-source-syncing")
    site.released.set()
    page.wait_for_selector(
        "[data-run-status=partial], [data-run-status=succeeded]", timeout=120_000
    )
    page.wait_for_function("!document.querySelector('#sync-now button').disabled")
    assert button.inner_text() == "Sync now"
    seen = page.evaluate("window.seen")
    assert len(set(seen)) >= 2 and seen == sorted(seen), seen
    assert max(seen) < 100  # not "done" while it was still running
    shot(page, "1366-source-synced")
