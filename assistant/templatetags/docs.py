"""`{% docs_url section %}`: the manual's page about a console page (mkdocs.yml, docs/)."""

from __future__ import annotations

from django import template
from django.conf import settings

register = template.Library()

#: A console section (console_context's `section`) → its page and heading in the built manual.
DOCS_PAGES = {
    "overview": "console/#overview",
    "projects": "console/#projects",
    "sources": "sources/",
    "private-hosts": "sources/#docs-on-this-machine-or-inside-your-network",
    "sandbox": "console/#sandbox",
    "conversations": "console/#conversations",
    "metrics": "console/#relevance",
    "blind-spots": "console/#blind-spots",
    "feedback": "console/#feedback",
    "tuner": "console/#threshold-tuner",
    "handoffs": "console/#handoffs",
    "login": "console/#logging-in",
    "security": "security/#login-throttling",
    "configuration": "configuration/",
    "slack": "slack/",
    "discord": "discord/",
}


@register.simple_tag
def docs_url(section: str = "") -> str:
    return f"{settings.ASKDOCS_DOCS_URL}{DOCS_PAGES.get(section, 'console/')}"
