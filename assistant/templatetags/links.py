from __future__ import annotations

from django import template

from assistant import links

register = template.Library()


@register.filter
def safe_url(url: object) -> str:
    """`{{ x.url|safe_url }}`: the URL when it is http or https, else "" (no link)."""
    return links.safe_url(url)
