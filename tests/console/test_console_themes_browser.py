"""The console in both colour schemes (issue 43): every page reachable from its navigation and
a project's own pages, at 1,280 px and on a 390-pixel phone, with the system set to light and to
dark. axe-core finds no serious issue on any of them (contrast included), and with a dark system
the page really is dark (and the widget on the preview page follows it). The home page too. One
browser context per theme and width; every failure is collected with its page's address.
Screenshots: test-artifacts/console-dark-<width>-<page>.png, home-dark-<width>.png."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest

from assistant.models import Interaction, Project
from feedback.checks import check_create, check_run
from feedback.services import blind_spot_mark, feedback_record
from ingestion.curated import curated_answer_save
from ingestion.models import Document, Source
from tests.asking import ask
from tests.console.history import log_history
from tests.console.test_console_browser import ARTIFACTS, live, page  # noqa: F401
from tests.ingestion.conftest import store  # noqa: F401 - fixture
from tests.test_accessibility_browser import AXE, serious_violations

SITE_CSS = Path(__file__).resolve().parent.parent.parent / "static" / "assistant" / "site.css"

PRICE = "How much does the Team plan cost?"
REFUSED = "Do you offer a student discount?"
WIDTHS = (1280, 390)

# The body's computed background: "rgb(r, g, b)" to its relative luminance (WCAG 2).
LUMINANCE = """() => {
  const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/[\\d.]+/g).map(Number);
  const lin = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}"""


def a_projects_week(demo: Project) -> dict[str, str]:
    """What the pages show: three weeks of questions, a two-turn conversation with a thumbs-down,
    a passing and a failing check, a curated answer and a dismissed blind spot. Returns the ids
    the pages' addresses need."""
    log_history(demo)
    answered = ask(project=demo, question=PRICE, topic="Billing", conversation_id="c-themes",
                   channel=Interaction.Channel.WIDGET)  # fmt: skip
    ask(project=demo, question=REFUSED, topic="Billing", conversation_id="c-themes",
        channel=Interaction.Channel.WIDGET)  # fmt: skip
    refused = Interaction.objects.get(project=demo, conversation_id="c-themes", question=REFUSED)
    feedback_record(interaction=refused, client_id="reader", vote=-1, comment="Please add this.")
    check_create(project=demo, question=PRICE, topic="Billing", expect="answered",
                 facts="12 USD")  # fmt: skip
    check_create(project=demo, question=REFUSED, topic="Billing", expect="answered")
    check_run(project=demo)
    curated = curated_answer_save(
        project=demo, phrasings=[REFUSED, "Is there a student price?"],
        answer="Yes: students get **50 % off** the Team plan with a school e-mail address.",
    )  # fmt: skip
    antarctica = "Do you ship to Antarctica?"
    blind_spot_mark(project=demo, topic="Shipping", question=antarctica, texts=[antarctica],
                    state="dismissed", user_id=None)  # fmt: skip
    source = Source.objects.filter(project=demo).exclude(kind=Source.Kind.CURATED).first()
    assert source is not None and not answered.refused
    return {
        "source": str(source.pk),
        "document": str(Document.objects.filter(source=source).first().pk),  # type: ignore[union-attr]
        "curated": str(curated.pk),
    }


def console_pages(demo: Project, ids: dict[str, str]) -> dict[str, str]:
    """Name -> address of every page: the header's links, then one project's pages."""
    p = f"?project={demo.pk}"
    return {
        "overview": f"/admin/overview/{p}",
        "projects": "/admin/projects/",
        "sources": f"/admin/sources/{p}",
        "sandbox": f"/admin/sandbox/{p}&topic=Billing&question={quote(PRICE)}",
        "conversations": f"/admin/conversations/{p}",
        "relevance": f"/admin/metrics/{p}",
        "blind-spots": f"/admin/blind-spots/{p}",
        "feedback": f"/admin/feedback/{p}",
        "curated": f"/admin/curated/{p}",
        "checks": f"/admin/checks/{p}",
        "tuner": f"/admin/tuner/{p}",
        "handoffs": f"/admin/handoffs/{p}",
        "transcript": f"/admin/conversations/view/{p}&id=c-themes",
        "source": f"/admin/sources/{ids['source']}/",
        "source-edit": f"/admin/sources/{ids['source']}/edit/",
        "source-delete": f"/admin/sources/{ids['source']}/delete/",
        "source-new": f"/admin/sources/new/website/{p}",
        "documents": f"/admin/sources/{ids['source']}/documents/",
        "document": f"/admin/documents/{ids['document']}/",
        "check-new": f"/admin/checks/new/{p}",
        "curated-edit": f"/admin/curated/{ids['curated']}/",
        "project": f"/admin/projects/{demo.pk}/",
        "privacy": f"/admin/projects/{demo.pk}/privacy/",
        "widget": f"/admin/projects/{demo.pk}/widget/",
        "connect": f"/admin/projects/{demo.pk}/connect/",
        "slack": f"/admin/projects/{demo.pk}/slack/",
        "discord": f"/admin/projects/{demo.pk}/discord/",
        "project-delete": f"/admin/projects/{demo.pk}/delete/",
        "project-new": "/admin/projects/new/",
    }


