"""Where an answerable miss stops (measuring/evaluation/limits.py): the gold section read by
the real cross-encoder whether or not the search found it, and each miss put at the first
limit it met."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.rag.reading.scoring import passage_text
from assistant.rag.types import Candidate, Chunk, Retrieval
from assistant.wiring.adapters.chroma_store import ChromaStore
from assistant.wiring.adapters.flashrank_reranker import FlashrankReranker
from assistant.wiring.adapters.onnx_embedder import OnnxEmbedder
from measuring.evaluation.dataset import Query
from measuring.evaluation.index import EvalIndex, IndexedChunk
from measuring.evaluation.limits import GoldReading, limit_of, limits

URL = "https://docs.example.com/"
DUMP = Chunk("dump", 'Use the ".dump" command to convert the entire contents of a database '
             "into a single UTF-8 text file.", "Shell > Converting a database to text",
             URL + "cli#dump", document="cli", ordinal=0)  # fmt: skip
UPSERT = Chunk("upsert", "ON CONFLICT DO UPDATE turns an INSERT that would violate a uniqueness "
               "constraint into an UPDATE of the row it conflicts with.", "UPSERT",
               URL + "upsert", document="upsert", ordinal=0)  # fmt: skip


def index(tmp_path: Path, embedder: OnnxEmbedder) -> EvalIndex:
    chunks = {
        c.id: IndexedChunk(c, section_id=c.url.removeprefix(URL), page=c.url.split("#")[0])
        for c in (DUMP, UPSERT)
    }
    store = ChromaStore.for_embedder(tmp_path / "chroma", embedder)
    return EvalIndex(key="limits", chunks=chunks, store=store, built=True)


def query(gold: str) -> Query:
    return Query("q", "How do I make a text copy of my whole database?", frozenset({gold}), True)


def test_a_gold_section_not_kept_is_read_whether_or_not_the_search_found_it(
    tmp_path: Path, embedder: OnnxEmbedder, reranker: FlashrankReranker
) -> None:
    gold = GoldReading(index(tmp_path, embedder), reranker.score)
    asked = "How do I make a text copy of my whole database?"
    # The search found only the UPSERT entry, read under the gate, and kept nothing.
    missed = Retrieval(asked, [Candidate(UPSERT, 0.6, relevance=0.01)], readings=[asked])
    found = gold.outcome(query("cli#dump"), missed)
    assert found["gold_kept"] is False
    assert found["gold_place"] is None and found["gold_scored"] is None
    assert found["gold_read"] == round(reranker.score(asked, [passage_text(DUMP)])[0], 4)
    assert found["gold_read"] > 0.5  # the reader would have kept it: the search is the limit

    # Found second and kept: nothing more is read.
    both = [Candidate(UPSERT, 0.6, relevance=0.01), Candidate(DUMP, 0.5, relevance=0.9, kept=True)]
    kept = Retrieval(asked, both, readings=[asked])
    assert gold.outcome(query("cli#dump"), kept) == {"gold_kept": True}

    # A gold section the index does not hold (extraction lost it) reads as nothing.
    assert gold.outcome(query("cli#lost"), missed)["gold_read"] is None


def test_each_miss_stops_at_the_first_limit_it_met() -> None:
    def miss(**outcome: object) -> dict[str, Any]:
        return {"answerable": True, "key_facts_hit": False, **outcome}

    assert limit_of(miss(gold_kept=False, gold_read=None), 0.5) == "extraction"
    assert limit_of(miss(gold_kept=False, gold_read=0.03, gold_place=0), 0.5) == "reader"
    assert limit_of(miss(gold_kept=False, gold_read=0.9, gold_place=None), 0.5) == "search"
    # Found, but the retrieval read another chunk of it under the gate: still the search.
    assert limit_of(miss(gold_kept=False, gold_read=0.9, gold_place=3, gold_scored=0.2),
                    0.5) == "search"  # fmt: skip
    assert limit_of(miss(gold_kept=False, gold_read=0.9, gold_place=6, gold_scored=0.8),
                    0.5) == "order"  # fmt: skip
    assert limit_of(miss(gold_kept=True, answered=False), 0.5) == "check"
    assert limit_of(miss(gold_kept=True, answered=True), 0.5) == "quote"
    # Not misses: the key facts held, an unanswerable question, a question not read for it.
    assert limit_of({"answerable": True, "key_facts_hit": True, "gold_kept": False}, 0.5) is None
    assert limit_of({"answerable": False, "refused": False}, 0.5) is None
    assert limit_of(miss(), 0.5) is None
    # Without key facts (no --answers scoring), answered from the gold section is no miss.
    assert limit_of({"answerable": True, "answered": True, "gold_kept": True}, 0.5) is None

    outcomes = [
        miss(gold_kept=True, answered=True),
        miss(gold_kept=False, gold_read=0.1),
        miss(gold_kept=False, gold_read=0.2),
        {"answerable": True, "key_facts_hit": True, "gold_kept": True},
    ]
    assert limits(outcomes, 0.5) == {"reader": 2, "quote": 1}
