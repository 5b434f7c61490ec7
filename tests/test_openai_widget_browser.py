"""The widget on a demo page answered through an OpenAI-compatible server (llama.cpp's own, from
`xllamacpp`, on a loopback port with an API key), in a real headless Chromium: a conversation of
two questions, written answers with their sources, and the done frames naming the server's
model."""

from __future__ import annotations

import pytest

from assistant.models import Interaction
from assistant.wiring import runtime
from assistant.wiring.resilience import reset_circuits
from tests.test_openai_generator import llama  # noqa: F401 - fixture
from tests.test_widget_browser import ARTIFACTS, live, page, record_frames  # noqa: F401

pytestmark = [
    pytest.mark.browser, pytest.mark.local_model, pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("allow_loopback"),  # the project's server is on a loopback port
]  # fmt: skip

MODEL = "qwen2.5-coder-1.5b"


def test_the_widget_converses_through_a_model_server(live, page, llama, settings):  # noqa: ANN001, F811
    from assistant.models import Project

    settings.ASKDOCS_OPENAI_MAX_TOKENS = 60
    settings.ASKDOCS_OPENAI_PASSAGES = 2
    settings.ASKDOCS_MAX_GENERATION_SECONDS = 600  # a loaded machine: no cut mid-answer
    settings.ASKDOCS_WRITE_WITHIN = 0  # nor a quote instead of a slow first written word
    settings.ASKDOCS_OPENAI_TIMEOUTS = {"connect": 2, "first_token": 240, "between_tokens": 60}
    project = Project.objects.get(name="Demo")
    project.generator = "openai"
    project.openai_base_url = llama.base_url
    project.openai_model = MODEL
    project.set_openai_api_key(llama.api_key)
    project.save()
    runtime.reset()
    reset_circuits()

    # Two written answers from a 1.5B model on two shared cores: minutes when the machine is busy.
    page.set_default_timeout(300_000)
    frames = record_frames(page)
    page.goto(f"{live.url}/demo/billing/")
    page.evaluate("AskAI.open()")
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("textbox").press("Enter")  # the page's own question
    dialog.locator(".a .fb").first.wait_for()
    page.evaluate("AskAI.ask('And how long does it take to reach my card?')")
    dialog.locator(".a .fb").nth(1).wait_for()
    page.screenshot(path=str(ARTIFACTS / "widget-openai-server.png"))

    # Each answer holds the quote and then the written answer (two .md blocks).
    answers = dialog.locator(".a")
    assert "refund" in answers.nth(0).inner_text().lower()
    assert "business days" in answers.nth(1).inner_text()
    assert dialog.locator(".a").nth(0).get_by_role("list", name="Sources").count() == 1
    done = [f for f in frames if f["type"] == "done"]
    assert [d["generator"] for d in done] == [f"openai:{MODEL}", f"openai:{MODEL}"]
    assert done[0]["conversation_id"] == done[1]["conversation_id"]
    second = Interaction.objects.get(answer_id=done[1]["answer_id"])
    assert second.generator == f"openai:{MODEL}" and not second.fallback
    assert llama.api_key not in page.content()
