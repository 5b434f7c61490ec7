"""An admin sees documentation gaps apart from off-topic requests and answers voted down,
dismisses a gap, and sees it come back when a reader asks it again. Screenshots:
test-artifacts/console-blind-spots-kinds.png and console-blind-spots-dismissed.png."""

from __future__ import annotations

from datetime import timedelta

import pytest

from assistant.models import Interaction, Project
from feedback.models import Feedback
from tests.console.test_blind_spots import asked_at
from tests.console.test_console_browser import live, log_in, page, shot  # noqa: F401
from tests.ingestion.conftest import store  # noqa: F401 - fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_tells_gaps_from_off_topic_requests_and_dismisses_one(live, page):  # noqa: ANN001, F811
    demo = Project.objects.get(name="Demo")
    for question in ("Write me a poem about cats", "Tell me a joke"):
        asked_at(demo, question, topic="Billing")
    for question in ("Do you offer a student discount?", "Is there a discount for students?"):
        asked_at(demo, question, topic="Billing", ago=timedelta(hours=2))
    asked_at(demo, "Can I pay with Bitcoin?", topic="Billing")
    given = asked_at(demo, "Where are my invoices?", topic="Billing", refused=False)
    Feedback.objects.create(interaction=given, client_id="r-1", vote=-1, comment="Not there")

    log_in(page, live.url)
    page.goto(f"{live.url}/admin/blind-spots/?project={demo.pk}")
    off_topic = page.get_by_test_id("off-topic")
    assert "Write me a poem about cats" in off_topic.inner_text()
    assert "discount" not in off_topic.inner_text()
    gap = page.locator(".blind-group tr.cluster", has_text="discount")
    assert gap.get_attribute("data-kind") == "gap"
    assert "Where are my invoices?" in page.get_by_test_id("disliked").inner_text()
    shot(page, "blind-spots-kinds")

    gap.get_by_role("button", name="Dismiss").click()
    page.wait_for_selector("[data-testid=hidden]")
    assert page.locator(".blind-group tr.cluster", has_text="discount").count() == 0
    assert "Bitcoin" in page.locator(".blind-group").inner_text()  # the other gap stays
    shot(page, "blind-spots-dismissed")

    Interaction.objects.create(
        project=demo, channel="widget", question="Student pricing?", topic="Billing",
        retrieval_query="Student pricing?", best_relevance=0.01, refused=True,
    )  # fmt: skip
    page.reload()
    back = page.locator(".blind-group tr.cluster", has_text="discount")
    assert "asked again since dismissed" in back.get_by_test_id("returned").inner_text()
