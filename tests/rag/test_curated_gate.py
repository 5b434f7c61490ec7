"""The gate lets a curated answer (written by the team) lead when it passes, and changes
nothing when none is found."""

from __future__ import annotations

from assistant.rag.retrieve.gate import gate
from assistant.rag.types import Candidate, Chunk, Settings


def candidate(name: str, relevance: float, *, curated: bool = False) -> Candidate:
    return Candidate(Chunk(id=name, text=name, curated=curated), 0.5, relevance)


def test_a_curated_answer_that_passes_is_kept_first_even_below_max_kept():
    found = [candidate(f"doc{i}", 0.99 - i / 100) for i in range(5)]
    found.append(candidate("team", 0.6, curated=True))
    gate(found, Settings(threshold=0.5, max_kept=5))
    kept = [c.chunk.id for c in found if c.kept]
    assert kept == ["team", "doc0", "doc1", "doc2", "doc3"]
    assert found[0].chunk.id == "team"


def test_a_curated_answer_under_the_threshold_is_not_kept():
    found = [candidate("doc", 0.9), candidate("team", 0.2, curated=True)]
    gate(found, Settings(threshold=0.5))
    assert [c.chunk.id for c in found if c.kept] == ["doc"]
    assert [c.chunk.id for c in found] == ["doc", "team"]


def test_without_curated_answers_the_order_is_the_rerankers():
    found = [candidate("a", 0.9), candidate("b", 0.8), candidate("c", 0.1)]
    gate(found, Settings(threshold=0.5, max_kept=1))
    assert [(c.chunk.id, c.kept) for c in found] == [("a", True), ("b", False), ("c", False)]
