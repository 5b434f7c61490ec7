"""Website crawler: from a start URL or a sitemap, within the site's host and path prefix,
obeying robots.txt, with page/depth/size limits, a few polite concurrent requests and a user
agent. trafilatura extracts each page's main text with its headings (as Markdown).

Redirects are followed (the final URL must stay in scope) and a page's canonical URL is its
identity, so two URLs of one page make one document. A 404/410 says the page is gone; any
other failure is recorded against the URL and the crawl carries on.
"""

from __future__ import annotations

import re
import urllib.robotparser
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit
from xml.etree import ElementTree as ET  # noqa: S405 - parsed with the size limit below

import httpx
import lxml.html
import trafilatura

from ingestion.connectors.base import ConnectorError, Failed, Fetched, Gone, Item, Total
from ingestion.services import IncomingDocument

USER_AGENT = "AskDocsBot/1.0 (+self-hosted Ask AI assistant; respects robots.txt)"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_SITEMAP_NS = re.compile(r"^\{[^}]*\}")


@dataclass(frozen=True, slots=True)
class CrawlLimits:
    max_pages: int = 500
    max_depth: int = 5
    max_page_bytes: int = 2_000_000
    concurrency: int = 2
    timeout: float = 15.0


@dataclass(frozen=True, slots=True)
class Page:
    url: str  # as requested
    final_url: str = ""
    status: int = 0
    html: str = ""
    error: str = ""


