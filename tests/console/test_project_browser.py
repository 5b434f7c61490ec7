"""In a real headless Chromium against the real ASGI server: an admin creates a project in the
console, copies its secret key from the one page that shows it, rotates it (confirming the
dialog) and sees the new key once, then only its hint; sets the project's memory settings and
issues, reads once and revokes a support source's webhook token. Screenshots:
test-artifacts/console-project-{created,secret-rotated,secret-hint,memory-saved}.png and
test-artifacts/console-webhook-{issued,listed,revoked}.png; a day at 0% thumbs-up is a visible
bar in the feedback chart: test-artifacts/console-feedback-zero-day.png."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from assistant.models import Project
from ingestion.models import Source
from ingestion.support_answers import source_webhook_token_valid
from tests.console.test_console_browser import page, shot  # noqa: F401 - the page fixture
from tests.console.test_feedback_pages import voted
from tests.live_server import LiveAsgiServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live(transactional_db, monkeypatch, django_user_model) -> Iterator[LiveAsgiServer]:  # noqa: ANN001
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    with LiveAsgiServer() as server:
        yield server


def test_an_admin_creates_a_project_and_sees_its_secret_key_once(live, page):  # noqa: F811
    # A login without a page to return to lands on the console.
    page.goto(f"{live.url}/admin/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-ada-123")
    page.click("button[type=submit]")
    page.wait_for_selector("nav >> text=Projects")

    page.click("nav >> text=Projects")
    page.fill("#id_name", "Docs")
    page.fill("#id_allowed_origins", "https://docs.example")
    page.click("button:has-text('Create project')")
    page.wait_for_selector("[data-testid=secret-key]")
    project = Project.objects.get(name="Docs")
    first = page.text_content("[data-testid=secret-key]")
    assert first and project.secret_key_matches(first)
    shot(page, "project-created")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Rotate secret key')")
    page.wait_for_function(
        "old => { const k = document.querySelector('[data-testid=secret-key]');"
        " return k && k.textContent !== old; }",
        arg=first,
    )
    project.refresh_from_db()
    assert project.secret_key_matches(page.text_content("[data-testid=secret-key]") or "")
    shot(page, "project-secret-rotated")

    page.reload()
    assert page.locator("[data-testid=secret-key]").count() == 0
    assert page.text_content("[data-testid=secret-hint]") == project.secret_key_hint
    shot(page, "project-secret-hint")


def log_in(page, url: str) -> None:  # noqa: ANN001, F811
    page.goto(f"{url}/admin/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-ada-123")
    page.click("button[type=submit]")
    page.wait_for_selector("nav >> text=Projects")


def test_an_admin_sets_the_memory_settings_on_the_project_page(live, page):  # noqa: F811
    project = Project.objects.create(name="Docs")
    log_in(page, live.url)
    page.goto(f"{live.url}/admin/projects/{project.pk}/")
    page.get_by_label("Memory threshold").fill("0.7")
    page.get_by_label("Remember statements").check()
    page.click("button:has-text('Save')")
    page.wait_for_selector("text=Project saved.")
    project.refresh_from_db()
    assert project.memory_threshold == 0.7 and project.memory_learns_statements
    assert page.get_by_label("Memory threshold").input_value() == "0.7"
    shot(page, "project-memory-saved")


def push(url: str, source: Source, token: str) -> int:
    body = {"id": "t-1", "question": "q", "answer": "a"}
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.post(
        f"{url}/api/v1/sources/{source.pk}/answers", json=body, headers=headers
    ).status_code


def test_an_admin_issues_a_webhook_token_sees_it_once_and_revokes_it(live, page):  # noqa: F811
    project = Project.objects.create(name="Docs")
    source = Source.objects.create(
        project=project,
        kind="support",
        name="Desk",
        schedule="off",
        config={"provider": "import"},
    )
    log_in(page, live.url)
    page.goto(f"{live.url}/admin/sources/{source.pk}/")
    assert page.is_visible("[data-testid=webhook-none]")
    page.click("button:has-text('Issue a token')")
    page.wait_for_selector("[data-testid=webhook-token]")
    token = page.text_content("[data-testid=webhook-token]") or ""
    source.refresh_from_db()
    assert token.startswith("whk_") and source_webhook_token_valid(source=source, token=token)
    assert page.text_content("[data-testid=webhook-hint]") == f"whk_…{token[-4:]}"
    shot(page, "webhook-issued")

    page.reload()
    assert page.locator("[data-testid=webhook-token]").count() == 0
    assert token not in page.content()
    assert page.text_content("[data-testid=webhook-hint]") == f"whk_…{token[-4:]}"
    shot(page, "webhook-listed")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Revoke')")
    page.wait_for_selector("[data-testid=webhook-none]")
    shot(page, "webhook-revoked")
    source.refresh_from_db()
    assert not source_webhook_token_valid(source=source, token=token)
    assert push(live.url, source, token) == 401


def test_a_day_at_zero_percent_shows_as_a_bar_in_the_feedback_chart(live, page):  # noqa: F811
    project = Project.objects.create(name="Docs")
    voted(project, "Refunds?", -1, days_ago=2)  # a day at 0%
    voted(project, "Plans?", 1, days_ago=1)  # a day at 100%
    log_in(page, live.url)
    page.goto(f"{live.url}/admin/feedback/?project={project.pk}")
    zero = page.locator(".chart rect.zero")
    assert zero.count() == 1
    assert zero.locator("title").text_content().endswith(": 0%")
    box = zero.bounding_box()
    assert zero.is_visible() and box is not None and box["height"] > 0 and box["width"] > 0
    assert page.locator(".chart text.zero-value").text_content() == "0%"
    fill = zero.evaluate("el => getComputedStyle(el).fill")
    assert fill == "rgb(73, 80, 87)"  # dark, apart from the tone's bars and the gridline
    shot(page, "feedback-zero-day")
