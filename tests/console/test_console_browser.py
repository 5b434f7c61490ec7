"""An admin walks the whole console in a real headless Chromium against the real ASGI server:
log in, look at the project, add a website source pointing at a local test site, sync it and
watch the progress bar finish, browse what it became, ask in the sandbox (the answer streams
in), find a question a reader asked in the widget and got refused under blind spots, and see
that reader's thumbs-down in the feedback list. Every page is saved as
test-artifacts/console-<page>.png."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from assistant.ask.cors import forget_origins
from assistant.models import Interaction, Project
from feedback.models import Feedback
from ingestion.models import Document, Source
from tests.console.history import log_history
from tests.ingestion.conftest import site, store  # noqa: F401 - fixtures
from tests.live_server import LiveAsgiServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
REFUSED = "Do you offer a student discount?"


@pytest.fixture
def live(transactional_db, monkeypatch, django_user_model, store) -> Iterator[LiveAsgiServer]:  # noqa: ANN001, F811
    """The demo project indexed into a vector store of this test's own (so the website source
    added here leaves nothing behind), served with the console user `ada`."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from assistant.demo import PROJECT_NAME, demo_seed

    Document.objects.filter(source__project__name=PROJECT_NAME).delete()  # re-embed below
    project = demo_seed().project
    django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
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
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, timezone_id="America/New_York"
        )
        page = context.new_page()
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def shot(page, name: str) -> None:  # noqa: ANN001
    page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"), full_page=True)


