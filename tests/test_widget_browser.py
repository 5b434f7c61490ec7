"""The widget in a real headless Chromium, on the demo host pages served by the real ASGI
server (HTTP and WebSockets), answering from the real pipeline."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.ask.cors import forget_origins
from assistant.models import Interaction, Project
from feedback.models import Feedback
from tests.live_server import LiveAsgiServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
ANSWER_TIMEOUT_MS = 90_000


@pytest.fixture
def live(transactional_db, monkeypatch) -> Iterator[LiveAsgiServer]:  # noqa: ANN001
    # Playwright's sync API keeps an event loop in this thread; the ORM calls of the test
    # itself are plain synchronous calls between page actions.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from assistant.demo import demo_seed

    project = demo_seed().project
    with LiveAsgiServer() as server:
        project.allowed_origins = [*project.allowed_origins, server.url]
        project.save(update_fields=["allowed_origins"])
        forget_origins()
        yield server
    forget_origins()


@pytest.fixture
def page():  # noqa: ANN201
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.set_default_timeout(ANSWER_TIMEOUT_MS)
        yield page
        browser.close()


def record_frames(page) -> list[dict]:  # noqa: ANN001
    frames: list[dict] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda payload: frames.append(json.loads(payload))),
    )
    return frames


def widget(page):  # noqa: ANN001, ANN201
    """Playwright's locators pierce the open shadow root."""
    return page.locator("ask-ai-widget")


def test_a_reader_asks_on_the_demo_page_and_leaves_feedback(live, page):
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    launcher = page.get_by_role("button", name="Ask AI")
    launcher.click()
    dialog = page.get_by_role("dialog")
    question = dialog.get_by_role("textbox", name="Your question")
    assert question.input_value() == "How do I get my money back?"
    # The launcher hides under the open panel (so its role is out of the tree): read it by class.
    assert widget(page).locator(".launch").get_attribute("aria-expanded") == "true"
    question.press("Enter")

    answer = dialog.locator(".a").last
    answer.locator(".fb").wait_for()
    assert "refund" in answer.locator(".md").inner_text().lower()
    source = answer.get_by_role("list", name="Sources").get_by_role("link").first
    assert source.get_attribute("href").startswith("https://help.acme.example/refunds")
    assert source.get_attribute("target") == "_blank"
    assert "noopener" in source.get_attribute("rel")
    kinds = [f["type"] for f in frames]
    assert kinds[0] == "sources" and kinds[-1] == "done" and kinds.count("token") >= 1
    # The answer's [n] markers link to their sources.
    marker = answer.locator(".md a.cite").first
    assert marker.inner_text() == "[1]"
    assert marker.get_attribute("href") == source.get_attribute("href")
    assert marker.get_attribute("target") == "_blank"
    assert "Source 1" in marker.get_attribute("aria-label")
    page.screenshot(path=str(ARTIFACTS / "widget-demo-answer.png"))

    answer.get_by_role("button", name="Not helpful").click()
    comment = answer.get_by_role("textbox", name="What was wrong? (optional)")
    comment.fill("It did not say how long a refund takes.")
    answer.get_by_role("button", name="Send").click()
    answer.get_by_text("Thank you").wait_for()
    stored = Feedback.objects.get(interaction__answer_id=frames[-1]["answer_id"])
    assert stored.vote == -1 and stored.comment == "It did not say how long a refund takes."
    assert Interaction.objects.get(answer_id=frames[-1]["answer_id"]).channel == "widget"
    page.screenshot(path=str(ARTIFACTS / "widget-demo-feedback.png"))


def test_the_second_demo_page_has_its_own_topic_and_a_follow_up_keeps_the_conversation(live, page):
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/tokens/")
    page.evaluate("AskAI.open()")
    dialog = page.get_by_role("dialog")
    assert dialog.get_by_role("textbox").input_value() == "When does my token expire?"
    assert "Retrieval endpoint token management" in dialog.locator("header").inner_text()
    dialog.get_by_role("textbox").press("Enter")
    dialog.locator(".a .fb").first.wait_for()
    assert "90 days" in dialog.locator(".a .md").first.inner_text()

    page.evaluate("AskAI.ask('Can I choose a shorter lifetime?')")
    dialog.locator(".a .fb").nth(1).wait_for()
    done = [f for f in frames if f["type"] == "done"]
    assert done[0]["conversation_id"] == done[1]["conversation_id"]
    second = Interaction.objects.get(answer_id=done[1]["answer_id"])
    assert second.conversation_id == done[0]["conversation_id"]
    # It finds its answer as asked, so the earlier question stays out of its query.
    assert second.query_form == "question"
    assert "When does my token expire?" not in second.retrieval_query


