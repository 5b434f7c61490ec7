"""The demo host pages: two "product pages" of a fictional app that embed the widget with one
script tag, exactly as a customer would."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.templatetags.static import static
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from assistant.demo import DOCS_DIR, PROJECT_NAME
from assistant.markdown import render
from assistant.models import Project
from assistant.rag.chunking.sections import slugify


@dataclass(frozen=True, slots=True)
class DemoPage:
    slug: str
    nav: str
    heading: str
    topic: str
    question: str
    template: str


PAGES = {
    page.slug: page
    for page in (
        DemoPage(
            "billing", "Billing", "Billing & invoices", "Billing",
            "How do I get my money back?", "demo/billing.html",
        ),
        DemoPage(
            "tokens", "Retrieval tokens", "Retrieval endpoint tokens",
            "Retrieval endpoint token management", "When does my token expire?",
            "demo/tokens.html",
        ),
    )
}  # fmt: skip


@require_GET
def demo_page(request: HttpRequest, page: str = "billing") -> HttpResponse:
    if page not in PAGES:
        raise Http404("No such demo page.")
    project = Project.objects.filter(name=PROJECT_NAME).first()
    origin = f"{request.scheme}://{request.get_host()}"
    context = {
        "page": PAGES[page],
        "pages": PAGES.values(),
        "project": project,
        "widget_url": request.build_absolute_uri(static("widget/widget.js")),
        "origin": origin,
        "origin_allowed": project is not None and project.allows_origin(origin),
    }
    return TemplateResponse(request, PAGES[page].template, context)


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")


@require_GET
def demo_help_page(request: HttpRequest, page: str) -> HttpResponse:
    """The demo help centre's page as a reader opens it from a citation: its headings carry the
    anchors the index links to (the same slugs as the chunker's)."""
    path = DOCS_DIR / f"{page}.md"
    if not re.fullmatch(r"[a-z0-9-]+", page) or not path.is_file():
        raise Http404("No such help page.")
    lines = path.read_text(encoding="utf-8").splitlines()
    title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("#") else page
    context = {
        "title": title,
        "body": _with_anchors(lines[1:] if lines and lines[0].startswith("#") else lines),
        "pages": sorted(p.stem for p in DOCS_DIR.glob("*.md")),
        "current": page,
    }
    return TemplateResponse(request, "demo/help.html", context)


def _with_anchors(lines: list[str]) -> SafeString:
    """Each section rendered (sanitised) under its heading, which gets the chunker's slug."""
    parts: list[str] = []
    section: list[str] = []

    def flush() -> None:
        if section:
            parts.append(render("\n".join(section)))
            section.clear()

    for line in lines:
        heading = _HEADING.match(line)
        if heading is None:
            section.append(line)
            continue
        flush()
        level, text = len(heading.group(1)), heading.group(2)
        parts.append(format_html('<h{} id="{}">{}</h{}>', level, slugify(text), text, level))
    flush()
    return mark_safe("".join(parts))  # noqa: S308 - render() sanitises, format_html escapes
