"""Website crawler: from a start URL or a sitemap (given, or listed in robots.txt), within
the site's host and path prefix and the source's include/exclude path patterns, obeying
robots.txt and noindex, with page/depth/size limits, a few polite concurrent requests and a
user agent. ingestion/extraction.py turns each page into Markdown that keeps its structure.

Redirects are followed (the final URL must stay in scope) and a page's canonical URL is its
identity, so two URLs of one page make one document. A 404/410 says the page is gone; any
other failure is recorded against the URL and the crawl carries on.

A re-sync asks with the ETag / Last-Modified the page last had: a 304 keeps the indexed copy
and the links it had, so an unchanged site is crawled without being downloaded again.
"""

from __future__ import annotations

import fnmatch
import re
import urllib.robotparser
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit
from xml.etree import ElementTree as ET  # noqa: S405 - parsed with the size limit below

import httpx
import lxml.html

from ingestion.connectors.base import (
    ConnectorError,
    Failed,
    Fetched,
    Gone,
    Item,
    Skipped,
    Total,
    Unchanged,
)
from ingestion.extraction import EXTRACTION_VERSION, decode_page, extract_page, html_tree
from ingestion.page_kinds import SOURCE
from ingestion.services import IncomingDocument

USER_AGENT = "AskDocsBot/1.0 (+self-hosted Ask AI assistant; respects robots.txt)"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_SITEMAP_NS = re.compile(r"^\{[^}]*\}")

#: Pages documentation generators make for machines or for browsing, not for reading: the
#: general index, search pages, module indexes. Matched against the URL's path (fnmatch).
DEFAULT_EXCLUDE = (
    "*/genindex*", "*/search.html", "*/search/", "*/py-modindex.html", "*/modindex.html",
    "*/index-all.html", "*/_sources/*", "*/_modules/*",
)  # fmt: skip


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
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Not a page at all (an image or an archive a page links to): left out, not an error.
    not_a_page: str = ""


