"""In a real headless Chromium against the real ASGI server: an admin creates a project in the
console, copies its secret key from the one page that shows it, rotates it (confirming the
dialog) and sees the new key once, then only its hint. Screenshots:
test-artifacts/console-project-{created,secret-rotated,secret-hint}.png."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assistant.models import Project
from tests.console.test_console_browser import page, shot  # noqa: F401 - the page fixture
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
    assert page.text_content("[data-testid=secret-key]") == project.secret_key
    shot(page, "project-created")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Rotate secret key')")
    page.wait_for_function(
        "old => { const k = document.querySelector('[data-testid=secret-key]');"
        " return k && k.textContent !== old; }",
        arg=project.secret_key,
    )
    project.refresh_from_db()
    assert page.text_content("[data-testid=secret-key]") == project.secret_key
    shot(page, "project-secret-rotated")

    page.reload()
    assert page.locator("[data-testid=secret-key]").count() == 0
    assert page.text_content("[data-testid=secret-hint]") == project.secret_key_hint
    shot(page, "project-secret-hint")
