"""The login lockout as a person meets it: a real headless Chromium against the real ASGI
server (django-axes' async path), five wrong passwords, then the right one refused with the
lockout page (saved as test-artifacts/console-lockout.png), and unlocked by the command."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.management import call_command

from tests.console.test_console_browser import page, shot  # noqa: F401 - the page fixture
from tests.live_server import LiveAsgiServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live(transactional_db, monkeypatch, django_user_model) -> Iterator[LiveAsgiServer]:  # noqa: ANN001
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    with LiveAsgiServer() as server:
        yield server


def log_in(tab, live: LiveAsgiServer, password: str) -> None:  # noqa: ANN001
    tab.goto(f"{live.url}/admin/login/")
    tab.get_by_label("Username").fill("ada")
    tab.get_by_label("Password").fill(password)
    with tab.expect_navigation():
        tab.get_by_role("button", name="Log in").click()


def test_the_right_password_is_refused_while_locked_then_works_once_unlocked(page, live):  # noqa: F811
    for _ in range(4):
        log_in(page, live, "wrong")
        assert page.get_by_role("alert").inner_text().startswith("Please enter a correct")
    log_in(page, live, "wrong")
    log_in(page, live, "pw-ada-123")
    alert = page.get_by_role("alert")
    assert "Too many failed logins" in alert.inner_text()
    assert "After 5 wrong passwords for ada from this address" in alert.inner_text()
    assert "locked for 15 minutes" in alert.inner_text()
    assert "someone with access to the server to unlock it" in alert.inner_text()
    shot(page, "lockout")
    call_command("axes_reset_username", "ada")
    log_in(page, live, "pw-ada-123")
    # In the console (its home sends on to the sandbox), not Django's /accounts/profile/ 404.
    assert page.url == f"{live.url}/admin/overview/"
    assert page.get_by_role("navigation", name="Console").is_visible()