@dataclass(frozen=True, slots=True)
class PathRules:
    """Which pages of the site to read, by path patterns (fnmatch, `*` crosses folders)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE

    def reason_to_skip(self, path: str) -> str:
        if self.include and not any(fnmatch.fnmatchcase(path, p) for p in self.include):
            return "not matched by the include patterns"
        matched = next((p for p in self.exclude if fnmatch.fnmatchcase(path, p)), None)
        return f"excluded by the pattern {matched}" if matched else ""


class WebsiteConnector:
    def __init__(
        self,
        *,
        start_url: str = "",
        sitemap_url: str = "",
        limits: CrawlLimits | None = None,
        user_agent: str = USER_AGENT,
        rules: PathRules | None = None,
        known: Mapping[str, Mapping[str, Any]] | None = None,
        read_source_listings: bool = False,
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
        self.rules = rules or PathRules()
        #: Pages that are one program text (ingestion/page_kinds.py) are skipped unless asked.
        self.read_source_listings = read_source_listings
        #: What the last sync stored of each page (Document.fetch_state), by URL.
        self.known = {
            url: state for url, state in (known or {}).items()
            if state.get("extraction") == EXTRACTION_VERSION
        }  # fmt: skip
        self._robots: urllib.robotparser.RobotFileParser | None = None

    @classmethod
    def from_config(
        cls, config: dict[str, Any], *, known: Mapping[str, Mapping[str, Any]] | None = None
    ) -> WebsiteConnector:
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
            rules=PathRules(
                include=_patterns(config.get("include")),
                exclude=_patterns(config.get("exclude", DEFAULT_EXCLUDE)),
            ),
            known=known,
            read_source_listings=bool(config.get("read_source_listings", False)),
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
        if self.sitemap_url:
            listed = self._sitemap_urls(client, self.sitemap_url, depth=0)
            return ([self.start_url] if self.start_url else []) + listed
        # Sitemaps robots.txt lists reach pages no link leads to; links are followed too.
        named = (self._robots.site_maps() or []) if self._robots else []
        urls: list[str] = []
        for sitemap in (urljoin(self.origin + "/", u) for u in named):
            if urlsplit(sitemap).netloc.lower() == urlsplit(self.origin).netloc.lower():
                try:
                    urls += [u for u in self._sitemap_urls(client, sitemap, depth=0)
                             if self.in_scope(normalise(u))]  # fmt: skip
                except ConnectorError:
                    continue  # a broken sitemap: the links still lead to the pages
        return [self.start_url, *urls]

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
            elif reason := self.rules.reason_to_skip(urlsplit(url).path):
                yield Skipped(url, reason)
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
                for item, links in pool.map(lambda u: self._read_page(client, u), level):
                    ident = (
                        item.document.external_id if isinstance(item, Fetched) else item.external_id
                    )
                    if isinstance(item, Fetched | Gone | Unchanged) and ident in done_ids:
                        continue  # a second URL of a page already read (canonical)
                    done_ids.add(ident)
                    yield item
                    if depth == max_depth:
                        continue
                    for link in links:
                        if link in queued or not self.in_scope(link) or not self.allowed(link):
                            continue
                        queued.add(link)
                        if reason := self.rules.reason_to_skip(urlsplit(link).path):
                            yield Skipped(link, reason)
                        else:
                            next_level.append(link)
                level = next_level

    def _read_page(
        self, client: httpx.Client, url: str
    ) -> tuple[Fetched | Gone | Failed | Skipped | Unchanged, list[str]]:
        """Fetch (conditionally, when the page was read before) and extract one page: runs
        on the crawl's threads, so pages are parsed while others download."""
        state = self.known.get(url)
        page = self._fetch(client, url, validators=state)
        if state is not None and page.status == 304:
            return Unchanged(str(state.get("id") or url)), list(state.get("links") or [])
        return self._page_item(page)

    def _fetch(
        self,
        client: httpx.Client,
        url: str,
        *,
        accept_xml: bool = False,
        validators: Mapping[str, Any] | None = None,
    ) -> Page:
        headers = {}
        if validators and validators.get("etag"):
            headers["If-None-Match"] = str(validators["etag"])
        if validators and validators.get("last_modified"):
            headers["If-Modified-Since"] = str(validators["last_modified"])
        try:
            with client.stream("GET", url, headers=headers) as response:
                final = str(response.url)
                if response.status_code == 304:
                    return Page(url, final, 304)
                if response.status_code >= 400:
                    return Page(url, final, response.status_code)
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if not accept_xml and kind and kind not in _HTML_TYPES:
                    return Page(url, final, response.status_code,
                                not_a_page=f"not a web page ({kind})")  # fmt: skip
                declared = int(response.headers.get("content-length") or 0)
                if declared > self.limits.max_page_bytes:
                    return Page(url, final, response.status_code, error=_too_big(self.limits))
                body = bytearray()
                for part in response.iter_bytes():
                    body += part
                    if len(body) > self.limits.max_page_bytes:
                        return Page(url, final, response.status_code, error=_too_big(self.limits))
                return Page(
                    url,
                    final,
                    response.status_code,
                    decode_page(bytes(body), response.charset_encoding),
                    headers=_validators(response.headers),
                )
        except httpx.TooManyRedirects:
            return Page(url, error="too many redirects")
        except httpx.HTTPError as error:
            return Page(url, error=_describe(error))

    def _page_item(self, page: Page) -> tuple[Fetched | Gone | Failed | Skipped, list[str]]:
        if page.not_a_page:
            return Skipped(normalise(page.url), page.not_a_page), []
        if page.error:
            return Failed(page.url, page.error), []
        if page.status in (404, 410):
            return Gone(page.url), []
        if page.status >= 400 or page.status == 304:
            return Failed(page.url, f"HTTP {page.status}"), []
        final = normalise(page.final_url)
        if not self.in_scope(final):
            return Failed(page.url, f"redirected off the site to {final}; skipped"), []
        try:
            tree = html_tree(page.html)
        except (ValueError, lxml.etree.ParserError) as error:
            return Failed(page.url, f"unreadable HTML: {error}"), []
        canonical = _canonical(tree, final)
        identity = canonical if self.in_scope(canonical) else final
        links = list(dict.fromkeys(
            link for href in tree.xpath("//a/@href")
            if self.in_scope(link := normalise(urljoin(final, href)))
        ))  # fmt: skip
        robots = " ".join(tree.xpath('//meta[@name="robots"]/@content')).lower()
        if "noindex" in robots:
            return Skipped(identity, "the page asks not to be indexed (noindex)"), (
                [] if "nofollow" in robots else links
            )
        extracted = extract_page(tree, fallback_title=identity)
        if extracted.kind == SOURCE and not self.read_source_listings:
            return Skipped(identity, "a source code listing (not read by default)"), links
        if not extracted.markdown.strip():
            return Failed(page.url, "no readable text on the page"), links
        state = {"id": identity, "requested": normalise(page.url), "links": links,
                 "extraction": EXTRACTION_VERSION,
                 "etag": page.headers.get("etag", ""),
                 "last_modified": page.headers.get("last-modified", "")}  # fmt: skip
        document = IncomingDocument(
            external_id=identity, title=extracted.title, text=extracted.markdown, url=identity,
            fetch_state=state, kind=extracted.kind,
        )  # fmt: skip
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


def _validators(headers: httpx.Headers) -> dict[str, str]:
    """The ETag, and the Last-Modified when it can be trusted: one within a second of the
    answer's Date is weak (RFC 9110 8.8.2.2), as the page may change again within the same
    second, so the page is read again next time."""
    found = {"etag": headers["etag"]} if "etag" in headers else {}
    modified, date = headers.get("last-modified"), headers.get("date")
    if modified:
        try:
            age = parsedate_to_datetime(date) - parsedate_to_datetime(modified) if date else None
        except (TypeError, ValueError):
            age = None
        if age is None or age.total_seconds() >= 1:
            found["last-modified"] = modified
    return found


def _patterns(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, Sequence) or not all(isinstance(p, str) for p in value):
        raise ConnectorError("Path patterns must be a list of strings.")
    return tuple(p.strip() for p in value if p.strip())


def _too_big(limits: CrawlLimits) -> str:
    return f"page larger than {limits.max_page_bytes // 1000} kB; skipped"


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
