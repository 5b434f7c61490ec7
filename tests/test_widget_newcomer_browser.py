# ruff: noqa: F811 - the fixtures `live` and `page` come from the widget tests
"""The widget through a newcomer's ten questions (issue 31): the page's question is offered once,
not typed back mid-conversation; another page's topic draws the "New topic" line and starts
afresh; "Ask a person" after a thumbs-down comes into view; on a phone the [n] markers and the
source links are 44-pixel targets. Screenshots go to test-artifacts/widget-newcomer-*.png."""

from __future__ import annotations

import pytest

from tests.test_widget_browser import ARTIFACTS, live, page, record_frames, record_sent, widget  # noqa: F401
from tests.test_widget_points_browser import demo_with_support

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_pages_question_is_offered_once_not_typed_back_mid_conversation(live, page):
    page.goto(f"{live.url}/demo/billing/")
    page.get_by_role("button", name="Ask AI").click()
    dialog = page.get_by_role("dialog")
    box = dialog.get_by_role("textbox", name="Your question")
    assert box.input_value() == "How do I get my money back?"  # an empty conversation: offered
    box.press("Enter")
    dialog.locator(".a .fb").wait_for()
    assert box.input_value() == ""
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Ask AI").click()
    assert box.input_value() == ""  # mid-conversation: not typed back
    dialog.get_by_role("button", name="Not helpful").click()
    dialog.get_by_role("textbox", name="What was wrong? (optional)").wait_for()
    assert box.input_value() == ""
    page.reload()
    page.evaluate("AskAI.open()")
    assert box.input_value() == ""  # nor after a reload of the conversation
    page.screenshot(path=str(ARTIFACTS / "widget-newcomer-no-seed.png"))


def test_another_pages_topic_draws_the_line_and_starts_afresh(live, page):
    frames, sent = record_frames(page), record_sent(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask()")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").wait_for()
    first = [f for f in frames if f["type"] == "done"][0]["conversation_id"]

    page.goto(f"{live.url}/demo/tokens/")  # the site's next page, about another topic
    page.evaluate("AskAI.open()")
    separator = dialog.get_by_role("separator")
    assert separator.inner_text() == "New topic: Retrieval endpoint token management"
    page.evaluate("AskAI.ask('When does my token expire?')")
    dialog.locator(".a .fb").nth(1).wait_for()
    assert "conversation_id" not in sent[-1]  # a fresh conversation on the server
    assert [f for f in frames if f["type"] == "done"][-1]["conversation_id"] != first
    page.screenshot(path=str(ARTIFACTS / "widget-newcomer-next-page-topic.png"))
    page.reload()  # the same page again: one line, not a second
    page.evaluate("AskAI.open()")
    assert dialog.get_by_role("separator").count() == 1


def test_ask_a_person_after_a_thumbs_down_is_in_view(live, page):
    demo_with_support("email", "help@acme.example")
    page.goto(f"{live.url}/demo/billing/")
    dialog = page.get_by_role("dialog")
    for question in ("How do I get my money back?", "How do I change my plan?"):
        page.evaluate(f"AskAI.ask({question!r})")
        dialog.locator(".a .fb").last.wait_for()
    dialog.locator(".a").last.get_by_role("button", name="Not helpful").click()
    person = dialog.locator(".a").last.get_by_role("button", name="Ask a person")
    person.wait_for()
    page.wait_for_function(
        """() => { const root = document.querySelector('ask-ai-widget').shadowRoot;
             const log = root.querySelector('.log').getBoundingClientRect();
             const b = root.querySelector('.a:last-of-type .person button').getBoundingClientRect();
             return b.top >= log.top && b.bottom <= log.bottom; }"""
    )
    page.screenshot(path=str(ARTIFACTS / "widget-newcomer-ask-a-person-in-view.png"))


def test_on_a_phone_citation_markers_and_source_links_are_44_pixel_targets(live, page):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask('How do I get my money back?')")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").wait_for()
    targets = widget(page).evaluate(
        """host => { const root = host.shadowRoot;
             return [...root.querySelectorAll('.a a.cite, .a .src a')].map(n => {
               const r = n.getBoundingClientRect();
               const hit = root.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
               return [n.textContent.trim(), r.width, r.height, hit === n || n.contains(hit)];
             }); }"""
    )
    assert any(name == "[1]" for name, *_ in targets) and len(targets) >= 2, targets
    small = [t for t in targets if t[1] < 44 or t[2] < 44 or not t[3]]
    assert small == []
    page.screenshot(path=str(ARTIFACTS / "widget-newcomer-phone-targets.png"))
