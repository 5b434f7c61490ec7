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

import re
import time
import urllib.robotparser
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urljoin, urlsplit
from xml.etree import ElementTree as ET  # noqa: S405 - parsed with the size limit below

import httpx
import lxml.html

from assistant.wiring import outbound
from ingestion.connectors.base import (
    ConnectorError,
    Cut,
    Failed,
    Fetched,
    Gone,
    Item,
    Skipped,
    Total,
    Unchanged,
)
from ingestion.connectors.web_fetch import Page, fetch
from ingestion.connectors.website_rules import (
    DEFAULT_EXCLUDE,
    NOT_INCLUDED,
    NOT_PAGES,
    CrawlLimits,
    PathRules,
    cache_validators,
    canonical_url,
    normalise,
    path_patterns,
)
from ingestion.extraction import EXTRACTION_VERSION, extract_page, html_tree
from ingestion.models import Source
from ingestion.page_kinds import SOURCE
from ingestion.selectors import fetch_states
from ingestion.services import IncomingDocument

USER_AGENT = "AskDocsBot/1.0 (+self-hosted Ask AI assistant; respects robots.txt)"
_SITEMAP_NS = re.compile(r"^\{[^}]*\}")


def website_connector(source: Source) -> WebsiteConnector:
    """Its row's connector (registry.py): a re-crawl asks with each page's last validators."""
    return WebsiteConnector.from_config(source.config or {}, known=fetch_states(source=source))


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
        #: What was cut short or skipped before the pages (robots.txt, sitemaps), reported.
        self._notes: list[Failed | Skipped] = []
        self._run_ends = time.monotonic() + self.limits.run_seconds

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
                include=path_patterns(config.get("include")),
                exclude=path_patterns(config.get("exclude", DEFAULT_EXCLUDE)),
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
        self._run_ends = time.monotonic() + self.limits.run_seconds
        with outbound.client(headers=headers, timeout=self.limits.timeout) as client:
            self._robots = self._read_robots(client)
            seeds = self._seeds(client)
            yield from self._notes
            yield from self._crawl(client, seeds)

    def _seconds_for_one(self) -> float:
        """A fetch's deadline: its own, or what is left of the run's when that is nearer."""
        return max(0.0, min(self.limits.page_seconds, self._run_ends - time.monotonic()))

    def _run_over(self) -> bool:
        return time.monotonic() >= self._run_ends

    def _read_robots(self, client: httpx.Client) -> urllib.robotparser.RobotFileParser | None:
        url = f"{self.origin}/robots.txt"
        page = fetch(
            client, url, seconds=self._seconds_for_one(), max_bytes=self.limits.max_robots_bytes,
            what="robots.txt", html_only=False, keep_start=True,
        )  # fmt: skip
        if page.error:
            raise ConnectorError(f"Cannot reach {self.origin}: {page.error}")
        if page.status >= 400:
            return None  # no robots.txt: everything is allowed
        lines = page.html.splitlines()
        if page.cut:
            lines = lines[:-1]  # the last line may be cut in the middle
            kept = self.limits.max_robots_bytes // 1000
            self._notes.append(
                Skipped(url, f"robots.txt larger than {kept} kB: the rules in its first "
                        f"{kept} kB are followed, the rest is not read")
            )  # fmt: skip
        robots = urllib.robotparser.RobotFileParser()
        robots.parse(lines)
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
                except ConnectorError as error:
                    # a broken sitemap: the links still lead to the pages
                    self._notes.append(Failed(sitemap, str(error)))
        return [self.start_url, *urls]

    def _sitemap_urls(self, client: httpx.Client, url: str, *, depth: int) -> list[str]:
        page = fetch(
            client, url, seconds=self._seconds_for_one(), max_bytes=self.limits.max_sitemap_bytes,
            what="sitemap", html_only=False,
        )  # fmt: skip
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

    def _first_level(
        self, seeds: list[str], queued: set[str], hubs: dict[str, str]
    ) -> tuple[list[str], list[Item]]:
        """The seeds to read, and the items of those not read. Include rules name the pages
        wanted, rarely the start page that links to them: it is read for its links only
        (in `hubs`, with why it is not indexed)."""
        start = normalise(self.start_url) if self.start_url else ""
        level: list[str] = []
        items: list[Item] = []
        for seed in seeds:
            url = normalise(seed)
            if url in queued:
                continue
            queued.add(url)
            if not self.in_scope(url):
                items.append(Failed(url, "outside the site's domain and path; skipped"))
            elif not self.allowed(url):
                items.append(Failed(url, "disallowed by robots.txt; skipped"))
            elif reason := self.rules.reason_to_skip(urlsplit(url).path):
                if url == start and reason == NOT_INCLUDED:
                    hubs[url] = f"{reason}: the start page, read for its links only"
                    level.append(url)
                else:
                    items.append(Skipped(url, reason))
            else:
                level.append(url)
        return level, items

    def _crawl(self, client: httpx.Client, seeds: list[str]) -> Iterator[Item]:
        queued: set[str] = set()
        done_ids: set[str] = set()
        hubs: dict[str, str] = {}  # pages read for their links only: why they are not indexed
        level, not_read_seeds = self._first_level(seeds, queued, hubs)
        yield from not_read_seeds
        pages = 0
        # A sitemap alone is the list of pages: links are not followed, so a page dropped
        # from the sitemap is dropped from the index.
        max_depth = self.limits.max_depth if self.start_url else 0
        with ThreadPoolExecutor(max_workers=self.limits.concurrency) as pool:
            for depth in range(max_depth + 1):
                level = level[: max(0, self.limits.max_pages - pages)]
                if not level:
                    break
                if self._run_over():
                    yield self._cut(len(level))
                    break
                pages += len(level)
                final = depth == max_depth or pages >= self.limits.max_pages
                yield Total(pages, at_most=None if final else self.limits.max_pages)
                next_level: list[str] = []
                not_read = 0
                read = pool.map(lambda u: self._read_page(client, u), level)
                for url, (item, links) in zip(level, read, strict=True):
                    if item is None:
                        not_read += 1
                        continue
                    if url in hubs and isinstance(item, Fetched | Unchanged):
                        item = Skipped(url, hubs[url])
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
                if not_read:
                    yield self._cut(not_read)
                    break
                level = next_level

    def _cut(self, not_read: int) -> Cut:
        return Cut(
            f"the crawl's deadline ({self.limits.run_seconds:g} s) passed with {not_read} "
            "page(s) not read; nothing that was not read is removed"
        )

    def _read_page(
        self, client: httpx.Client, url: str
    ) -> tuple[Fetched | Gone | Failed | Skipped | Unchanged | None, list[str]]:
        """Fetch (conditionally, when the page was read before) and extract one page: runs
        on the crawl's threads, so pages are parsed while others download. None: the run's
        deadline passed before it was read."""
        if self._run_over():
            return None, []
        state = self.known.get(url)
        page = self._fetch(client, url, validators=state)
        if state is not None and page.status == 304:
            return Unchanged(str(state.get("id") or url)), list(state.get("links") or [])
        return self._page_item(page)

    def _fetch(
        self, client: httpx.Client, url: str, *, validators: Mapping[str, Any] | None = None
    ) -> Page:
        headers = {}
        if validators and validators.get("etag"):
            headers["If-None-Match"] = str(validators["etag"])
        if validators and validators.get("last_modified"):
            headers["If-Modified-Since"] = str(validators["last_modified"])
        page = fetch(
            client, url, seconds=self._seconds_for_one(), max_bytes=self.limits.max_page_bytes,
            headers=headers, follow=self._reason_not_to_follow,
        )  # fmt: skip
        if page.error or page.not_a_page:
            return page
        return Page(page.url, page.final_url, page.status, page.html, page.error,
                    cache_validators(page.headers))  # fmt: skip

    def _reason_not_to_follow(self, url: str) -> str:
        """A redirect is followed only within the site (checked before it is requested)."""
        final = normalise(url)
        if not self.in_scope(final):
            return f"redirected off the site to {final}; skipped"
        if not self.allowed(final):
            return f"redirected to {final}, which robots.txt disallows; skipped"
        return ""

    def _page_item(self, page: Page) -> tuple[Fetched | Gone | Failed | Skipped, list[str]]:
        if page.not_a_page:
            return Skipped(page.url, page.not_a_page), []
        if page.error:
            return Failed(page.url, page.error), []
        if page.status in (404, 410):
            return Gone(page.url, f"HTTP {page.status}: a link on the site leads to no page"), []
        if page.status >= 400 or page.status == 304:
            return Failed(page.url, f"HTTP {page.status}"), []
        final = normalise(page.final_url)
        if not self.in_scope(final):
            return Failed(page.url, f"redirected off the site to {final}; skipped"), []
        try:
            tree = html_tree(page.html)
        except (ValueError, lxml.etree.ParserError) as error:
            return Failed(page.url, f"unreadable HTML: {error}"), []
        canonical = canonical_url(tree, final)
        identity = canonical if self.in_scope(canonical) else final
        links = list(dict.fromkeys(
            link for href in tree.xpath("//a/@href")
            if self.in_scope(link := normalise(urljoin(final, href)))
            and not NOT_PAGES.search(urlsplit(link).path)
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