def test_a_source_without_a_link_is_shown_as_a_document(live, page):
    """An uploaded page has no URL: its [n] marker and its source say it is a document,
    instead of a bare title that looks like a broken link."""
    from ingestion.models import Source
    from ingestion.services import document_upsert

    project = Project.objects.get(name="Demo")
    source = Source.objects.create(project=project, name="Uploads", kind=Source.Kind.FILES)
    document_upsert(
        source=source, external_id="students.md", title="Student discount",
        text=(
            "# Student discount\n\nStudents get 50% off any annual plan with a valid student "
            "email address. To apply, open Billing > Plans and choose Student.\n"
        ),
    )  # fmt: skip
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask('Do you offer a student discount?')")
    dialog = page.get_by_role("dialog")
    answer = dialog.locator(".a").last
    answer.locator(".fb").wait_for()
    assert "50%" in answer.locator(".md").inner_text()
    marker = answer.locator(".md .cite").first
    assert marker.inner_text() == "[1]" and marker.get_attribute("href") is None
    assert "a document without a link" in marker.get_attribute("title")
    sources = answer.get_by_role("list", name="Sources")
    assert "Student discount (document)" in sources.inner_text()
    assert sources.get_by_role("link").count() == 0
    page.screenshot(path=str(ARTIFACTS / "widget-document-source.png"))


def test_a_document_with_html_and_script_links_renders_inert(live, page):
    project = Project.objects.create(name="XSS check", allowed_origins=[live.url])
    forget_origins()
    from ingestion.models import Source
    from ingestion.services import document_upsert

    source = Source.objects.create(project=project, name="Traps", kind=Source.Kind.FILES)
    document_upsert(
        source=source, external_id="flux.md", title="Flux capacitor",
        url="https://docs.example/flux",
        text=(
            "## Flux capacitor power\n\n"
            # Every trap in the sentence that answers: the extractive answerer quotes only
            # the sentences that answer the question.
            'The flux capacitor needs 1.21 gigawatts <img src=x onerror="window.pwned=1"> '
            "of power ![power](https://evil.example/t.png) to travel in time, says the "
            "[flux capacitor power manual](javascript:alert(window.pwned=2)). "
            "The flux capacitor power comes from lightning or plutonium.\n"
        ),
    )  # fmt: skip
    frames = record_frames(page)
    page.goto(f"{live.url}/")
    page.evaluate(
        """key => { const s = document.createElement('script');
        s.src = '/static/widget/widget.js'; s.dataset.project = key;
        s.dataset.topic = 'Flux capacitor'; document.body.appendChild(s); }""",
        project.public_key,
    )
    page.wait_for_function("window.AskAI")
    page.evaluate("AskAI.ask('How much power does the flux capacitor need?')")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").wait_for()

    text = "".join(f.get("text", "") for f in frames if f["type"] == "token")
    assert "<img src=x onerror" in text and "javascript:" in text  # the traps were sent
    answer = dialog.locator(".a .md")
    assert answer.locator("img").count() == 0
    assert "<img src=x onerror" in answer.inner_text()  # shown as text
    hrefs = answer.locator("a").evaluate_all("links => links.map(a => a.href)")
    assert all(h.startswith(("http://", "https://")) for h in hrefs)
    # The dropped link leaves its text, and nothing of its URL (no stray ")").
    assert "says the flux capacitor power manual. " in answer.inner_text()
    assert page.evaluate("window.pwned") is None
    page.screenshot(path=str(ARTIFACTS / "widget-inert-html.png"))


def test_the_host_pages_css_does_not_reach_the_widget_and_the_widget_keeps_to_itself(live, page):
    page.goto(f"{live.url}/demo/billing/")
    page.add_style_tag(
        content="ask-ai-widget { display: none !important; } "
        "* { font-family: 'Comic Sans MS' !important; color: #0f0 !important; "
        "padding: 40px !important; }"
    )
    launcher = page.get_by_role("button", name="Ask AI")
    assert launcher.is_visible()
    style = launcher.evaluate(
        "b => { const s = getComputedStyle(b); "
        "return [s.backgroundColor, s.color, s.fontFamily, s.paddingTop]; }"
    )
    assert style[0] == "rgb(59, 91, 219)" and style[1] == "rgb(255, 255, 255)"
    assert "Comic Sans" not in style[2] and style[3] == "12px"
    host_button = page.get_by_role("button", name="Download").first
    assert host_button.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(194, 37, 92)"


