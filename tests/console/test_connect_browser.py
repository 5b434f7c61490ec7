"""In a real headless Chromium against the real ASGI server: an admin opens "Connect an AI
tool", and the Cursor configuration shown there (with the secret key pasted in place of its
hint) connects the MCP SDK's client, which finds the passage; then the admin switches llms.txt
on and follows its link. Screenshot: test-artifacts/console-connect-ai-tool.png."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from assistant.models import Project
from tests.conftest import secret_of
from tests.console.test_console_browser import page, shot  # noqa: F401 - the page fixture
from tests.console.test_project_browser import log_in
from tests.live_server import LiveAsgiServer
from tests.test_mcp import run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live(transactional_db, monkeypatch, django_user_model) -> Iterator[LiveAsgiServer]:  # noqa: ANN001
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from assistant.demo import demo_seed

    demo_seed()
    django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    with LiveAsgiServer() as server:
        yield server


def search_with(config: dict, query: str) -> list[dict]:  # noqa: F811
    """The SDK's client, configured as Cursor would be, in a thread of its own (Playwright's
    sync API holds this one)."""
    server = next(iter(config["mcpServers"].values()))
    url = server["url"].removesuffix("/mcp/")
    key = server["headers"]["Authorization"].removeprefix("Bearer ")

    async def session(client) -> list[dict]:  # noqa: ANN001
        result = await client.call_tool("search_docs", {"query": query})
        return result.structured_content["passages"]

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run, url, key, session).result()


def test_an_admin_connects_an_ai_tool_and_publishes_llms_txt(live, page):  # noqa: F811
    project = Project.objects.get(name="Demo")
    secret = secret_of(project)
    log_in(page, live.url)
    page.goto(f"{live.url}/admin/projects/{project.pk}/")
    page.click("text=Connect an AI tool")
    page.wait_for_selector("h1:has-text('Connect an AI tool')")

    assert page.text_content("[data-testid=mcp-url]") == f"{live.url}/mcp/"
    assert secret not in page.content()
    cursor = page.input_value("[data-testid=config-cursor]")
    hint = page.text_content("[data-testid=secret-hint]") or ""
    assert hint == project.secret_key_hint and hint in cursor
    config = json.loads(cursor.replace(hint, secret))
    passages = search_with(config, "How do I rotate an API key?")
    assert passages[0]["url"] == "https://help.acme.example/api-keys#rotating-and-revoking-keys"

    assert page.is_visible("[data-testid=llms-off]")
    page.check("[data-testid=llms-switch]")
    page.wait_for_selector("[data-testid=llms-link]")
    project.refresh_from_db()
    assert project.llms_txt_enabled
    shot(page, "connect-ai-tool")
    page.click("[data-testid=llms-link]")
    page.wait_for_load_state()
    text = page.inner_text("body")
    assert text.startswith("# Demo") and "## Acme help centre" in text