class WebsiteConnector:
    def __init__(
        self,
        *,
        start_url: str = "",
        sitemap_url: str = "",
        limits: CrawlLimits | None = None,
        user_agent: str = USER_AGENT,
    ) -> None:
        first = start_url or sitemap_url
        parts = urlsplit(first)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConnectorError(f"Not a web address: {first!r} (use http:// or https://)")
        self.start_url = start_url
        self.sitemap_url = sitemap_url
        self.limits = limits or CrawlLimits()
        self.user_agent = user_agent
        self.origin = f"{parts.scheme}://{parts.netloc}".lower()
        # The path prefix: the start page's folder (a sitemap's folder when crawling from one).
        self.prefix = parts.path.rsplit("/", 1)[0] + "/"
        self._robots: urllib.robotparser.RobotFileParser | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> WebsiteConnector:
        try:
            limits = CrawlLimits(
                **{k: config[k] for k in CrawlLimits.__dataclass_fields__ if k in config}
            )
        except TypeError as error:
            raise ConnectorError(f"Bad crawl limits: {error}") from error
        if not (config.get("start_url") or config.get("sitemap_url")):
            raise ConnectorError("A website source needs a start_url or a sitemap_url.")
        return cls(
            start_url=str(config.get("start_url", "")),
            sitemap_url=str(config.get("sitemap_url", "")),
            limits=limits,
        )

    # --- scope ----------------------------------------------------------------------------------

    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        return origin == self.origin and (parts.path or "/").startswith(self.prefix)

    def allowed(self, url: str) -> bool:
        return self._robots is None or self._robots.can_fetch(self.user_agent, url)

    # --- crawl ----------------------------------------------------------------------------------

    def read(self) -> Iterator[Item]:
        headers = {"User-Agent": self.user_agent}
        timeout = httpx.Timeout(self.limits.timeout)
        with httpx.Client(headers=headers, timeout=timeout, follow_redirects=True) as client:
            self._robots = self._read_robots(client)
            seeds = self._seeds(client)
            yield from self._crawl(client, seeds)

    def _read_robots(self, client: httpx.Client) -> urllib.robotparser.RobotFileParser | None:
        try:
            response = client.get(f"{self.origin}/robots.txt")
        except httpx.HTTPError as error:
            raise ConnectorError(f"Cannot reach {self.origin}: {_describe(error)}") from error
        if response.status_code >= 400:
            return None  # no robots.txt: everything is allowed
        robots = urllib.robotparser.RobotFileParser()
        robots.parse(response.text.splitlines())
        return robots

    def _seeds(self, client: httpx.Client) -> list[str]:
        if not self.sitemap_url:
            return [self.start_url]
        urls = self._sitemap_urls(client, self.sitemap_url, depth=0)
        return ([self.start_url] if self.start_url else []) + urls

    def _sitemap_urls(self, client: httpx.Client, url: str, *, depth: int) -> list[str]:
        page = self._fetch(client, url, accept_xml=True)
        if page.error or page.status >= 400:
            raise ConnectorError(f"Cannot read the sitemap {url}: {page.error or page.status}")
        try:
            root = ET.fromstring(page.html)  # noqa: S314 - size-limited; no entity expansion in expat by default beyond limits
        except ET.ParseError as error:
            raise ConnectorError(f"The sitemap {url} is not valid XML: {error}") from error
        found: list[str] = []
        for element in root:
            loc = next(
                (c.text for c in element if _SITEMAP_NS.sub("", c.tag) == "loc" and c.text), None
            )
            if not loc:
                continue
            if _SITEMAP_NS.sub("", root.tag) == "sitemapindex" and depth < 2:
                found += self._sitemap_urls(client, loc.strip(), depth=depth + 1)
            else:
                found.append(loc.strip())
        return found

    def _crawl(self, client: httpx.Client, seeds: list[str]) -> Iterator[Item]:
        queued: set[str] = set()
        done_ids: set[str] = set()
        level: list[str] = []
        for seed in seeds:
            url = normalise(seed)
            if url in queued:
                continue
            queued.add(url)
            if not self.in_scope(url):
                yield Failed(url, "outside the site's domain and path; skipped")
            elif not self.allowed(url):
                yield Failed(url, "disallowed by robots.txt; skipped")
            else:
                level.append(url)
        pages = 0
        # A sitemap alone is the list of pages: links are not followed, so a page dropped
        # from the sitemap is dropped from the index.
        max_depth = self.limits.max_depth if self.start_url else 0
        with ThreadPoolExecutor(max_workers=self.limits.concurrency) as pool:
            for depth in range(max_depth + 1):
                level = level[: max(0, self.limits.max_pages - pages)]
                if not level:
                    break
                pages += len(level)
                yield Total(pages)
                next_level: list[str] = []
                for page in pool.map(lambda u: self._fetch(client, u), level):
                    item, links = self._page_item(page)
                    ident = (
                        item.document.external_id if isinstance(item, Fetched) else item.external_id
                    )
                    if isinstance(item, Fetched | Gone) and ident in done_ids:
                        continue  # a second URL of a page already read (canonical)
                    done_ids.add(ident)
                    yield item
                    if depth == max_depth:
                        continue
                    for link in links:
                        if link not in queued and self.in_scope(link) and self.allowed(link):
                            queued.add(link)
                            next_level.append(link)
                level = next_level

    def _fetch(self, client: httpx.Client, url: str, *, accept_xml: bool = False) -> Page:
        try:
            with client.stream("GET", url) as response:
                final = str(response.url)
                if response.status_code >= 400:
                    return Page(url, final, response.status_code)
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if not accept_xml and kind and kind not in _HTML_TYPES:
                    return Page(url, final, response.status_code, error=f"not a web page ({kind})")
                declared = int(response.headers.get("content-length") or 0)
                if declared > self.limits.max_page_bytes:
                    return Page(url, final, response.status_code, error=_too_big(self.limits))
                body = bytearray()
                for part in response.iter_bytes():
                    body += part
                    if len(body) > self.limits.max_page_bytes:
                        return Page(url, final, response.status_code, error=_too_big(self.limits))
                encoding = response.encoding or "utf-8"
                return Page(
                    url, final, response.status_code, bytes(body).decode(encoding, "replace")
                )
        except httpx.TooManyRedirects:
            return Page(url, error="too many redirects")
        except httpx.HTTPError as error:
            return Page(url, error=_describe(error))

    def _page_item(self, page: Page) -> tuple[Fetched | Gone | Failed, list[str]]:
        if page.error:
            return Failed(page.url, page.error), []
        if page.status in (404, 410):
            return Gone(page.url), []
        if page.status >= 400:
            return Failed(page.url, f"HTTP {page.status}"), []
        final = normalise(page.final_url)
        if not self.in_scope(final):
            return Failed(page.url, f"redirected off the site to {final}; skipped"), []
        try:
            tree = lxml.html.fromstring(page.html)
        except (ValueError, lxml.etree.ParserError) as error:
            return Failed(page.url, f"unreadable HTML: {error}"), []
        canonical = _canonical(tree, final)
        identity = canonical if self.in_scope(canonical) else final
        links = [normalise(urljoin(final, href)) for href in tree.xpath("//a/@href")]
        text = trafilatura.extract(
            page.html,
            url=final,
            output_format="markdown",
            include_links=False,
            include_tables=True,
            include_comments=False,
            favor_recall=True,
        )
        metadata = trafilatura.extract_metadata(page.html)
        title = (metadata.title if metadata and metadata.title else "") or identity
        if not text or not text.strip():
            return Failed(page.url, "no readable text on the page"), links
        document = IncomingDocument(
            external_id=identity, title=title, text=_drop_title_heading(text, title), url=identity
        )
        return Fetched(document), links


def _canonical(tree: Any, base: str) -> str:
    for href in tree.xpath('//link[@rel="canonical"]/@href'):
        return normalise(urljoin(base, href.strip()))
    return normalise(base)


def normalise(url: str) -> str:
    """Without fragment; a folder's index page is the folder (/docs/index.html is /docs/)."""
    url = urldefrag(url)[0]
    for index in ("index.html", "index.htm"):
        if url.endswith("/" + index):
            return url[: -len(index)]
    return url


def _drop_title_heading(markdown: str, title: str) -> str:
    """The page title is already the document title; a first "# Title" would repeat it in
    every chunk's heading path."""
    first, _, rest = markdown.lstrip().partition("\n")
    if first.startswith("# ") and first[2:].strip() == title.strip():
        return rest.lstrip("\n")
    return markdown


def _too_big(limits: CrawlLimits) -> str:
    return f"page larger than {limits.max_page_bytes // 1000} kB; skipped"


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