def test_the_panel_is_keyboard_accessible_and_fits_a_phone(live, page):
    page.set_viewport_size({"width": 375, "height": 667})
    page.goto(f"{live.url}/demo/billing/")
    launcher = page.get_by_role("button", name="Ask AI")
    launcher.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog")
    assert dialog.get_attribute("aria-modal") == "true"
    box = dialog.bounding_box()
    assert box["width"] == 375 and box["height"] == 667
    focused = "() => document.querySelector('ask-ai-widget').shadowRoot.activeElement?.id"
    assert page.evaluate(focused) == "askai-q"
    for _ in range(6):  # Tab cycles inside the dialog
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.tagName") == "ASK-AI-WIDGET"
    page.screenshot(path=str(ARTIFACTS / "widget-phone.png"))
    page.keyboard.press("Escape")
    assert dialog.is_hidden()
    assert launcher.evaluate("b => b.getRootNode().activeElement === b")


def test_an_unavailable_server_gets_a_friendly_line_and_a_retry(live, page, settings):
    """The vector store (a Chroma server) is down: nothing to answer from. (With only the LLM
    down, the found passages are quoted instead: see tests/test_generators.py.)"""
    from assistant.wiring import runtime
    from tests.live_server import free_port

    settings.CHROMA_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    runtime.reset()
    try:
        page.goto(f"{live.url}/demo/billing/")
        page.evaluate("AskAI.ask()")
        dialog = page.get_by_role("dialog")
        alert = dialog.get_by_role("alert")
        alert.wait_for()
        assert "unavailable right now" in alert.inner_text()
        retry = dialog.get_by_role("button", name="Try again")

        settings.CHROMA_URL = ""  # the store is back
        runtime.reset()
        retry.click()
        dialog.locator(".a .fb").wait_for()
        assert "refund" in dialog.locator(".a .md").inner_text().lower()
        assert dialog.get_by_role("alert").count() == 0
    finally:
        runtime.reset()


def test_when_websockets_are_blocked_it_answers_over_server_sent_events(live, page):
    page.add_init_script("window.WebSocket = function () { throw new Error('blocked'); };")
    streams = []
    page.on("request", lambda r: streams.append(r.url) if "/ask/stream" in r.url else None)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask()")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").wait_for()
    assert "refund" in dialog.locator(".a .md").inner_text().lower()
    assert dialog.get_by_role("list", name="Sources").get_by_role("link").count() >= 1
    assert streams == [f"{live.url}/api/v1/ask/stream"]


