"""Which pages a refusal offers ("These pages may help"): pure, no models."""

from __future__ import annotations

from assistant.rag.retrieve.related import RELATED_FLOOR, related_pages
from assistant.rag.types import Candidate, Chunk, Retrieval


def candidate(url: str, relevance: float | None, title: str = "") -> Candidate:
    chunk = Chunk(id=f"{url}-{relevance}", text="...", title=title or url, url=url)
    return Candidate(chunk, similarity=0.5, relevance=relevance)


def retrieval(*candidates: Candidate) -> Retrieval:
    return Retrieval(query="q", candidates=list(candidates))


def test_it_offers_the_best_pages_first_one_per_page_at_most_three():
    found = retrieval(
        candidate("https://d.example/a#one", 0.2),
        candidate("https://d.example/b", 0.4),
        candidate("https://d.example/a#two", 0.3),  # the same page as a#one, better
        candidate("https://d.example/c", 0.15),
        candidate("https://d.example/d", 0.12),
    )
    pages = related_pages(found)
    assert [p.url for p in pages] == [
        "https://d.example/b", "https://d.example/a#two", "https://d.example/c",
    ]  # fmt: skip
    assert pages[0].as_dict() == {"title": "https://d.example/b", "url": "https://d.example/b",
                                  "relevance": 0.4}  # fmt: skip


def test_it_offers_nothing_off_the_projects_subject():
    off_topic = retrieval(
        candidate("https://d.example/a", 2e-5), candidate("https://d.example/b", 1e-4)
    )
    assert related_pages(off_topic) == []
    assert related_pages(None) == []
    assert [p.url for p in related_pages(off_topic, floor=1e-5)] == [
        "https://d.example/b", "https://d.example/a",
    ]  # fmt: skip


def test_chunks_the_cross_encoder_did_not_read_are_never_offered():
    unread = retrieval(
        candidate("https://d.example/a", None), candidate("https://d.example/b", 0.5)
    )
    assert [p.url for p in related_pages(unread)] == ["https://d.example/b"]


def test_documents_without_a_link_are_one_page_by_their_title():
    files = retrieval(
        candidate("", 0.3, title="Handbook.pdf > Leave"),
        candidate("", 0.2, title="Handbook.pdf > Sick days"),
        candidate("", RELATED_FLOOR, title="Pricing.md"),
    )
    assert [p.title for p in related_pages(files)] == ["Handbook.pdf > Leave", "Pricing.md"]
