# ruff: noqa: F811 - the fixtures `live` and `page` come from the widget tests
"""The widget's refusal that helps, "Ask a person", and its finer points, in a real headless
Chromium on the demo pages served by the real ASGI server, answering from the real pipeline.
Screenshots go to test-artifacts/."""

from __future__ import annotations

import time

import pytest
from django.core import mail

from assistant.ask.cors import forget_origins
from assistant.handoff.models import Handoff
from assistant.models import Interaction, Project
from assistant.wiring import runtime
from assistant.wiring.resilience import reset_circuits
from tests.fake_ollama import FakeOllama
from tests.test_widget_browser import ARTIFACTS, live, page, record_frames, widget  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHEQUE = "Do you accept cheques?"


def demo_with_support(via: str, target: str) -> Project:
    project = Project.objects.get(name="Demo")
    project.contact_support, project.contact_support_target = via, target
    project.save()
    return project


def embed(page, live, key: str, **data: str) -> None:  # noqa: ANN001
    """The widget's tag on the server's plain home page, with `data-*` attributes."""
    page.goto(f"{live.url}/")
    page.evaluate(
        """([key, data]) => { const s = document.createElement('script');
        s.src = '/static/widget/widget.js'; s.dataset.project = key;
        Object.assign(s.dataset, data); document.body.appendChild(s); }""",
        [key, data],
    )
    page.wait_for_function("window.AskAI")


def test_a_refusal_offers_the_nearest_pages_and_a_person_who_gets_the_conversation(live, page):
    demo_with_support("email", "help@acme.example")
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask('How do I get my money back?')")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").first.wait_for()
    page.evaluate(f"AskAI.ask({CHEQUE!r})")
    refusal = dialog.locator(".a").nth(1)
    refusal.locator(".fb").wait_for()

    assert "couldn't find an answer" in refusal.locator(".md").inner_text()
    pages = refusal.get_by_role("list", name="These pages may help:")
    links = pages.get_by_role("link")
    assert 1 <= links.count() <= 3
    first = links.first
    assert first.inner_text() == "Plans and billing > Invoices and payment methods"
    assert first.get_attribute("href") == (
        "https://help.acme.example/plans#invoices-and-payment-methods"
    )
    assert refusal.get_by_role("list", name="Sources").count() == 0  # never an answer's sources
    done = [f for f in frames if f["type"] == "done"]
    assert done[-1]["refused"] and done[-1]["related"][0]["url"].endswith(
        "#invoices-and-payment-methods"
    )
    assert done[-1]["ask_a_person"] == {"via": "email", "url": ""}

    refusal.get_by_role("button", name="Ask a person").click()
    refusal.get_by_role("textbox", name="Your e-mail, so a person can reply (optional)").fill(
        "ada@example.org"
    )
    refusal.get_by_role("button", name="Send to a person").click()
    told = refusal.get_by_role("status")
    told.get_by_text("A person will reply to ada@example.org").wait_for()
    page.screenshot(path=str(ARTIFACTS / "widget-handoff-visitor.png"))

    handoff = Handoff.objects.get()
    assert handoff.conversation_id == done[-1]["conversation_id"]
    assert handoff.email == "ada@example.org" and handoff.page_url == f"{live.url}/demo/billing/"
    assert [x["question"] for x in handoff.exchanges] == ["How do I get my money back?", CHEQUE]
    deadline = time.monotonic() + 20
    while not mail.outbox and time.monotonic() < deadline:
        time.sleep(0.05)
    [sent] = mail.outbox
    assert sent.to == ["help@acme.example"] and CHEQUE in sent.body
    assert "https://help.acme.example/refunds" in sent.body  # the first answer's source

    # The admin's side: the console lists it, with the conversation.
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("ada", password="pw-ada-123", is_staff=True)
    page.goto(f"{live.url}/admin/login/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("pw-ada-123")
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live.url}/admin/handoffs/?project={handoff.project_id}")
    row = page.get_by_test_id("handoff")
    assert "ada@example.org" in row.inner_text() and "2 exchanges" in row.inner_text()
    row.locator("summary").click()
    assert CHEQUE in row.inner_text()
    page.get_by_text("Sent", exact=True).wait_for()
    page.screenshot(path=str(ARTIFACTS / "console-handoffs-admin.png"), full_page=True)
    # Where the admin set it up: the project's Contact support setting.
    page.goto(f"{live.url}/admin/projects/{handoff.project_id}/")
    assert page.get_by_label("Contact support").input_value() == "email"
    target = page.get_by_label("Support address")
    assert target.input_value() == "help@acme.example"
    target.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "console-project-contact-support.png"))