def htmx_settled(page) -> None:  # noqa: ANN001
    """Wait until htmx has finished a swap. It binds the triggers of swapped-in content only
    when it settles (20 ms later), so a filter changed before then would go unheard."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
    )


def log_in(page, url: str) -> None:  # noqa: ANN001
    page.goto(f"{url}/admin/sources/")
    assert "/admin/login/" in page.url
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-ada-123")
    shot(page, "login")
    page.click("button[type=submit]")
    page.wait_for_url("**/admin/sources/")


def a_reader_is_refused_in_the_widget_and_votes_it_down(page, url: str) -> None:  # noqa: ANN001
    reader = page.context.new_page()
    reader.goto(f"{url}/demo/billing/")
    reader.wait_for_function("window.AskAI")
    reader.evaluate("AskAI.open()")
    reader.evaluate(f"AskAI.ask({REFUSED!r})")
    answer = reader.get_by_role("dialog").locator(".a").last
    answer.locator(".fb").wait_for()
    assert "couldn't find an answer" in answer.inner_text()
    answer.get_by_role("button", name="Not helpful").click()
    answer.get_by_role("textbox", name="What was wrong? (optional)").fill("Please add this.")
    answer.get_by_role("button", name="Send").click()
    answer.get_by_text("Thank you").wait_for()
    reader.close()


def test_an_admin_walks_the_console_from_a_new_source_to_a_readers_thumbs_down(  # noqa: PLR0915
    live,
    page,
    site,  # noqa: F811
):
    from assistant.demo import PROJECT_NAME
    from assistant.models import Project

    demo = Project.objects.get(name=PROJECT_NAME)
    # Pages come slowly, and the crawl waits at one of them until we have seen the bar move.
    site.delay = 0.6
    site.held = {"/docs/broken.html"}  # the last page of the crawl
    log_in(page, live.url)
    # At 1,280 px the navigation wraps rather than hiding its last links in a scrolled row.
    assert page.evaluate(
        """() => { const nav = document.querySelector('.console-nav');
             const last = nav.lastElementChild.getBoundingClientRect();
             const who = document.querySelector('.who').getBoundingClientRect();
             return nav.scrollWidth <= nav.clientWidth
               && (last.right <= who.left || last.top >= who.bottom); }"""
    )

    # Projects: settings and the snippet with the project's key.
    page.click("nav >> text=Projects")
    page.wait_for_selector("h1:has-text('Projects')")
    shot(page, "projects")
    page.click(f"text={demo.name}")
    assert f'data-project="{demo.public_key}"' in page.input_value("#snippet")
    shot(page, "project")

    # Sources: add a website pointing at the local test site.
    page.click("nav >> text=Sources")
    page.click(".kind-card:has-text('Website')")
    page.fill("#id_name", "Acme website")
    page.fill("#id_start_url", f"{site.url}/docs/")
    page.select_option("#id_schedule", "off")
    page.fill("#id_max_pages", "10")
    shot(page, "source-new")
    page.click("text=Add source")
    # A new source syncs at once: its page follows the run, and the progress bar moves
    # without a reload until the run ends.
    page.wait_for_url(re.compile(r"/admin/sources/\d+/\?after=0$"))
    source = Source.objects.get(project=demo, name="Acme website")
    moving = "[data-run-status=running] [role=progressbar]:not([aria-valuenow='0'])"
    page.wait_for_selector(moving)
    shot(page, "source-syncing")
    site.released.set()
    finished = page.locator("[data-run-status=partial], [data-run-status=succeeded]")
    try:
        finished.first.wait_for(timeout=120_000)
    except PlaywrightTimeout:
        runs = list(source.runs.values("status", "done", "total", "message"))
        pytest.fail(f"the sync did not finish: {runs}; page: {page.inner_text('#runs')}")
    assert finished.first.locator("[role=progressbar]").get_attribute("aria-valuenow") == "100"
    page.click("#runs [data-testid=run-changes] summary")
    assert "Installing Acme" in page.inner_text("[data-testid=run-changes]")  # added, listed
    page.click("#runs [data-testid=run-errors] summary")
    assert "broken.html" in page.inner_text("#runs")  # the test site's HTTP 500 page
    assert int(page.inner_text("[data-testid=documents-count]")) >= 3
    shot(page, "source")

    # The document and chunk browser.
    page.click(".head-actions >> text=Documents")
    page.click("text=Installing Acme")
    page.wait_for_selector("li.chunk")
    assert "200 MB of free disk space" in page.inner_text("#chunks")
    shot(page, "document")
    page.go_back()
    page.wait_for_selector("#documents")
    shot(page, "documents")

    page.click("nav >> text=Sources")
    page.wait_for_selector("tr[data-source='Acme website']")
    shot(page, "sources")

    # The sandbox answers from the new source; the answer streams in, rendered.
    page.click("nav >> text=Sandbox")
    page.fill("#id_question", "How much disk space does the tracking agent need?")
    page.fill("#id_topic", "Installing")
    page.click("form.sandbox-form button[type=submit]")
    page.wait_for_selector("[data-testid=retrieval-query]")
    query = page.inner_text("[data-testid=retrieval-query]")
    assert query == "(Installing) How much disk space does the tracking agent need?"
    page.wait_for_selector("[data-testid=answer][data-streamed=true]")
    assert "200 MB" in page.inner_text("[data-testid=answer]")
    assert page.locator("tr.kept").count() >= 1
    shot(page, "sandbox")
    # The extractive answerer quotes: no model is called, so no prompt is shown as sent.
    assert "passages it quotes from" in page.inner_text("[data-answer-threshold]").lower()
    assert "no model is called" in page.inner_text("[data-testid=prompt-card]")
    # The slider re-filters the same candidates at once; releasing it asks again, so the
    # answer and the summary speak of the same threshold.
    page.locator("#id_threshold").fill("1")
    assert page.locator("tr.kept").count() == 0
    assert "says it doesn't know" in page.inner_text("[data-verdict]")
    page.wait_for_selector("[data-answer-threshold='1.0']")
    assert "couldn't find an answer" in page.inner_text("[data-testid=answer]")
    assert "None passed the threshold of 1.0" in page.inner_text("[data-verdict]")
    page.locator("#id_threshold").fill("0")
    page.wait_for_selector("[data-answer-threshold='0.0'] [data-testid=answer][data-streamed=true]")
    assert page.locator("tr.kept").count() == demo.max_kept
    assert "200 MB" in page.inner_text("[data-testid=answer]")

    # A reader is refused in the widget and votes the answer down.
    a_reader_is_refused_in_the_widget_and_votes_it_down(page, live.url)
    logged = Interaction.objects.get(project=demo, question=REFUSED)
    assert logged.refused and logged.channel == "widget"
    log_history(demo)  # three weeks of other readers' questions, for the pages below

    page.click("nav >> text=Relevance")
    page.wait_for_selector("[data-testid=total]")
    assert page.inner_text("[data-testid=tz]") == "America/New_York"
    shot(page, "metrics")

    page.click("nav >> text=Blind spots")
    row = page.locator("tr.cluster", has_text=REFUSED)
    row.wait_for()
    row.locator("summary").click()
    assert "Is there a discount for students?" in row.inner_text()  # clustered by meaning
    shot(page, "blind-spots")
    representative = row.locator("td strong").first.inner_text()  # the most asked variant
    row.locator("text=Open in sandbox").click()
    page.wait_for_selector("[data-testid=retrieval-query]")
    assert page.inner_text("[data-testid=retrieval-query]") == f"(Billing) {representative}"
    assert "says it doesn't know" in page.inner_text("[data-verdict]")

    page.click("nav >> text=Feedback")
    page.fill("#id_topic", "Billing")
    page.select_option("#id_vote", "down")
    # The unfiltered list already shows this vote, so wait for the filtered one: htmx pushes
    # the filters into the URL once it has swapped the list in, and the up-votes are gone.
    page.wait_for_url(lambda url: "vote=down" in url and "topic=Billing" in url)
    page.wait_for_selector("tr[data-vote=up]", state="detached")
    htmx_settled(page)
    vote = page.locator("tr[data-vote=down]", has_text="Please add this.")
    vote.wait_for()
    assert REFUSED in vote.inner_text()
    assert Feedback.objects.get(interaction=logged).vote == -1
    page.select_option("#id_channel", "sms")
    page.wait_for_selector("tr[data-vote=down]:has-text('Please add this.')", state="detached")
    htmx_settled(page)
    page.select_option("#id_channel", "")
    vote.wait_for()
    shot(page, "feedback")

    page.click("nav >> text=Tuner")
    page.wait_for_selector("tr.current[data-threshold='0.5']")
    shot(page, "tuner")

    # Deleting the source takes its documents with it.
    page.click("nav >> text=Sources")
    page.click("text=Acme website")
    page.click(".head-actions >> text=Delete")
    page.wait_for_selector("text=It cannot be undone.")
    shot(page, "source-delete")
    page.click("button:has-text('Delete source')")
    page.wait_for_selector("text=and everything indexed from it")
    assert not Source.objects.filter(pk=source.pk).exists()
    assert not Document.objects.filter(source_id=source.pk).exists()


def test_the_support_source_form_shows_only_the_chosen_providers_fields(live, page) -> None:  # noqa: ANN001
    log_in(page, live.url)
    project = Project.objects.get(name="Demo")
    page.goto(f"{live.url}/admin/sources/new/support/?project={project.pk}")

    def shown() -> set[str]:
        return set(page.eval_on_selector_all(
            "[data-providers]:not([hidden]) [name]", "els => els.map(e => e.name)"
        ))  # fmt: skip

    assert shown() == {"answers_file"}  # the default: an import
    page.select_option("select[name=provider]", "discord")
    assert shown() == {"token", "channel_id", "approved_reaction"}
    assert "Leave empty to keep" not in page.inner_text("form.form-grid")  # nothing is stored yet
    shot(page, "support-form-discord")
    page.select_option("select[name=provider]", "intercom")
    assert shown() == {"token", "tag"}
    page.fill("input[name=name]", "Tagged answers")
    page.fill("input[name=token]", "secret-intercom-token")
    page.fill("input[name=tag]", "approved")
    page.get_by_role("button", name="Add source").click()
    page.wait_for_url(re.compile(r"/admin/sources/\d+/(\?after=0)?$"))
    source = Source.objects.get(name="Tagged answers")
    assert source.config["provider"] == "intercom" and source.config["tag"] == "approved"
    page.goto(f"{live.url}/admin/sources/{source.pk}/edit/")
    assert shown() == {"token", "tag"}
    assert "Leave empty to keep the stored one." in page.inner_text("form.form-grid")


def test_without_javascript_the_server_renders_only_the_chosen_providers_fields(live, page) -> None:  # noqa: ANN001
    log_in(page, live.url)
    project = Project.objects.get(name="Demo")
    context = page.context.browser.new_context(
        java_script_enabled=False, storage_state=page.context.storage_state()
    )
    plain = context.new_page()
    plain.goto(f"{live.url}/admin/sources/new/support/?project={project.pk}")

    def shown() -> set[str]:
        return {
            field.get_attribute("name") or ""
            for field in plain.locator("[data-providers] [name]").all()
            if field.is_visible()
        }

    assert shown() == {"answers_file"}
    plain.get_by_test_id("provider-links").get_by_role("link", name="intercom").click()
    assert shown() == {"token", "tag"}
    assert plain.locator("select[name=provider]").input_value() == "intercom"
    assert plain.get_by_test_id("provider-links").locator("strong").inner_text() == "intercom"
    plain.screenshot(path=str(ARTIFACTS / "console-support-form-no-js.png"), full_page=True)
    context.close()
