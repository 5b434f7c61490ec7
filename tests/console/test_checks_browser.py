"""A conversation kept as a check, in a real browser on the demo: a visitor is answered in the
widget; the lead keeps the turn as a check (answered, citing the Plans section, saying the
price), runs the checks with live progress, then tries a higher threshold on the project's
settings and is shown, before saving, that it would break the check. Screenshots:
test-artifacts/console-checks-1-keep.png ... console-checks-3-threshold.png."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, Project
from feedback.models import AnswerCheck
from tests.console.test_console_browser import live, log_in, page, shot  # noqa: F401
from tests.ingestion.conftest import site, store  # noqa: F401 - fixtures
from tests.test_accessibility_browser import serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PRICE = "How much does the Team plan cost?"


@pytest.mark.usefixtures("tasks_here")
def test_a_kept_conversation_is_run_and_a_threshold_that_breaks_it_is_shown(live, page):  # noqa: ANN001, F811
    demo = Project.objects.get(name="Demo")
    reader = page.context.new_page()
    reader.goto(f"{live.url}/demo/billing/")
    reader.wait_for_function("window.AskAI")
    reader.evaluate("AskAI.open()")
    reader.evaluate(f"AskAI.ask({PRICE!r})")
    answer = reader.get_by_role("dialog").locator(".a").last
    answer.locator(".fb").wait_for()
    assert "12 USD" in answer.inner_text()
    reader.close()
    turn = Interaction.objects.get(project=demo, question=PRICE)
    relevance = turn.sources[0]["relevance"]

    log_in(page, live.url)
    page.goto(f"{live.url}/admin/conversations/view/?project={demo.pk}&id={turn.conversation_id}")
    page.get_by_test_id("keep-as-check").first.click()
    page.wait_for_selector("h1:has-text('Keep as a check')")
    assert page.input_value("#id_question") == PRICE
    assert page.is_checked("input[name=expect][value=answered]")
    assert page.input_value("#id_cites") == "Plans and billing > Plans"
    page.fill("#id_facts", "12 USD")
    shot(page, "checks-1-keep")
    page.get_by_test_id("save-check").click()
    page.wait_for_selector("[data-testid=checks] tr[data-check]")

    page.get_by_test_id("run-checks").click()
    page.wait_for_selector("tr[data-check][data-passed=yes]")
    assert "1 run in" in page.get_by_test_id("run-summary").inner_text()
    shot(page, "checks-2-run")
    assert serious_violations(page) == []

    # A threshold just above the answer's relevance: shown to break the check, not saved.
    higher = min(1.0, round(relevance + 0.005, 3))
    page.goto(f"{live.url}/admin/projects/{demo.pk}/")
    page.fill("#id_threshold", str(higher))
    page.dispatch_event("#id_threshold", "change")
    warning = page.get_by_test_id("checks-threshold")
    warning.wait_for()
    assert "would break 1 of 1 check" in warning.inner_text()
    assert PRICE in warning.inner_text()
    shot(page, "checks-3-threshold")
    demo.refresh_from_db()
    assert demo.threshold == 0.5
    assert AnswerCheck.objects.get(project=demo).passed is True
