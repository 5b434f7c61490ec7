"""Answers are Markdown; they are shown as HTML without any raw HTML, remote images or
script links getting through."""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).disable("image")

_ALLOWED_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "a",
}  # fmt: skip


def render(text: str) -> str:
    html = _md.render(text)
    # nh3 (ammonia) is the second line: only http(s) links survive, and they open safely.
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes={"a": {"href", "title"}},
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
    )
