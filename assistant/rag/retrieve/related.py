"""A refusal that helps: the nearest pages, offered under the sorry-sentence as "These pages may
help". They are never an answer: only what the cross-encoder read for the question, best
relevance first, one per page, and only when the best of them is on the project's subject.

The floor is on the cross-encoder's relevance (sigmoid) of each candidate. Measured on the Ray
dev set (`manage.py measure_related_floor`, docs/measuring/history.md): out-of-scope requests
score at most 0.013 for nine in ten (median 6e-5), while the answerable questions that end in a
refusal score 0.58 or more for 18 of 22 (the answerability check refused them) and under 0.01
for the rest. 0.1 (a logit of -2.2) sits an order of magnitude above the out-of-scope bulk and
keeps every page the answerable refusals get at 0.01: 5% of out-of-scope requests still get
pages (a cross-encoder false positive, "how much memory do i have left on this phone" against
Ray's memory pages), against 15% at 0.01. The pages are never the answer, so a stray one costs
a visitor a glance; a near miss under the gate ("Do you accept cheques?" 0.17 against the
invoices and payment methods section) is what the floor must let through.

A page must also share a content word with the question as asked, without its page topic: the
topic is read with the question, so on the demo's tokens page "Can I pay with bitcoin?" scored
0.67 against "Managing retrieval endpoint tokens" for the topic's words alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urldefrag

from assistant.rag.reading.words import content_words
from assistant.rag.types import Candidate, Retrieval

#: The least relevance a candidate needs to be offered as a related page.
RELATED_FLOOR = 0.1
#: At most this many pages: a short list to choose from, not a second search result page.
MAX_RELATED = 3


@dataclass(frozen=True, slots=True)
class RelatedPage:
    title: str
    url: str
    relevance: float

    def as_dict(self) -> dict[str, object]:
        return {"title": self.title, "url": self.url, "relevance": round(self.relevance, 4)}


def page_of(candidate: Candidate) -> str:
    """What makes two chunks one page: the URL without its #section, else the title's first
    part (an uploaded document has no URL; its chunks' titles start with the file's name)."""
    if candidate.chunk.url:
        return urldefrag(candidate.chunk.url).url
    return candidate.chunk.title.split(" > ")[0].strip().casefold()


#: The page topic the query starts with (retrieve/queries.py: `(topic) question`).
_TOPIC = re.compile(r"^\([^)]*\)\s*")


def _shares_a_word(candidate: Candidate, asked: set[str]) -> bool:
    """Whether the candidate's title or text has a content word of the question (a question
    of stop words only, "What is this?", is not held to it)."""
    return not asked or bool(
        asked & content_words(f"{candidate.chunk.title} {candidate.chunk.text}")
    )


def related_pages(
    retrieval: Retrieval | None, *, floor: float = RELATED_FLOOR, limit: int = MAX_RELATED
) -> list[RelatedPage]:
    """The best candidates at or above `floor`, deduplicated by page, at most `limit`. The
    link goes to the best section of each page (its chunk's URL, anchor included)."""
    if retrieval is None:
        return []
    scored = [c for c in retrieval.candidates if c.relevance is not None and c.relevance >= floor]
    scored.sort(key=lambda c: c.relevance or 0.0, reverse=True)
    asked = content_words(_TOPIC.sub("", retrieval.query, count=1))
    pages: list[RelatedPage] = []
    seen: set[str] = set()
    for candidate in scored:
        key = page_of(candidate)
        if not key or key in seen or not _shares_a_word(candidate, asked):
            continue
        seen.add(key)
        title = candidate.chunk.title or candidate.chunk.url
        pages.append(RelatedPage(title, candidate.chunk.url, candidate.relevance or 0.0))
        if len(pages) == limit:
            break
    return pages