def test_an_off_subject_refusal_offers_no_pages_and_a_support_page_opens_as_a_link(live, page):
    demo_with_support("link", "https://help.acme.example/contact")
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask('Write me a poem about the sea')")
    refusal = page.get_by_role("dialog").locator(".a").last
    refusal.locator(".fb").wait_for()
    assert refusal.locator(".related").count() == 0
    person = refusal.get_by_role("link", name="Ask a person")
    assert person.get_attribute("href") == "https://help.acme.example/contact"
    assert person.get_attribute("target") == "_blank"
    with page.context.expect_page() as opened:
        person.click()
    opened.value.close()  # the page is outside this machine; what matters is what was recorded
    deadline = time.monotonic() + 10
    while not Handoff.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Handoff.objects.get().status == "opened"


def test_set_topic_marks_the_break_and_the_next_question_starts_afresh(live, page):
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask('How do I get my money back?')")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").first.wait_for()
    page.evaluate("AskAI.setTopic('API keys', 'How do I rotate an API key?')")
    separator = dialog.get_by_role("separator")
    assert separator.inner_text() == "New topic: API keys"
    assert "Earlier questions are not used" in separator.get_attribute("aria-label")
    page.evaluate("AskAI.ask('How long does it take?')")
    dialog.locator(".a .fb").nth(1).wait_for()
    done = [f for f in frames if f["type"] == "done"]
    assert done[0]["conversation_id"] != done[1]["conversation_id"]
    second = Interaction.objects.get(answer_id=done[1]["answer_id"])
    assert second.topic == "API keys" and "money back" not in second.retrieval_query
    page.screenshot(path=str(ARTIFACTS / "widget-topic-break.png"))

    page.reload()
    page.evaluate("AskAI.open()")
    assert page.get_by_role("dialog").get_by_role("separator").inner_text() == "New topic: API keys"


@pytest.mark.parametrize(
    ("allowed", "key", "words"),
    [
        (False, "", "isn't enabled on this website"),
        (True, "pk_no_such_project", "project key is unknown"),
    ],
)
def test_a_refused_origin_or_key_is_said_in_words_without_a_retry(live, page, allowed, key, words):
    project = Project.objects.create(name="Elsewhere", allowed_origins=[
        live.url if allowed else "https://elsewhere.example"])  # fmt: skip
    forget_origins()
    embed(page, live, key or project.public_key)
    page.evaluate("AskAI.ask('How do I get my money back?')")
    error = page.get_by_role("dialog").get_by_role("alert")
    error.wait_for()
    assert words in error.inner_text() and "connection dropped" not in error.inner_text()
    assert page.get_by_role("dialog").get_by_role("button", name="Try again").count() == 0
    page.screenshot(path=str(ARTIFACTS / f"widget-refused-{'key' if allowed else 'origin'}.png"))


def panel_background(page) -> str:  # noqa: ANN001
    return widget(page).locator(".panel").evaluate("p => getComputedStyle(p).backgroundColor")


def test_dark_mode_follows_the_host_page_or_the_data_theme(live, page):
    key = Project.objects.get(name="Demo").public_key
    page.emulate_media(color_scheme="dark")
    embed(page, live, key)  # data-theme auto by default, on a light page: light, as the page
    # The home page follows the system's dark setting (site.css): painted light by the page
    # itself here, whatever the system says.
    page.evaluate("document.body.style.background = '#fff'; document.body.style.color = '#111'")
    page.evaluate("AskAI.open()")
    assert panel_background(page) == "rgb(255, 255, 255)"
    page.screenshot(path=str(ARTIFACTS / "widget-auto-light-page.png"))
    # The page switches itself to dark (its own switch, a style on <body>): so does the panel.
    page.evaluate("document.body.style.background = '#121317'; document.body.style.color = '#eee'")
    page.wait_for_function(
        "getComputedStyle(document.querySelector('ask-ai-widget').shadowRoot"
        ".querySelector('.panel')).backgroundColor === 'rgb(23, 25, 31)'"
    )
    page.evaluate("AskAI.ask('How do I get my money back?')")
    page.get_by_role("dialog").locator(".a .fb").wait_for()
    page.screenshot(path=str(ARTIFACTS / "widget-dark.png"))

    # A page without a background of its own that allows both schemes: the system decides.
    page.goto(f"{live.url}/healthz")
    page.evaluate(
        """key => { document.documentElement.style.colorScheme = 'light dark';
        const s = document.createElement('script'); s.src = '/static/widget/widget.js';
        s.dataset.project = key; document.body.appendChild(s); }""",
        key,
    )
    page.wait_for_function("window.AskAI")
    page.evaluate("AskAI.open()")
    assert panel_background(page) == "rgb(23, 25, 31)"
    page.emulate_media(color_scheme="light")
    page.wait_for_function(
        "getComputedStyle(document.querySelector('ask-ai-widget').shadowRoot"
        ".querySelector('.panel')).backgroundColor === 'rgb(255, 255, 255)'"
    )

    embed(page, live, key, theme="light")
    page.emulate_media(color_scheme="dark")
    page.evaluate("document.body.style.background = '#121317'")
    page.evaluate("AskAI.open()")
    assert panel_background(page) == "rgb(255, 255, 255)"  # fixed by data-theme
    page.emulate_media(color_scheme="light")
    embed(page, live, key, theme="dark")
    page.evaluate("AskAI.open()")
    assert panel_background(page) == "rgb(23, 25, 31)"