def test_favicon_ico_is_an_icon_not_a_404(live, page, client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
    icon = client.get("/favicon.ico", follow=True)
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(icon.streaming_content)

    shown = page.goto(f"{live.url}/favicon.ico")
    assert shown.status == 200 and shown.headers["content-type"] == "image/svg+xml"
    page.screenshot(path=str(ARTIFACTS / "widget-favicon.png"))


def inside(inner: dict, outer: dict) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["y"] >= outer["y"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


def test_the_launcher_hides_while_the_panel_is_open_and_the_comment_box_is_in_view(live, page):
    page.set_viewport_size({"width": 1280, "height": 500})  # a short panel: the answer fills it
    page.goto(f"{live.url}/demo/billing/")
    launcher = page.get_by_role("button", name="Ask AI")
    launcher.click()
    dialog = page.get_by_role("dialog")
    assert dialog.is_visible() and launcher.is_hidden()
    dialog.get_by_role("textbox", name="Your question").press("Enter")
    answer = dialog.locator(".a").last
    answer.locator(".fb").wait_for()

    answer.get_by_role("button", name="Not helpful").click()
    comment = answer.get_by_role("textbox", name="What was wrong? (optional)")
    comment.wait_for()
    log = dialog.get_by_role("log")
    log.evaluate("l => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    form = answer.locator(".fb form")
    assert inside(form.bounding_box(), log.bounding_box())
    assert comment.evaluate("t => t.getRootNode().activeElement === t")
    page.screenshot(path=str(ARTIFACTS / "widget-comment-in-view.png"))

    page.keyboard.press("Escape")
    assert dialog.is_hidden() and launcher.is_visible()
    assert launcher.evaluate("b => b.getRootNode().activeElement === b")
    assert launcher.get_attribute("aria-expanded") == "false"


def record_sent(page) -> list[dict]:  # noqa: ANN001
    sent: list[dict] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framesent", lambda payload: sent.append(json.loads(payload))),
    )
    return sent


def test_the_conversation_survives_a_reload_and_the_same_pages_next_visit_until_a_new_one(
    live, page
):
    frames, sent = record_frames(page), record_sent(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.ask()")
    dialog = page.get_by_role("dialog")
    dialog.locator(".a .fb").wait_for()
    first = dialog.locator(".a .md").inner_text()
    conversation = [f for f in frames if f["type"] == "done"][0]["conversation_id"]

    page.reload()  # the same page again: the conversation is back, sources and all
    page.evaluate("AskAI.open()")
    assert dialog.locator(".q").inner_text() == "How do I get my money back?"
    assert dialog.locator(".a .md").inner_text() == first
    source = dialog.get_by_role("list", name="Sources").get_by_role("link").first
    assert source.get_attribute("href").startswith("https://help.acme.example/refunds")

    page.goto(f"{live.url}/demo/billing/")  # the same page again: the conversation goes on
    page.evaluate("AskAI.ask('Do you offer a student discount?')")
    dialog.locator(".a .fb").nth(1).wait_for()
    assert sent[-1]["conversation_id"] == conversation  # the server's conversation goes on
    assert dialog.get_by_role("separator").count() == 0
    page.reload()
    page.evaluate("AskAI.open()")
    assert dialog.locator(".q").count() == 2
    assert dialog.locator(".a").nth(1).get_attribute("class") == "a refused"
    assert dialog.locator(".a").nth(0).get_attribute("class") == "a"
    assert dialog.locator(".a").nth(1).is_visible()  # scrolled to the latest answer
    page.screenshot(path=str(ARTIFACTS / "widget-conversation-restored.png"))

    dialog.get_by_role("button", name="New conversation").click()
    assert dialog.locator(".q").count() == 0 and dialog.locator(".hint").is_visible()
    assert page.evaluate("Object.keys(sessionStorage)") == []
    page.evaluate("AskAI.ask('When does my token expire?')")
    dialog.locator(".a .fb").wait_for()
    assert "conversation_id" not in sent[-1]
    assert [f for f in frames if f["type"] == "done"][-1]["conversation_id"] != conversation
    page.reload()
    page.evaluate("AskAI.open()")
    assert dialog.locator(".q").inner_text() == "When does my token expire?"
    page.screenshot(path=str(ARTIFACTS / "widget-new-conversation.png"))


def test_the_empty_panel_suggests_the_pages_question_and_the_ones_answered_well(live, page):
    project = Project.objects.get(name="Demo")
    for conversation in ("s1", "s2", "s3"):  # three askers
        Interaction.objects.create(
            project=project, question="Can I get a refund after 30 days?", topic="Billing",
            conversation_id=conversation, asker=conversation, retrieval_query="x",
            answer="No [1].", generator="extractive",
        )  # fmt: skip
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    page.get_by_role("button", name="Ask AI").click()
    dialog = page.get_by_role("dialog")
    chips = dialog.get_by_role("list", name="Suggested questions").get_by_role("button")
    chips.nth(1).wait_for()
    assert chips.all_inner_texts() == [
        "How do I get my money back?", "Can I get a refund after 30 days?"
    ]  # fmt: skip
    page.screenshot(path=str(ARTIFACTS / "widget-suggestions.png"))
    chips.nth(1).click()
    dialog.locator(".a").last.locator(".fb").wait_for()
    asked = [f for f in frames if f["type"] == "done"]
    assert Interaction.objects.get(answer_id=asked[-1]["answer_id"]).question == (
        "Can I get a refund after 30 days?"
    )
    assert not dialog.get_by_role("list", name="Suggested questions").is_visible()
    # Another topic (a single-page app's next view): its own suggestions.
    page.evaluate("() => AskAI.setTopic('Retrieval tokens', 'When does a token expire?')")
    dialog.get_by_role("button", name="New conversation").click()
    assert chips.all_inner_texts() == ["When does a token expire?"]


def test_only_the_sources_the_answer_cites_are_listed_with_their_numbers(live, page):
    """ "How long does an export take?" keeps a shipping passage too (it speaks of delivery
    times), but the answer quotes only the export page: that is the one source shown."""
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("() => AskAI.ask('How long does an export take?')")
    answer = page.get_by_role("dialog").locator(".a").last
    answer.locator(".fb").wait_for()
    sent = next(f for f in frames if f["type"] == "sources")["sources"]
    text = answer.locator(".md").inner_text()
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", text)})
    assert cited and len(sent) > len(cited), (sent, text)  # something kept was not cited
    listed = answer.get_by_role("list", name="Sources").locator("li")
    assert listed.count() == len(cited)
    numbers = [int(n) for n in listed.evaluate_all("items => items.map(li => li.value)")]
    assert numbers == cited
    titles = {s["n"]: s["title"] for s in sent}
    assert listed.all_inner_texts() == [titles[n] for n in cited]
