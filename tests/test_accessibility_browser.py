# ruff: noqa: F811 - the fixtures `live` and `page` come from the widget tests
"""Keyboard and screen-reader use of the widget and the demo page, checked with axe-core in a
real Chromium (its rules reach into the widget's open shadow root), and the answer announced
once it is whole: the log is busy while it streams."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_widget_browser import ARTIFACTS, live, page  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "browser_tools" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def serious_violations(tab) -> list[str]:  # noqa: ANN001
    """axe-core's serious and critical findings on the whole page, the widget included."""
    tab.add_script_tag(path=str(AXE))
    found = tab.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in SERIOUS
    ]


def test_the_demo_page_and_the_open_widget_with_an_answer_have_no_serious_violations(
    live,
    page,
) -> None:
    assert AXE.is_file(), "axe-core is installed by .bin/test (tests/browser_tools)"
    page.goto(f"{live.url}/demo/billing/")
    assert serious_violations(page) == []

    page.get_by_role("button", name="Ask AI").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("textbox", name="Your question").press("Enter")
    answer = dialog.locator(".a").last
    answer.locator(".fb").wait_for()
    log = dialog.get_by_role("log")
    assert log.get_attribute("aria-live") == "polite" and log.get_attribute("aria-busy") == "false"
    page.screenshot(path=str(ARTIFACTS / "widget-accessibility-answer.png"))
    assert serious_violations(page) == []


def test_while_an_answer_streams_the_log_is_busy_and_shows_it_being_written(
    live,
    page,
    settings,
) -> None:
    """At a slow pace the words arrive one by one: the reader sees the answer grow, and a
    screen reader is told to wait until it is whole."""
    settings.ASKDOCS_STREAM_WORDS_PER_SECOND = 10  # the server runs in this process
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("() => AskAI.open()")
    page.evaluate("() => AskAI.ask('How do I get my money back?')")
    dialog = page.get_by_role("dialog")
    log = dialog.get_by_role("log")
    text = dialog.locator(".a").last.locator(".md")
    page.wait_for_function(
        "() => { const r = document.querySelector('ask-ai-widget').shadowRoot;"
        " const t = r.querySelector('.a:last-of-type .md'); return t && t.innerText.length > 0; }"
    )
    partial = text.inner_text()
    assert log.get_attribute("aria-busy") == "true"
    dialog.locator(".a").last.locator(".fb").wait_for()
    whole = text.inner_text()
    assert len(whole) > len(partial) and log.get_attribute("aria-busy") == "false"
