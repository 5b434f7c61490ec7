"""The demo host pages: two "product pages" of a fictional app that embed the widget with one
script tag, exactly as a customer would."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.templatetags.static import static
from django.views.decorators.http import require_GET

from assistant.demo import PROJECT_NAME
from assistant.models import Project


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
