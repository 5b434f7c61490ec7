"""A reader has a two-question conversation in the widget and votes the follow-up down; an
admin finds it on the conversations page (filters, search), reads the transcript with its
sources and scores, and replays the follow-up in the sandbox with the earlier question.
Screenshots: test-artifacts/console-conversations.png, console-conversation.png and
console-sandbox-replay.png."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, Project
from tests.console.history import log_history
from tests.console.test_console_browser import htmx_settled, live, log_in, page, shot  # noqa: F401
from tests.ingestion.conftest import site, store  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIRST = "How do I get my money back?"
FOLLOW_UP = "And how long does it take?"


def a_reader_asks_twice_and_votes_the_follow_up_down(admin, url: str) -> None:  # noqa: ANN001
    reader = admin.context.new_page()
    reader.goto(f"{url}/demo/billing/")
    reader.wait_for_function("window.AskAI")
    reader.evaluate("AskAI.open()")
    answers = reader.get_by_role("dialog").locator(".a")
    reader.evaluate(f"AskAI.ask({FIRST!r})")
    answers.nth(0).locator(".fb").wait_for()
    reader.evaluate(f"AskAI.ask({FOLLOW_UP!r})")
    follow_up = answers.nth(1)
    follow_up.locator(".fb").wait_for()
    follow_up.get_by_role("button", name="Not helpful").click()
    follow_up.get_by_role("textbox", name="What was wrong? (optional)").fill("Which days?")
    follow_up.get_by_role("button", name="Send").click()
    follow_up.get_by_text("Thank you").wait_for()
    reader.close()


def test_an_admin_reads_a_readers_conversation_and_replays_it_in_the_sandbox(live, page):  # noqa: ANN001, F811
    demo = Project.objects.get(name="Demo")
    a_reader_asks_twice_and_votes_the_follow_up_down(page, live.url)
    first = Interaction.objects.get(project=demo, question=FIRST)
    assert first.conversation_id
    assert Interaction.objects.filter(conversation_id=first.conversation_id).count() == 2
    log_history(demo, days=7)  # other readers' questions around it

    log_in(page, live.url)
    page.click("nav >> text=Overview")  # where a login without a page to return to lands
    assert int(page.get_by_test_id("questions").inner_text()) > 2
    assert FIRST in page.inner_text("main")  # among the latest conversations
    shot(page, "overview")
    page.click("nav >> text=Conversations")
    row = page.locator(f"tr[data-conversation='{first.conversation_id}']")
    row.wait_for()
    assert FIRST in row.inner_text() and "2" in row.locator("td.num").inner_text()
    assert row.locator("[data-mark=down]").count() == 1
    total = page.locator("tr[data-conversation]").count()
    assert total > 1

    # Only conversations with a thumbs-down, then only those that mention the follow-up.
    page.check("#id_voted_down")
    page.wait_for_url(lambda url: "voted_down=on" in url)
    htmx_settled(page)
    marks = page.locator("tr[data-conversation]")
    assert marks.count() >= 1
    assert marks.count() == page.locator("tr[data-conversation]:has([data-mark=down])").count()
    page.fill("#id_q", "how long does it take")
    page.wait_for_url(lambda url: "q=how%20long" in url or "q=how+long" in url)
    htmx_settled(page)
    assert page.locator("tr[data-conversation]").count() == 1
    row.wait_for()
    shot(page, "conversations")

    row.locator("a").click()
    page.wait_for_selector("[data-turn='2']")
    turns = page.locator("section.turn")
    assert FIRST in turns.nth(0).get_by_test_id("question").inner_text()
    assert FOLLOW_UP in turns.nth(1).get_by_test_id("question").inner_text()
    assert turns.nth(1).locator("[data-mark=down]").count() == 1
    assert "Which days?" in turns.nth(1).inner_text()
    if not first.refused:
        sources = turns.nth(0).get_by_test_id("sources")
        assert "relevance" in sources.inner_text()
    turns.nth(0).locator("summary").click()
    assert turns.nth(0).locator("table.candidates tbody tr").count() == len(first.candidates)
    shot(page, "conversation")

    turns.nth(1).get_by_test_id("open-in-sandbox").click()
    page.wait_for_selector("[data-testid=retrieval-query]")
    assert page.input_value("#id_question") == FOLLOW_UP
    assert page.input_value("#id_previous") == FIRST
    query = page.inner_text("[data-testid=retrieval-query]")
    assert query.startswith("(Billing)")
    assert page.get_by_test_id("query-form").is_visible()  # judged with the earlier question
    shot(page, "sandbox-replay")
