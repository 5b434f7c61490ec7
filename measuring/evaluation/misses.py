"""`evaluate --misses FILE`: each question the product got wrong, with what it kept and what
it said, as Markdown a person can read to see why (and fix the cause, not the question)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from measuring.evaluation.dataset import Query

#: How much of a kept passage a miss shows.
PASSAGE_CHARS = 400


def is_miss(outcome: dict[str, Any]) -> bool:
    """An answerable question refused, answered without its key facts, or whose gold section
    was not found in the top five; an unanswerable one answered."""
    if not outcome.get("answerable"):
        return outcome.get("refused") is False
    return (
        outcome.get("answered") is False
        or outcome.get("key_facts_hit") is False
        or outcome.get("hit@5") is False
    )


def _why(outcome: dict[str, Any]) -> str:
    if not outcome.get("answerable"):
        return "answered, though the documents do not say"
    if outcome.get("answered") is False:
        return f"refused (by the {outcome.get('refused_by', 'gate')})"
    reasons = []
    if outcome.get("hit@5") is False:
        reasons.append("gold section not in the top five")
    if outcome.get("key_facts_hit") is False:
        reasons.append(f"key facts held: {outcome.get('key_facts_share', 0):.0%}")
    return "; ".join(reasons)


def _gold(outcome: dict[str, Any]) -> str:
    """Where the gold section stood (limits.py), when it was not kept."""
    read, place = outcome["gold_read"], outcome.get("gold_place")
    if read is None:
        return "not in the index (extraction lost it)"
    found = "not among the candidates" if place is None else f"candidate {place + 1}"
    scored = outcome.get("gold_scored")
    by_retrieval = "" if scored is None else f", read {scored:.3f} by the retrieval"
    return f"the cross-encoder reads it at {read:.3f}; {found}{by_retrieval}"


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines())


def misses_markdown(queries: Sequence[Query], outcomes: Sequence[dict[str, Any]]) -> str:
    by_id = {q.id: q for q in queries}
    missed = [o for o in outcomes if is_miss(o)]
    lines = [f"# Misses: {len(missed)} of {len(outcomes)} questions", ""]
    for outcome in missed:
        query = by_id.get(outcome["id"])
        if query is None:
            continue
        lines += [f"## {query.id}: {_why(outcome)}", ""]
        for earlier in query.history:
            lines.append(f"- earlier: {earlier}")
        lines.append(f"- question: {query.question}")
        if query.relevant_ids:
            lines.append(f"- gold: {', '.join(sorted(query.relevant_ids))}")
        facts = query.extra.get("key_facts")
        if facts:
            lines.append(f"- key facts: {facts}")
        if "gold_read" in outcome:
            lines.append(f"- the gold section: {_gold(outcome)}")
        if outcome.get("refusal_reason"):
            lines.append(f"- why refused: {outcome['refusal_reason']}")
        if outcome.get("draft"):
            lines.append(f"- read again as the model's draft: {outcome['draft']}")
            second = [str(p.get("section", "")) for p in outcome.get("second_reading") or []]
            if second:
                lines.append(f"- the draft's reading kept: {', '.join(second)}")
            if "second_reading_judge_ms" in outcome:
                lines.append(
                    "- the model did not say they answer "
                    f"({outcome['second_reading_judge_ms']:.0f} ms)"
                )
        if outcome.get("cited"):
            lines.append(f"- cited: {', '.join(outcome['cited'])}")
        lines += ["", "Said:", "", _quoted(outcome.get("answer_text") or "(nothing)"), ""]
        kept = outcome.get("kept") or []
        below = outcome.get("below_gate") or []
        if not kept and below:
            kept = below
            lines += [f"Kept: none. The best candidates, below the threshold ({len(kept)}):", ""]
        else:
            lines += [f"Kept ({len(kept)}):", ""]
        for number, passage in enumerate(kept, start=1):
            gold = " **gold**" if passage.get("section") in query.relevant_ids else ""
            lines.append(
                f"{number}. `{passage.get('section', '')}` {passage.get('title', '')} "
                f"(relevance {passage.get('relevance', 0):.3f}){gold}"
            )
            snippet = " ".join(str(passage.get("text", "")).split())[:PASSAGE_CHARS]
            lines.append(f"   {snippet}")
        lines.append("")
    return "\n".join(lines) + "\n"
