"""Setting a project up in a real Chromium: the key and the embed snippet are copied with one
click (read back from the clipboard), and the project is deleted after a confirmation page.
Screenshots: test-artifacts/console-project-setup.png, console-project-delete.png."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, Project
from tests.console.test_console_browser import page, shot  # noqa: F401 - the page fixture
from tests.console.test_project_browser import live  # noqa: F401 - the server fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_copies_the_key_and_snippet_then_deletes_the_project(live, page):  # noqa: ANN001, F811
    project = Project.objects.create(name="Docs", allowed_origins=["https://docs.example"])
    Interaction.objects.create(
        project=project, channel="widget", question="Hi?", retrieval_query="q"
    )
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.url)
    page.goto(f"{live.url}/admin/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-ada-123")
    page.click("button[type=submit]")
    page.wait_for_selector("nav >> text=Projects")

    page.goto(f"{live.url}/admin/projects/{project.pk}/")
    page.get_by_role("button", name="Copy key").first.click()
    page.get_by_text("Copied").first.wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == project.public_key
    page.get_by_role("button", name="Copy snippet").click()
    snippet = page.evaluate("navigator.clipboard.readText()")
    assert f'data-project="{project.public_key}"' in snippet and "widget.js" in snippet
    assert "data-topic" not in snippet  # no empty topic: a page adds its own
    assert page.get_by_test_id("django-admin").get_by_role("link", name="Staff users").is_visible()
    shot(page, "project-setup")

    # The widget's preview: the chosen look in the tag, and the widget itself on the page.
    page.click("text=Preview and customise the widget")
    page.wait_for_function("window.AskAI")
    page.fill("#id_title", "Docs help")
    page.select_option("#id_position", "left")
    page.fill("#id_topic", "Billing")
    page.click("button:has-text('Preview')")
    page.wait_for_url("**/widget/?*title=Docs+help*")
    page.wait_for_function("window.AskAI")
    tag = page.input_value("#snippet")
    assert 'data-title="Docs help"' in tag and 'data-position="left"' in tag
    assert 'data-topic="Billing"' in tag
    page.evaluate("AskAI.open()")
    page.get_by_role("dialog").wait_for()
    assert "Docs help" in page.get_by_role("dialog").inner_text()
    assert "is not among the project's allowed origins" in page.inner_text(
        "[data-testid=origin-note]"
    )
    shot(page, "widget-preview")
    page.goto(f"{live.url}/admin/projects/{project.pk}/")

    page.click("text=Delete project…")
    page.wait_for_selector("text=It cannot be undone.")
    assert "1 logged question" in page.inner_text("form.danger-card")
    shot(page, "project-delete")
    page.click("button:has-text('Delete project')")
    page.wait_for_selector("text=Deleted project Docs")
    assert not Project.objects.filter(pk=project.pk).exists()
    assert not Interaction.objects.filter(project_id=project.pk).exists()
