"""How close a logged question comes to anything in a project's documents: the cosine
similarity of its (cached) embedding to the nearest chunk. A documentation gap is a question
about what the documents cover that none of them answers; an off-topic request ("write me a
poem") is far from all of them.

Measured on the demo help centre with bge-small-en-v1.5 (question texts embedded as documents,
as `question_vectors` caches them): 12 off-topic requests (poems, jokes, weather, trivia,
recipes) came to 0.40-0.51 of their nearest chunk, 14 product questions the documents do not
answer (student discount, Bitcoin, SSO, a mobile app...) to 0.55-0.75. 0.53 splits them."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from assistant.wiring import runtime
from ingestion.selectors import search_scope

logger = logging.getLogger(__name__)

OFF_TOPIC_SIMILARITY = 0.53


def nearest_similarities(*, project_id: int, vectors: Sequence[np.ndarray]) -> list[float | None]:
    """For each vector, the similarity of the project's nearest chunk; None when the project
    has no documents or the store cannot be asked (the kind is then unknown, not off-topic)."""
    scope = search_scope(project_id=project_id)
    if not vectors or not scope.stamp:
        return [None] * len(vectors)
    store = runtime.chunk_store()
    found: list[float | None] = []
    try:
        for vector in vectors:
            hits = store.query(vector.tolist(), k=1, where=scope.where)
            found.append(hits[0].similarity if hits else None)
    except Exception:  # noqa: BLE001 - the page still lists the blind spots, without kinds
        logger.exception("nearest-chunk search failed for project %s", project_id)
        return [None] * len(vectors)
    return found
