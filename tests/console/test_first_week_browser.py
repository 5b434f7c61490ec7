"""What a new team meets adding its own site and reading a refusal (issue 43), on a laptop
and on a 390-pixel phone: a site on this machine refused with the one setting that admits it,
the include rules' limit said before submitting, a sync that indexed nothing shown as failed
with why, and the sandbox not telling in green an answer the answerability check refused.
Screenshots: test-artifacts/console-first-week-*.png; axe-core on every page visited."""

from __future__ import annotations

import re

import pytest

from assistant.models import Project
from tests.console.test_console_browser import live, log_in, page, shot  # noqa: F401
from tests.ingestion.conftest import site, store  # noqa: F401 - fixtures
from tests.test_accessibility_browser import AXE, serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_local_site_then_a_sync_that_indexed_nothing(live, page, site, settings, width):  # noqa: ANN001, F811
    from assistant.demo import PROJECT_NAME
    from ingestion.models import Source

    assert AXE.is_file(), "axe-core: npm ci in tests/browser_tools"
    demo = Project.objects.get(name=PROJECT_NAME)
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live.url)

    # The deployment admits no private host yet: the form says what to set, and links the manual.
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    page.goto(f"{live.url}/admin/sources/new/website/?project={demo.pk}")
    for field in ("include", "exclude"):
        hint = page.locator(f".field:has(#id_{field}) .hint").inner_text()
        assert "At most 50 patterns of 200 characters." in hint
    page.fill("#id_name", "Local docs")
    page.fill("#id_start_url", f"{site.url}/docs/")
    page.select_option("#id_schedule", "off")
    page.fill("#id_include", "/guide/*")
    page.click("text=Add source")
    error = page.locator(".field:has(#id_start_url) .field-error")
    assert "ASKDOCS_ALLOWED_PRIVATE_HOSTS=127.0.0.1,localhost" in error.inner_text()
    assert "restart" in error.inner_text()
    link = error.get_by_role("link", name="Docs on this machine, in the manual")
    anchor = "#docs-on-this-machine-or-inside-your-network"
    assert link.get_attribute("href") == f"/docs/sources/{anchor}"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"first-week-{width}-private-host")
    assert serious_violations(page) == []

    # Admitted (as a restart with the setting would): include rules that match no page.
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    page.click("text=Add source")
    page.wait_for_url(re.compile(r"/admin/sources/\d+/\?after=0$"))
    failed = page.locator("[data-run-status=failed]")
    failed.wait_for(timeout=120_000)
    assert failed.locator(".pill").inner_text() == "Failed"
    message = failed.inner_text()
    assert "Nothing was indexed: the source holds no document" in message
    assert "not matched by the include patterns" in message
    assert Source.objects.get(project=demo, name="Local docs").status == "failed"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    runs = page.locator("#runs")  # its counts wrap rather than scroll out of the card
    assert runs.evaluate("card => card.scrollWidth <= card.clientWidth")
    shot(page, f"first-week-{width}-nothing-indexed")
    assert serious_violations(page) == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_sandbox_does_not_tell_a_checked_refusal_in_green(live, page, width):  # noqa: ANN001, F811
    from assistant.demo import PROJECT_NAME

    demo = Project.objects.get(name=PROJECT_NAME)
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live.url)
    page.goto(
        f"{live.url}/admin/sandbox/?project={demo.pk}&question=Can+I+pay+with+bitcoin%3F"
        "&topic=Retrieval+endpoint+token+management"
    )
    verdict = page.locator("[data-verdict]")
    assert "refuses" in verdict.get_attribute("class")
    assert "but no sentence of them answers the question" in verdict.inner_text()
    assert "answers from them" not in page.inner_text("main")
    assert "Retrieval endpoint tokens" not in page.get_by_test_id("related").inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"first-week-{width}-sandbox-refusal")
    assert serious_violations(page) == []
