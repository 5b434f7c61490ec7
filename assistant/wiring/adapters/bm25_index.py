"""Lexical search with BM25 (bm25s), English stop words removed and words stemmed.

Dense vectors miss exact identifiers (`num_replicas`, `RAY_ADDRESS`, an error code) that a
docs question often hinges on; BM25 finds them. The index lives in memory and is rebuilt
whole: bm25s has no incremental updates, and rebuilding 14k passages takes about a second."""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np
import Stemmer


class Bm25Index:
    def __init__(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        if len(ids) != len(texts):
            raise ValueError("ids and texts differ in length")
        self.ids = list(ids)
        self._stemmer = Stemmer.Stemmer("english")
        self._model: bm25s.BM25 | None = None
        if self.ids:
            self._model = bm25s.BM25()
            self._model.index(self._tokens(list(texts)), show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, query: str, *, k: int) -> list[tuple[str, float]]:
        """The best `k` passages sharing a word with the query, best first, with scores."""
        if self._model is None or k < 1:
            return []
        tokens = self._tokens([query])
        if not tokens.vocab:  # only stop words: nothing to look for
            return []
        found, scores = self._model.retrieve(
            tokens, k=min(k, len(self.ids)), show_progress=False, n_threads=1
        )
        return [
            (self.ids[int(i)], float(s))
            for i, s in zip(np.asarray(found[0]), np.asarray(scores[0]), strict=True)
            if s > 0
        ]

    def _tokens(self, texts: list[str]) -> bm25s.tokenization.Tokenized:
        return bm25s.tokenize(
            texts, stopwords="en", stemmer=self._stemmer, show_progress=False, lower=True
        )
