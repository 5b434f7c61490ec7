# ruff: noqa: F811 - the fixtures `live` and `page` come from the widget tests
"""A handoff on a server without a mail server, as a visitor lives it (issue 43): the widget
says the request was saved and not sent, and after a reload the refusal shows what the visitor
was told, not "Ask a person" again. Desktop and a 390-pixel phone; screenshots in
test-artifacts/."""

from __future__ import annotations

import pytest

from assistant.handoff.models import Handoff
from tests.test_widget_browser import ARTIFACTS, live, page  # noqa: F401
from tests.test_widget_points_browser import CHEQUE, demo_with_support

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_handoff_without_mail_is_told_honestly_and_not_offered_again_after_a_reload(
    live, page, settings, tmp_path, width
):
    settings.EMAIL_BACKEND = "assistant.handoff.outbox.OutboxBackend"
    settings.EMAIL_FILE_PATH = tmp_path / "outbox"
    demo_with_support("email", "help@acme.example")
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate(f"AskAI.ask({CHEQUE!r})")
    dialog = page.get_by_role("dialog")
    refusal = dialog.locator(".a.refused").last
    refusal.locator(".fb").wait_for()
    refusal.get_by_role("button", name="Ask a person").click()
    refusal.get_by_role("textbox", name="Your e-mail, so a person can reply (optional)").fill(
        "ada@example.org"
    )
    refusal.get_by_role("button", name="Send to a person").click()
    told = refusal.get_by_role("status")
    told.get_by_text("Your request is saved, but this site cannot send e-mail yet").wait_for()
    assert "We've sent" not in told.inner_text() and "A person will reply" not in told.inner_text()
    page.screenshot(path=str(ARTIFACTS / f"widget-handoff-no-mail-{width}.png"))
    assert Handoff.objects.count() == 1

    page.reload()
    page.evaluate("AskAI.open()")
    refusal = page.get_by_role("dialog").locator(".a.refused").last
    refusal.wait_for()
    assert refusal.get_by_role("button", name="Ask a person").count() == 0
    assert "Your request is saved" in refusal.get_by_role("status").inner_text()
    page.screenshot(path=str(ARTIFACTS / f"widget-handoff-after-reload-{width}.png"))
    assert Handoff.objects.count() == 1
