"""Embeddings of logged question texts, cached in the database (`QuestionVector`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import numpy as np

from assistant.wiring import runtime
from feedback.models import QuestionVector

EMBED_BATCH = 64


def normalised(text: str) -> str:
    """Case and spacing do not change what a question asks."""
    return re.sub(r"\s+", " ", text).strip().lower()


def _key(embedder_id: str, text: str) -> str:
    return hashlib.sha256(f"{embedder_id}\x1f{text}".encode()).hexdigest()


def question_vectors(*, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """Unit vectors of the given (normalised) texts; only texts never seen before are embedded."""
    embedder = runtime.embedder()
    keys = {text: _key(embedder.id, text) for text in set(texts)}
    stored = dict(
        QuestionVector.objects.filter(key__in=list(keys.values())).values_list("key", "vector")
    )
    vectors = {
        text: np.frombuffer(bytes(stored[key]), dtype=np.float32)
        for text, key in keys.items()
        if key in stored
    }
    missing = sorted(text for text in keys if text not in vectors)
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        embedded = np.asarray(embedder.embed_documents(batch), dtype=np.float32)
        embedded /= np.linalg.norm(embedded, axis=1, keepdims=True)
        QuestionVector.objects.bulk_create(
            [
                QuestionVector(key=keys[text], embedder_id=embedder.id, vector=row.tobytes())
                for text, row in zip(batch, embedded, strict=True)
            ],
            ignore_conflicts=True,  # another request embedded it meanwhile: same vector
        )
        vectors.update(zip(batch, embedded, strict=True))
    return vectors
