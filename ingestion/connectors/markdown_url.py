"""A Markdown or text file at an address, read as one document: a site's `llms-full.txt`, a
README or a changelog on a raw-file host. Its headings split it into passages like any page.
One fetch a sync, checked like the crawler's (assistant/wiring/outbound.py), within a deadline
and a size cap; a file that cannot be read stops the sync and keeps what was indexed."""

from __future__ import annotations

import re
from collections.abc import Iterator

from django import forms
from django.conf import settings

from assistant.wiring import outbound
from ingestion.connectors.base import ConnectorError, Fetched, Item, Total
from ingestion.connectors.web_fetch import fetch
from ingestion.console.forms import SourceForm
from ingestion.models import Source
from ingestion.services import IncomingDocument

USER_AGENT = "AskDocsBot/1.0 (+self-hosted Ask AI assistant)"
SECONDS = 60.0
_TOP_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_WEB_PAGE_TYPES = ("text/html", "application/xhtml+xml")


def markdown_url_connector(source: Source) -> MarkdownUrlConnector:
    config = source.config or {}
    if not config.get("url"):
        raise ConnectorError("This source has no address yet.")
    return MarkdownUrlConnector(
        url=str(config["url"]),
        title=str(config.get("title") or ""),
        fallback_title=source.name,
        max_bytes=settings.ASKDOCS_MAX_FILE_BYTES,
    )


class MarkdownUrlConnector:
    def __init__(self, *, url: str, title: str, fallback_title: str, max_bytes: int) -> None:
        self.url = url
        self.title = title
        self.fallback_title = fallback_title
        self.max_bytes = max_bytes

    def read(self) -> Iterator[Item]:
        with outbound.client(headers={"User-Agent": USER_AGENT}, timeout=SECONDS) as client:
            page = fetch(
                client, self.url, seconds=SECONDS, max_bytes=self.max_bytes, what="file",
                html_only=False, follow=outbound.refusal,
            )  # fmt: skip
        if page.error:
            raise ConnectorError(f"Cannot read {self.url}: {page.error}")
        if page.status >= 400:
            raise ConnectorError(f"{self.url} answered HTTP {page.status}.")
        content_type = page.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type in _WEB_PAGE_TYPES:
            raise ConnectorError(
                f"{self.url} is a web page, not a file: give the file's raw address, or add "
                "a website source."
            )
        heading = _TOP_HEADING.search(page.html)
        title = self.title or (heading.group(1) if heading else "") or self.fallback_title
        yield Total(1)
        yield Fetched(
            IncomingDocument(external_id=self.url, title=title, text=page.html, url=self.url)
        )


class MarkdownUrlSourceForm(SourceForm):
    config_keys = ("url", "title")

    url = forms.URLField(
        label="File URL", assume_scheme="https", max_length=1000,
        help_text="A Markdown or text file, e.g. https://example.com/llms-full.txt.",
    )  # fmt: skip
    title = forms.CharField(
        max_length=500, required=False,
        help_text="Shown as the source of answers. Default: the file's top heading.",
    )  # fmt: skip

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        if reason := outbound.refusal(url):
            raise forms.ValidationError(reason)
        return url
