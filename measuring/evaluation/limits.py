"""Where an answerable question's miss stops: in the search, in the cross-encoder's reading,
or after both.

For an answerable question whose gold section was not kept, the gold section's chunks are
read by the cross-encoder against the readings the retrieval made, whether or not the search
brought them, and their best place among the candidates is recorded. Read under the gate,
no search depth and no order of reading could have kept them: the reader is the limit. Read
over it but never among the passages read: the search is. A gold section kept and then refused
or quoted without the key facts stops at the check or at the quote. "The model is the limit"
is then a count over the run, not a belief."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from assistant.rag.reading.scoring import best_reading, passage_text
from assistant.rag.types import Chunk, Retrieval
from measuring.evaluation.dataset import Query
from measuring.evaluation.index import EvalIndex

#: A long gold section is read on its first chunks only: the cost stays a few pairs a miss.
MAX_GOLD_CHUNKS = 12

#: The limits, in the order a question meets them.
LIMITS = ("extraction", "search", "reader", "order", "check", "quote")

Score = Callable[[str, Sequence[str]], list[float]]


class GoldReading:
    """Reads the gold sections of an index's questions (one per evaluation run)."""

    def __init__(self, index: EvalIndex, score: Score) -> None:
        self.index = index
        self.score = score
        self.sections: dict[str, list[Chunk]] = defaultdict(list)
        for indexed in index.chunks.values():
            self.sections[indexed.section_id].append(indexed.chunk)

    def outcome(self, query: Query, retrieval: Retrieval) -> dict[str, Any]:
        """`gold_kept`, and for a gold section not kept: `gold_read` (the cross-encoder's
        best reading of its chunks, None when the index holds none), `gold_place` (its best
        place among the candidates, from 0; None when the search did not find it) and
        `gold_scored` (the retrieval's own best relevance for it; None when it read none)."""
        relevant = query.relevant_ids
        gold = [
            (n, c) for n, c in enumerate(retrieval.candidates)
            if (indexed := self.index.chunks.get(c.chunk.id)) and indexed.section_id in relevant
        ]  # fmt: skip
        found: dict[str, Any] = {"gold_kept": any(c.kept for _, c in gold)}
        if found["gold_kept"]:
            return found
        scored = [c.relevance for _, c in gold if c.relevance is not None]
        chunks = [c for s in sorted(relevant) for c in self.sections.get(s, [])]
        chunks.sort(key=lambda c: (c.url, c.ordinal))
        readings = retrieval.readings or [retrieval.query]
        scores = best_reading(
            self.score, readings, [passage_text(c) for c in chunks[:MAX_GOLD_CHUNKS]]
        ) if chunks else []  # fmt: skip
        found["gold_read"] = round(max(scores), 4) if scores else None
        found["gold_place"] = gold[0][0] if gold else None
        found["gold_scored"] = round(max(scored), 4) if scored else None
        return found


def limit_of(outcome: dict[str, Any], threshold: float) -> str | None:
    """Where an answerable question's miss stopped (one of LIMITS), or None: not a miss, or
    not read for its gold section (no `gold_kept`)."""
    if not outcome.get("answerable") or "gold_kept" not in outcome:
        return None
    if outcome.get("key_facts_hit") or (
        "key_facts_hit" not in outcome and outcome.get("answered") and outcome["gold_kept"]
    ):
        return None
    if outcome["gold_kept"]:
        return "quote" if outcome.get("answered") else "check"
    read = outcome.get("gold_read")
    if read is None:
        return "extraction"
    if read < threshold:
        return "reader"
    scored = outcome.get("gold_scored")
    if scored is not None and scored >= threshold:
        return "order"  # read over the gate, and more passages than are kept passed it
    return "search"


def limits(outcomes: Sequence[dict[str, Any]], threshold: float) -> dict[str, int]:
    """How many answerable misses stopped at each limit, in LIMITS' order."""
    counted = Counter(limit_of(o, threshold) for o in outcomes)
    return {limit: counted[limit] for limit in LIMITS if counted[limit]}
