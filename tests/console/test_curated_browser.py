"""The loop closed, in a real browser on the demo: a visitor is refused the paraphrase "Can I
switch to a cheaper plan in the middle of the month?" and votes it down; the lead opens the
conversation, writes the right answer from the turn; the visitor asks again and is answered by
the team, with no document written and no sync started. Screenshots:
test-artifacts/console-curated-0-blind-spot.png ... console-curated-6-overview.png."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, Project
from ingestion.models import CuratedAnswer, SyncRun
from tests.console.test_console_browser import live, log_in, page, shot  # noqa: F401
from tests.curated_fixtures import CHEAPER
from tests.ingestion.conftest import site, store  # noqa: F401 - fixtures
from tests.test_accessibility_browser import serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANSWER = (
    "Yes. You can move to a cheaper plan at any time under **Settings → Billing → Change "
    "plan**. The downgrade takes effect at the start of the next billing period, so you keep "
    "your current plan until then. See [Changing plan]"
    "(https://help.acme.example/plans#changing-plan)."
)


def ask_in_the_widget(reader, question: str):  # noqa: ANN001, ANN201
    reader.evaluate(f"AskAI.ask({question!r})")
    answer = reader.get_by_role("dialog").locator(".a").last
    answer.locator(".fb").wait_for()
    return answer


def test_a_lead_writes_the_answer_from_a_transcript_and_the_widget_answers_it(live, page):  # noqa: ANN001, F811
    demo = Project.objects.get(name="Demo")
    runs_before = SyncRun.objects.count()
    reader = page.context.new_page()
    reader.set_viewport_size({"width": 1000, "height": 800})
    reader.goto(f"{live.url}/demo/billing/")
    reader.wait_for_function("window.AskAI")
    reader.evaluate("AskAI.open()")
    refused = ask_in_the_widget(reader, CHEAPER)
    assert "couldn't find an answer" in refused.inner_text()
    refused.get_by_role("button", name="Not helpful").click()
    refused.get_by_role("textbox", name="What was wrong? (optional)").fill(
        "The Changing plan section says I can downgrade any time!"
    )
    refused.get_by_role("button", name="Send").click()
    refused.get_by_text("Thank you").wait_for()
    reader.screenshot(path="test-artifacts/console-curated-1-refused.png")
    turn = Interaction.objects.get(project=demo, question=CHEAPER)

    log_in(page, live.url)
    page.goto(f"{live.url}/admin/overview/?project={demo.pk}")
    assert page.get_by_test_id("open-thumbs-down").inner_text() == "1"
    page.goto(f"{live.url}/admin/blind-spots/?project={demo.pk}")
    cluster = page.locator("tr.cluster", has_text=CHEAPER)
    assert "downgrade any time" in cluster.get_by_test_id("visitor-comment").inner_text()
    assert cluster.get_by_test_id("write-answer").is_visible()
    shot(page, "curated-0-blind-spot")
    page.goto(f"{live.url}/admin/conversations/view/?project={demo.pk}&id={turn.conversation_id}")
    section = page.locator("section.turn").first
    assert section.locator("[data-mark=down]").count() == 1
    shot(page, "curated-2-transcript")
    section.get_by_test_id("write-answer").click()
    page.wait_for_selector("h1:has-text('Write the answer')")
    assert page.input_value("#id_phrasings") == CHEAPER
    assert "downgrade any time" in page.get_by_test_id("origin").inner_text()
    page.fill("#id_phrasings", f"{CHEAPER}\nCan I downgrade before my billing period ends?")
    page.fill("#id_answer", ANSWER)
    page.fill("#id_url", "https://help.acme.example/plans#changing-plan")
    page.get_by_label("Plans and billing > Changing plan").check()
    shot(page, "curated-3-form")
    assert serious_violations(page) == []
    page.get_by_test_id("save-answer").click()
    page.wait_for_selector("[data-testid=curated-answers] tr[data-curated]")
    assert CHEAPER in page.inner_text("[data-testid=curated-answers]")

    again = ask_in_the_widget(reader, CHEAPER)
    text = again.inner_text()
    assert "Answer from the team" in again.locator(".team").inner_text()
    assert "next billing period" in text and "couldn't find" not in text
    link = again.locator("ol.src a")
    assert link.inner_text() == "Answer from the team"
    assert link.get_attribute("href") == "https://help.acme.example/plans#changing-plan"
    reader.screenshot(path="test-artifacts/console-curated-4-answered.png")
    assert serious_violations(reader) == []

    page.reload()
    row = page.locator("[data-testid=curated-answers] tr[data-curated]").first
    assert row.get_by_test_id("answered-count").inner_text() == "1"
    shot(page, "curated-5-listed")
    assert serious_violations(page) == []
    page.goto(f"{live.url}/admin/overview/?project={demo.pk}")
    assert page.get_by_test_id("open-thumbs-down").inner_text() == "0"
    assert page.get_by_test_id("curated-count").inner_text() == "1"
    shot(page, "curated-6-overview")
    curated = CuratedAnswer.objects.get(source__project=demo)
    assert curated.from_answer_id == str(turn.answer_id)
    assert [s["title"] for s in curated.rests_on] == ["Plans and billing > Changing plan"]
    assert SyncRun.objects.count() == runs_before  # no sync was started
