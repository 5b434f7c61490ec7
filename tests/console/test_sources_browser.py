"""An admin adds a website source in the console, syncs it and watches the progress bar."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from assistant.models import Project
from ingestion.models import Source
from tests.console.test_console_browser import ARTIFACTS, page  # noqa: F401 - fixture
from tests.ingestion.conftest import site, store  # noqa: F401 - fixtures
from tests.live_server import LiveAsgiServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live(transactional_db, monkeypatch, django_user_model, store) -> Iterator[LiveAsgiServer]:  # noqa: ANN001, F811
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    with LiveAsgiServer() as server:
        yield server


def test_an_admin_adds_a_website_syncs_it_and_sees_the_run_finish(live, page, site):  # noqa: F811
    project = Project.objects.create(name="Acme docs")
    page.goto(f"{live.url}/admin/login/?next=/admin/sources/%3Fproject%3D{project.pk}")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-ada-123")
    page.click("button[type=submit]")
    page.wait_for_selector("text=Add a website")

    page.fill("#id_name", "Help centre")
    page.fill("#id_start_url", f"{site.url}/docs/")
    page.select_option("#id_schedule", "off")
    page.click("text=Add source")
    page.wait_for_selector("text=Never synced.")
    source = Source.objects.get(project=project, name="Help centre")

    page.click("text=Sync now")
    # The runs card polls while a sync runs, then settles on the finished run.
    finished = page.locator("[data-run-status=partial], [data-run-status=succeeded]")
    try:
        finished.first.wait_for(timeout=120_000)
    except PlaywrightTimeout:
        runs = list(source.runs.values("status", "done", "total", "message"))
        pytest.fail(f"the sync did not finish: {runs}; page: {page.inner_text('#runs')}")
    bar = finished.first.locator("[role=progressbar]")
    assert bar.get_attribute("aria-valuenow") == "100"
    page.click("#runs summary")
    assert "broken.html" in page.inner_text("#runs")  # the fixture site's HTTP 500 page
    page.screenshot(path=str(ARTIFACTS / "console-source.png"), full_page=True)
    source.refresh_from_db()
    assert source.documents.count() >= 3

    page.click("nav >> text=Sources")
    page.wait_for_selector("text=Help centre")
    page.screenshot(path=str(ARTIFACTS / "console-sources.png"), full_page=True)
