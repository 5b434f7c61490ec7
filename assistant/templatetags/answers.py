from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from assistant.markdown import render

register = template.Library()


@register.filter
def markdown(text: object) -> SafeString:
    """`{{ answer|markdown }}`: an answer's Markdown as HTML, sanitised like the widget's and
    the sandbox's (no raw HTML, http(s) links only)."""
    return mark_safe(render(str(text or "")))  # noqa: S308 - render() sanitises with nh3
