"""Cross-encoder reranking with flashrank, on the ms-marco-MiniLM-L-12-v2 file shipped on PyPI."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import onnxruntime as ort
from flashrank import Ranker, RerankRequest

from assistant.rag.chunking.pieces import MAX_CHARS_PER_TOKEN
from assistant.wiring.adapters.model_files import (
    FLASHRANK_MODEL_FILE,
    FLASHRANK_MODEL_NAME,
    PackageDirs,
    prepare_flashrank_cache,
)
from assistant.wiring.adapters.workers import Workers


class FlashrankReranker:
    """Implements `Reranker`: sigmoid relevance in [0, 1] (0.5 is logit 0), in input order.

    The Ranker is built on first use (never at import or construction: Celery forks), from a
    cache folder prepared with the verified model, so flashrank never downloads anything.
    """

    def __init__(
        self,
        *,
        cache_dir: Path,
        max_tokens: int = 256,
        threads: int = 1,
        batch_size: int = 1,
        package_dirs: PackageDirs | None = None,
    ) -> None:
        if threads < 1 or batch_size < 1 or max_tokens < 8:
            raise ValueError("threads and batch_size must be at least 1, max_tokens at least 8")
        self.id = f"flashrank:{FLASHRANK_MODEL_NAME}"
        self.cache_dir = Path(cache_dir)
        # Query and passage together. Cost grows with it: 20 candidates of 256 tokens take about
        # a second on two cores.
        self.max_tokens = max_tokens
        # The tokenizer reads a whole text before it truncates: a passage is cut to what its
        # window could hold first, so an old oversized chunk (or a 19 MB one) costs nothing.
        self.max_chars = max_tokens * MAX_CHARS_PER_TOKEN
        # Runs go to `threads` workers sharing one single-threaded session (see workers.py);
        # one pool per process, so concurrent questions share the cores instead of fighting.
        self.threads = threads
        self._workers = Workers(threads, "reranker")
        # The INT8 model quantizes activations with one scale per batch, so a passage's score
        # shifts (by up to ~0.03) with whatever else shares its batch, and padding to the longest
        # passage costs time. One passage per run keeps scores reproducible, and measured no
        # slower on two cores.
        self.batch_size = batch_size
        self._package_dirs = package_dirs
        self._lock = threading.Lock()
        self._ranker: Ranker | None = None

    @property
    def session_created(self) -> bool:
        return self._ranker is not None

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        ranker = self._ensure_ranker()
        query = query[: self.max_chars]
        items = [{"id": i, "text": text[: self.max_chars]} for i, text in enumerate(passages)]
        batches = [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]

        def run(batch: list[dict[str, object]]) -> list[dict[str, object]]:
            results: list[dict[str, object]] = ranker.rerank(
                RerankRequest(query=query, passages=batch)
            )
            return results

        scores = [0.0] * len(items)
        for results in self._workers.map(run, batches):
            # flashrank returns passages sorted by score; the ids put them back in input order.
            for result in results:
                scores[int(result["id"])] = float(result["score"])  # type: ignore[call-overload,arg-type]
        return scores

    def _ensure_ranker(self) -> Ranker:
        if self._ranker is None:
            with self._lock:
                if self._ranker is None:
                    self._ranker = self._build_ranker()
        return self._ranker

    def _build_ranker(self) -> Ranker:
        prepare_flashrank_cache(self.cache_dir, package_dirs=self._package_dirs)
        root = logging.getLogger()
        # Ranker() calls logging.basicConfig(), which would attach a stderr handler to the root
        # logger of a process that has not configured logging yet; a placeholder handler makes
        # that call a no-op.
        placeholder = logging.NullHandler()
        root.addHandler(placeholder)
        try:
            ranker = Ranker(
                model_name=FLASHRANK_MODEL_NAME,
                cache_dir=str(self.cache_dir),
                max_length=self.max_tokens,
                log_level="WARNING",
            )
        finally:
            root.removeHandler(placeholder)
        # flashrank's own session uses every core; ours is single-threaded, run by the workers.
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        ranker.session = ort.InferenceSession(
            str(ranker.model_dir / FLASHRANK_MODEL_FILE),
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )
        return ranker
