"""The widget on a demo page answered by the real local model, in a real headless Chromium: a
conversation of two questions, the status line while the model reads, written answers with
their sources, and the done frames naming the model."""

from __future__ import annotations

import pytest

from assistant.models import Interaction
from assistant.wiring import runtime
from tests.test_local_model import model  # noqa: F401 - fixture
from tests.test_widget_browser import ARTIFACTS, live, page, record_frames  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.local_model, pytest.mark.django_db(transaction=True)]


def test_a_reader_converses_with_the_local_model_in_the_widget(live, page, model):  # noqa: F811
    from assistant.models import Project

    Project.objects.filter(name="Demo").update(generator="local")
    runtime.reset()
    statuses: list[str] = []
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.open()")
    dialog = page.get_by_role("dialog")
    status = dialog.get_by_role("status").first
    dialog.get_by_role("textbox").press("Enter")  # the page's own question
    status.filter(has_text="Reading the sources").wait_for()
    statuses.append(status.inner_text())
    dialog.locator(".a .fb").first.wait_for()

    page.evaluate("AskAI.ask('And how long does it take to reach my card?')")
    dialog.locator(".a .fb").nth(1).wait_for()
    page.screenshot(path=str(ARTIFACTS / "widget-local-model.png"))

    answers = dialog.locator(".a .md")
    assert "refund" in answers.nth(0).inner_text().lower()
    assert "business days" in answers.nth(1).inner_text()
    assert dialog.locator(".a").nth(0).get_by_role("list", name="Sources").count() == 1
    done = [f for f in frames if f["type"] == "done"]
    assert [d["generator"] for d in done] == [model.id, model.id]
    assert done[0]["conversation_id"] == done[1]["conversation_id"]
    assert any(f["type"] == "waiting" for f in frames)
    assert statuses[0].startswith("Reading the sources")
    second = Interaction.objects.get(answer_id=done[1]["answer_id"])
    assert second.generator == model.id and not second.fallback
