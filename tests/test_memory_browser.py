"""The widget keeps a visitor's memory across page loads in a real Chromium, and a host page's
signed-in user (AskAI.identify) has a memory of their own."""

from __future__ import annotations

import pytest

from assistant.memory.identity import user_hash
from assistant.models import Interaction, Project
from tests.conftest import secret_of
from tests.test_widget_browser import live, page  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def ask(tab, question: str, nth: int) -> str:  # noqa: ANN001
    tab.evaluate("q => AskAI.ask(q)", question)
    answer = tab.get_by_role("dialog").locator(".a").nth(nth)
    answer.locator(".fb").wait_for()
    return answer.locator(".md").inner_text()


def test_a_visitor_is_remembered_across_page_loads_but_not_as_a_signed_in_user(live, page):  # noqa: F811
    page.goto(f"{live.url}/demo/billing/")
    assert ask(page, "remember I'm on the Enterprise plan", 0) == (
        "Got it, I'll remember that: I'm on the Enterprise plan."
    )
    page.reload()  # the same browser: the conversation comes back with the page...
    page.evaluate("AskAI.open()")
    page.get_by_role("button", name="New conversation").click()  # ...and a new one starts
    ask(page, "How do I pay for my plan?", 0)
    asked = Interaction.objects.get(question="How do I pay for my plan?")
    assert [entry["injected"] for entry in asked.memory] == [True]
    assert "Enterprise" not in asked.retrieval_query

    project = Project.objects.get(pk=asked.project_id)
    # Issued in the console while the page is open; the host page's server holds it, and the
    # widget's open socket checks the hash with the key as it is now.
    secret_of(project)
    page.evaluate("([id, hash]) => AskAI.identify(id, hash)", ["u-7", user_hash(project, "u-7")])
    assert ask(page, "What do you remember about me?", 1) == (
        "I don't remember anything about you yet."
    )