def shot(tab, name: str) -> None:  # noqa: ANN001
    tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def looks(tab, theme: str) -> list[str]:  # noqa: ANN001
    """What is wrong with the page on screen in this theme: axe-core's serious findings, and a
    dark theme that is not dark (or a light one that is not light)."""
    problems = serious_violations(tab)
    luminance = tab.evaluate(LUMINANCE)
    if theme == "dark" and luminance > 0.05:
        problems.append(f"the body's background is not dark (luminance {luminance:.2f})")
    if theme == "light" and luminance < 0.8:
        problems.append(f"the body's background is not light (luminance {luminance:.2f})")
    scheme = tab.evaluate("getComputedStyle(document.documentElement).colorScheme")
    if scheme != "light dark":
        problems.append(f"color-scheme is {scheme!r}: form controls would not follow")
    return problems


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_every_console_page_in_both_themes_at_both_widths(live, page, theme):  # noqa: ANN001, F811
    from assistant.demo import PROJECT_NAME

    assert AXE.is_file(), "axe-core: npm ci in tests/browser_tools"
    demo = Project.objects.get(name=PROJECT_NAME)
    pages = console_pages(demo, a_projects_week(demo))
    browser = page.context.browser
    failures: list[str] = []
    for width in WIDTHS:
        context = browser.new_context(
            viewport={"width": width, "height": 900}, timezone_id="America/New_York"
        )
        tab = context.new_page()
        tab.set_default_timeout(60_000)
        tab.emulate_media(color_scheme=theme)
        where = f"{theme} {width}px"

        # The home page (site.css alone), empty and with an answer.
        tab.goto(f"{live.url}/")
        failures += [f"{where} /: {p}" for p in looks(tab, theme)]
        tab.fill("input[name=question]", PRICE)
        tab.click("form.ask-form button[type=submit]")
        tab.wait_for_selector("article.answer")
        failures += [f"{where} / answered: {p}" for p in looks(tab, theme)]
        if theme == "dark":
            shot(tab, f"home-dark-{width}")

        tab.goto(f"{live.url}/admin/login/")
        failures += [f"{where} /admin/login/: {p}" for p in looks(tab, theme)]
        tab.fill("input[name=username]", "ada")
        tab.fill("input[name=password]", "pw-ada-123")
        tab.click("button[type=submit]")
        tab.wait_for_url(re.compile(r"/admin/overview/"))

        for name, path in pages.items():
            response = tab.goto(f"{live.url}{path}")
            if response is None or response.status != 200:
                failures.append(f"{where} {path}: HTTP {response and response.status}")
                continue
            if name == "sandbox":
                tab.wait_for_selector("[data-testid=answer]")
            failures += [f"{where} {path}: {p}" for p in looks(tab, theme)]
            if name == "widget":  # the widget follows the page it is on: dark on a dark console
                tab.get_by_role("button", name="Ask AI").click()
                tab.get_by_role("dialog").wait_for()
                panel = tab.evaluate(
                    "getComputedStyle(document.querySelector('ask-ai-widget').shadowRoot"
                    ".querySelector('.panel')).backgroundColor"
                )
                if (panel == "rgb(255, 255, 255)") != (theme == "light"):
                    failures.append(f"{where} {path}: the open widget's panel is {panel}")
                failures += [f"{where} {path} widget open: {p}" for p in looks(tab, theme)]
            if theme == "dark":
                shot(tab, f"console-dark-{width}-{name}")
            elif width > 760 and name in ("slack", "discord"):
                shot(tab, f"console-light-{width}-{name}")  # docs/images/ shows these

        if width < 760:  # the phone's menu, opened: its links and "Log out" in this theme too
            tab.goto(f"{live.url}{pages['overview']}")
            tab.get_by_role("button", name="Menu").click()
            failures += [f"{where} menu open: {p}" for p in looks(tab, theme)]
            if theme == "dark":
                shot(tab, f"console-dark-{width}-menu-open")
        context.close()
    assert failures == [], "\n".join(failures)


# Which text colour is drawn on which background, including what the sweep above may not show
# (a partial sync's pill, the sandbox's stale-answer note, the preview's origin warning).
ANY_TEXT = ("ink", "muted", "brand", "bad")
ANY_BACKGROUND = ("bg", "surface", "answer-bg", "refused-bg", "sunken", "chunk-bg", "raised",
                  "current", "warn-bg", "flash-bg", "hover", "file-bg")  # fmt: skip
DRAWN_ON = [(text, bg) for text in ANY_TEXT for bg in ANY_BACKGROUND] + [
    ("muted", "pill"), ("ok-ink", "ok-bg"), ("bad", "bad-bg"), ("brand", "selected"),
    ("ink", "code-bg"), ("warn-ink", "warn-soft"), ("warn-ink", "surface"), ("warn-ink", "bg"),
    ("caution-ink", "surface"), ("good-ink", "surface"), ("good-ink", "answer-bg"),
    ("on-brand", "brand"), ("on-brand", "bad"), ("chart-zero", "surface"),
]  # fmt: skip


def colours(block: str) -> dict[str, str]:
    """--name: #rgb or #rrggbb, as #rrggbb."""
    found = re.findall(r"--([\w-]+):\s*#([0-9a-fA-F]{3,6})\s*;", re.sub(r"/\*.*?\*/", "", block))
    return {
        name: "#" + ("".join(d * 2 for d in digits) if len(digits) == 3 else digits)
        for name, digits in found
    }


def contrast(one: str, other: str) -> float:
    def luminance(hex_colour: str) -> float:
        rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_text_colour_keeps_4_5_to_1_on_its_backgrounds_in_both_themes():
    css = SITE_CSS.read_text(encoding="utf-8")
    light = colours(css.split(":root {", 1)[1].split("}", 1)[0])
    dark = light | colours(css.split("prefers-color-scheme: dark", 1)[1].split("}", 1)[0])
    assert len(dark) == len(light) > 40  # every colour has its dark value
    low = [
        f"{theme}: {text} {pal[text]} on {bg} {pal[bg]} is {contrast(pal[text], pal[bg]):.2f}:1"
        for theme, pal in (("light", light), ("dark", dark))
        for text, bg in DRAWN_ON
        if contrast(pal[text], pal[bg]) < 4.5
    ]
    assert low == []
