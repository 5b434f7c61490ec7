"""Lexical search with BM25 (bm25s), English stop words removed and words stemmed.

Dense vectors miss exact identifiers (`num_replicas`, `RAY_ADDRESS`, an error code) that a
docs question often hinges on; BM25 finds them. The index lives in memory and is rebuilt
whole: bm25s has no incremental updates, and rebuilding 14k passages takes about a second."""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import bm25s
import numpy as np
import Stemmer

# bm25s sets its own logger to DEBUG when imported: a log line for every index it builds.
logging.getLogger("bm25s").setLevel(logging.WARNING)


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


class ScopedBm25:
    """The LexicalIndex port over the passages a search's `where` selects: each scope's index
    is built from `passages(where)` on its first search and kept (the last `scopes` of them)
    until `forget()`, which the wiring calls when the index stamp says the passages changed."""

    def __init__(
        self,
        passages: Callable[[Mapping[str, Any]], tuple[list[str], list[str]]],
        *,
        scopes: int = 16,
    ) -> None:
        self._passages = passages
        self._scopes = scopes
        self._built: OrderedDict[str, tuple[Mapping[str, Any], Bm25Index]] = OrderedDict()
        self._lock = threading.Lock()

    def search(
        self, query: str, *, k: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        key = json.dumps(where or {}, sort_keys=True, default=str)
        # Built under the lock: the questions that arrive while a scope is read wait for it
        # rather than each reading every passage again.
        with self._lock:
            built = self._built.get(key)
            if built is None:
                built = (dict(where or {}), Bm25Index(*self._passages(where or {})))
                self._built[key] = built
                while len(self._built) > self._scopes:
                    self._built.popitem(last=False)
            self._built.move_to_end(key)
        return built[1].search(query, k=k)

    def forget(self, scope: Callable[[Mapping[str, Any]], bool] = lambda where: True) -> None:
        """Drop the indexes of the scopes whose `where` the predicate picks (all by default)."""
        with self._lock:
            for key in [k for k, (where, _) in self._built.items() if scope(where)]:
                del self._built[key]
