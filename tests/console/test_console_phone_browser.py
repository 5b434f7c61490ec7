"""The console on a 390-pixel phone (issue 43): the navigation collapses behind a menu button,
"Log out" is within reach, no page is wider than the screen (wide tables scroll inside their
card), and axe-core finds no serious issue; at 1,280 px the project settings' inputs fit their
card. Screenshots: test-artifacts/console-390-*.png, console-1280-project.png."""

from __future__ import annotations

import pytest

from assistant.models import Interaction, Project
from tests.console.history import log_history
from tests.console.test_console_browser import live, log_in, page, shot  # noqa: F401
from tests.ingestion.conftest import store  # noqa: F401 - fixture
from tests.test_accessibility_browser import AXE, serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = ("overview", "sources", "sandbox", "conversations", "metrics", "blind-spots",
         "feedback", "curated", "checks", "tuner", "handoffs")  # fmt: skip


def phone(tab) -> None:  # noqa: ANN001
    tab.set_viewport_size({"width": 390, "height": 844})


def page_width(tab) -> int:  # noqa: ANN001
    return tab.evaluate("document.documentElement.scrollWidth")


def test_the_console_on_a_phone(live, page):  # noqa: ANN001, F811
    from assistant.demo import PROJECT_NAME

    assert AXE.is_file(), "axe-core: npm ci in tests/browser_tools"
    demo = Project.objects.get(name=PROJECT_NAME)
    log_history(demo)
    Interaction.objects.create(
        project=demo, channel="widget", conversation_id="c-phone", question="Can I pay by cheque?",
        retrieval_query="q", answer="I'm sorry", refused=True, best_relevance=0.2,
    )  # fmt: skip
    phone(page)
    log_in(page, live.url)

    page.goto(f"{live.url}/admin/overview/?project={demo.pk}")
    menu = page.get_by_role("button", name="Menu")
    assert menu.is_visible() and menu.get_attribute("aria-expanded") == "false"
    nav = page.get_by_role("navigation", name="Console")
    assert not nav.get_by_role("link", name="Handoffs").is_visible()  # collapsed
    header = page.evaluate("document.querySelector('header.topbar').getBoundingClientRect().height")
    assert header < 80, header
    shot(page, "390-overview")
    menu.click()
    assert menu.get_attribute("aria-expanded") == "true"
    for name in ("Sources", "Handoffs"):
        assert nav.get_by_role("link", name=name, exact=True).is_visible(), name
    assert page.locator("a.docs-link").is_visible()
    logout = page.get_by_role("button", name="Log out")
    box = logout.bounding_box()
    assert logout.is_visible() and box["x"] + box["width"] <= 390
    shot(page, "390-menu-open")
    assert serious_violations(page) == []

    for section in PAGES:
        page.goto(f"{live.url}/admin/{section}/?project={demo.pk}")
        assert page_width(page) <= 390, (section, page_width(page))
        shot(page, f"390-{section}")
        assert serious_violations(page) == [], section
    page.goto(f"{live.url}/admin/projects/{demo.pk}/")
    assert page_width(page) <= 390
    shot(page, "390-project")


def test_the_project_settings_fit_their_card_on_a_laptop(live, page):  # noqa: ANN001, F811
    from assistant.demo import PROJECT_NAME

    demo = Project.objects.get(name=PROJECT_NAME)
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, live.url)
    page.goto(f"{live.url}/admin/projects/{demo.pk}/")
    outside = page.evaluate(
        """() => [...document.querySelectorAll('main .card :is(input, select, textarea)')]
             .filter(f => f.offsetParent !== null)
             .filter(f => { const c = f.closest('.card').getBoundingClientRect();
                            const r = f.getBoundingClientRect();
                            return r.right > c.right - 8 || r.left < c.left; })
             .map(f => f.name || f.id)"""
    )
    shot(page, "1280-project")
    assert outside == []
    assert serious_violations(page) == []