def test_the_input_grows_with_the_question_up_to_a_limit(live, page):
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.open()")
    box = page.get_by_role("dialog").get_by_role("textbox", name="Your question")
    box.fill("")
    start = box.bounding_box()["height"]
    box.fill("How do I get my money back")
    box.press("Shift+Enter")  # a new line, not a question yet
    box.press_sequentially("when the order was a gift?")
    box.press("Shift+Enter")
    box.press_sequentially("It was for my brother.")
    assert box.bounding_box()["height"] > start + 20
    page.screenshot(path=str(ARTIFACTS / "widget-input-grows.png"))
    box.fill("line\n" * 30)
    assert box.bounding_box()["height"] <= 162  # then it scrolls
    box.fill("How do I get my money back?")
    box.press("Enter")  # asked: the box shrinks back
    page.get_by_role("dialog").locator(".a .fb").wait_for()
    assert box.bounding_box()["height"] == start


def test_on_a_phone_every_control_is_at_least_44_pixels(live, page):
    page.set_viewport_size({"width": 390, "height": 844})
    demo_with_support("email", "help@acme.example")
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate(f"AskAI.ask({CHEQUE!r})")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").wait_for()
    dialog.get_by_role("button", name="Ask a person").click()
    small = widget(page).evaluate(
        """host => [...host.shadowRoot.querySelectorAll('button, .chip, a.btn, input')]
          .filter(n => n.offsetParent !== null)
          .map(n => [n.textContent.trim() || n.getAttribute('aria-label') || n.type,
                     n.getBoundingClientRect()])
          .filter(([, r]) => r.width < 44 || r.height < 44)
          .map(([name, r]) => `${name}: ${r.width}x${r.height}`)"""
    )
    assert small == []
    page.screenshot(path=str(ARTIFACTS / "widget-phone-tap-targets.png"))


def test_a_code_block_has_a_copy_button(live, page, settings):
    with FakeOllama() as ollama:
        settings.OLLAMA_HOST = ollama.url
        runtime.reset()
        reset_circuits()
        project = Project.objects.get(name="Demo")
        project.generator = "ollama"
        project.save()
        # A written answer whose code the passages hold (a written answer is checked).
        ollama.tokens = [
            "Install it with pip [1]:\n\n",
            "```bash\npip install acme-cli\n```\n",
        ]
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.url)
        page.goto(f"{live.url}/demo/billing/")
        page.evaluate("AskAI.ask('How do I install the Acme CLI?')")
        answer = page.get_by_role("dialog").locator(".a").last
        answer.locator(".fb").wait_for()
        copy = answer.get_by_role("button", name="Copy code").last  # the written answer's
        copy.click()
        answer.get_by_text("Copied").wait_for()
        copied = page.evaluate("navigator.clipboard.readText()")
        page.screenshot(path=str(ARTIFACTS / "widget-code-copy.png"))
    runtime.reset()
    assert copied == "pip install acme-cli"


def test_the_thumbs_state_survives_a_reload(live, page):
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask('How do I get my money back?')")
    answer = page.get_by_role("dialog").locator(".a").last
    answer.locator(".fb").wait_for()
    answer.get_by_role("button", name="Helpful", exact=True).click()
    answer.get_by_text("Thanks!").wait_for()
    page.reload()
    page.evaluate("AskAI.open()")
    restored = page.get_by_role("dialog").locator(".a").last
    assert (
        restored.get_by_role("button", name="Helpful", exact=True).get_attribute("aria-pressed")
        == "true"
    )
    assert (
        restored.get_by_role("button", name="Not helpful").get_attribute("aria-pressed") == "false"
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_refusal_with_its_pages_and_the_handoff_form_pass_axe(live, page, scheme):
    from tests.test_accessibility_browser import AXE, serious_violations

    assert AXE.is_file(), "axe-core is installed by .bin/test (tests/browser_tools)"
    demo_with_support("email", "help@acme.example")
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate(f"AskAI.ask({CHEQUE!r})")
    refusal = page.get_by_role("dialog").locator(".a").last
    refusal.locator(".fb").wait_for()
    refusal.get_by_role("button", name="Ask a person").click(timeout=5000)
    page.evaluate("AskAI.setTopic('API keys')")  # a topic break in the transcript too
    assert refusal.locator(".related a").count() >= 1
    page.screenshot(path=str(ARTIFACTS / f"widget-refusal-axe-{scheme}.png"))
    assert serious_violations(page) == []
