"""The widget on a demo page answered by the real local model, in a real headless Chromium:
the quote from the docs at once, under its label, while the model reads; then the written
answer after it, under its own label, with the sources both cite."""

from __future__ import annotations

import pytest

from assistant.models import Interaction
from assistant.wiring import runtime
from tests.test_local_model import model  # noqa: F401 - fixture
from tests.test_widget_browser import ARTIFACTS, live, page, record_frames  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.local_model, pytest.mark.django_db(transaction=True)]


def test_the_quote_comes_first_and_the_written_answer_after(live, page, model, settings):  # noqa: ANN001, F811
    from assistant.models import Project

    # Time enough for the model on a busy machine: this is about what the reader sees.
    settings.ASKDOCS_LOCAL_FIRST_TOKEN_TIMEOUT = 900
    settings.ASKDOCS_LOCAL_BETWEEN_TOKENS_TIMEOUT = 120
    settings.ASKDOCS_MAX_GENERATION_SECONDS = 900
    settings.ASKDOCS_WRITE_WITHIN = 0  # wait for the first written word, however busy
    Project.objects.filter(name="Demo").update(generator="local")
    runtime.reset()
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.open()")
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("textbox").press("Enter")  # the page's own question
    answer = dialog.locator(".a").first

    answer.get_by_text("Quoted from the docs").wait_for(timeout=60_000)
    status = dialog.get_by_role("status").first
    status.filter(has_text="The quote above is from the docs").wait_for()
    assert "refund" in answer.locator(".md").first.inner_text().lower()
    page.screenshot(path=str(ARTIFACTS / "widget-local-quote-first.png"))

    answer.locator(".fb").wait_for(timeout=900_000)  # the answer is done
    page.screenshot(path=str(ARTIFACTS / "widget-local-written-after.png"))

    kinds = [f["type"] for f in frames]
    assert kinds.index("token") < kinds.index("written") < kinds.index("done")
    done = frames[kinds.index("done")]
    assert done["written"] == "complete" and done["generator"] == model.id
    written = answer.locator(".written")
    assert written.is_visible() and "In the assistant's words" in written.inner_text()
    assert "refund" in written.locator(".md").inner_text().lower()
    assert answer.get_by_role("list", name="Sources").count() == 1
    logged = Interaction.objects.get(answer_id=done["answer_id"])
    assert logged.generator == model.id and not logged.fallback
