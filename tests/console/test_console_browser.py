"""An admin walks the console in a real headless Chromium against the real ASGI server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.models import Interaction
from feedback.models import Feedback
from tests.live_server import LiveAsgiServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


@pytest.fixture
def live(transactional_db, monkeypatch, django_user_model) -> Iterator[LiveAsgiServer]:  # noqa: ANN001
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from assistant.demo import demo_seed

    demo_seed()
    django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    with LiveAsgiServer() as server:
        yield server


@pytest.fixture
def page():  # noqa: ANN201
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, timezone_id="America/New_York"
        )
        page = context.new_page()
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def test_an_admin_logs_in_asks_in_the_sandbox_and_finds_a_refusal_under_blind_spots(live, page):
    from assistant.demo import PROJECT_NAME
    from assistant.models import Project

    demo = Project.objects.get(name=PROJECT_NAME)
    refused = Interaction.objects.create(
        project=demo, channel="widget", question="Do you offer a student discount?",
        topic="Billing", retrieval_query="(Billing) Do you offer a student discount?",
        best_relevance=0.02, kept_count=0, refused=True, total_ms=80,
    )  # fmt: skip

    Feedback.objects.create(
        interaction=refused, client_id="browser-client-1", vote=-1, comment="Please add this."
    )

    page.goto(f"{live.url}/admin/sandbox/")
    assert "/admin/login/" in page.url
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-ada-123")
    page.screenshot(path=str(ARTIFACTS / "console-login.png"))
    page.click("button[type=submit]")
    page.wait_for_url("**/admin/sandbox/")

    page.click("nav >> text=Projects")
    page.click(f"text={demo.name}")
    snippet = page.input_value("#snippet")
    assert f'data-project="{demo.public_key}"' in snippet
    page.screenshot(path=str(ARTIFACTS / "console-project.png"), full_page=True)
    page.click("nav >> text=Sandbox")

    page.fill("#id_question", "How do I get my money back?")
    page.fill("#id_topic", "Billing")
    page.click("form.sandbox-form button[type=submit]")
    page.wait_for_selector("[data-testid=retrieval-query]")
    assert (
        page.inner_text("[data-testid=retrieval-query]") == "(Billing) How do I get my money back?"
    )
    kept = page.locator("tr.kept").count()
    assert kept >= 1
    assert "refund" in page.inner_text("[data-testid=answer]").lower()
    page.screenshot(path=str(ARTIFACTS / "console-sandbox.png"), full_page=True)

    # The slider re-filters the same candidates without asking the server again.
    page.locator("#id_threshold").fill("1")
    assert page.locator("tr.kept").count() == 0
    assert "says it doesn't know" in page.inner_text("[data-verdict]")
    page.locator("#id_threshold").fill("0")
    assert page.locator("tr.kept").count() == demo.max_kept

    page.click("nav >> text=Relevance")
    page.wait_for_selector("[data-testid=total]")
    assert page.inner_text("[data-testid=tz]") == "America/New_York"
    page.screenshot(path=str(ARTIFACTS / "console-metrics.png"), full_page=True)

    page.click("nav >> text=Blind spots")
    row = page.locator("tr", has_text="Do you offer a student discount?")
    row.wait_for()
    page.screenshot(path=str(ARTIFACTS / "console-blind-spots.png"), full_page=True)
    row.locator("text=Open in sandbox").click()
    page.wait_for_selector("[data-testid=retrieval-query]")
    assert "(Billing) Do you offer a student discount?" in page.inner_text(
        "[data-testid=retrieval-query]"
    )
    assert "say" in page.inner_text("[data-verdict]")

    page.click("nav >> text=Feedback")
    row = page.locator("tr[data-vote=down]", has_text="Do you offer a student discount?")
    row.wait_for()
    assert "Please add this." in row.inner_text()
    page.select_option("#id_vote", "up")  # htmx swaps the list
    page.wait_for_selector("text=No feedback matches these filters.")
    assert "vote=up" in page.url
    page.select_option("#id_vote", "down")
    page.wait_for_selector("tr[data-vote=down]")
    page.screenshot(path=str(ARTIFACTS / "console-feedback.png"), full_page=True)

    page.click("nav >> text=Threshold tuner")
    page.wait_for_selector("tr.current[data-threshold='0.5']")
    page.screenshot(path=str(ARTIFACTS / "console-tuner.png"), full_page=True)
