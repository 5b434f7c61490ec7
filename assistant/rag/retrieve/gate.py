"""The relevance gate: the candidates the cross-encoder read, best first, and the best at or
above the project's threshold kept."""

from __future__ import annotations

from assistant.rag.reading.scoring import logit
from assistant.rag.types import Candidate, Settings

#: How far (in logits) a passage of an API reference or a changelog is put behind a guide's:
#: the cross-encoder rates a reference entry that names the question's words about as high
#: as the guide section that explains them, and the reader is served better by the guide.
#: Only the order changes; the gate still reads the relevance as scored.
PAGE_KIND_PENALTY = {"reference": 1.0, "changelog": 2.0}


def gate(candidates: list[Candidate], settings: Settings) -> None:
    """Mark the best candidates at or above the threshold as kept, at most `max_kept`. A
    curated answer (written by the team) that passes leads: it is kept first and put first."""
    for candidate in candidates:
        candidate.kept = False
    ranked = [
        c for c in candidates if c.relevance is not None and c.relevance >= settings.threshold
    ]
    ranked.sort(key=lambda c: not c.chunk.curated)  # stable: otherwise best first
    for candidate in ranked[: settings.max_kept]:
        candidate.kept = True
    if any(c.kept and c.chunk.curated for c in candidates):
        candidates.sort(key=lambda c: not (c.kept and c.chunk.curated))


def regate(candidates: list[Candidate], settings: Settings) -> None:
    """After relevances changed: the candidates the cross-encoder read back in the order of
    relevance (the unread tail stays behind them), and the gate run again."""
    head = [c for c in candidates if c.relevance is not None]
    head.sort(key=best_first, reverse=True)
    candidates[: len(head)] = head
    gate(candidates, settings)


def best_first(candidate: Candidate) -> tuple[float, float]:
    """Best first: relevance in logits, a reference or changelog passage put behind a guide's
    that scores about as high; the relevance itself orders those the logit's clamp makes equal."""
    relevance = candidate.relevance or 0.0
    return logit(relevance) - PAGE_KIND_PENALTY.get(candidate.chunk.kind, 0.0), relevance
