"""The raw floor: the same inputs through the bare libraries, with nothing of ours around them.

* embedding: one `onnxruntime` `session.run` of the embedder's model on each searched text,
  already tokenised (instruction prefix and truncation as the adapter does them), side by side
  on the adapter's number of threads;
* vector search: one `chromadb` `collection.query` for ids and distances per searched text;
* rerank: `session.run` of the cross-encoder on the (query, passage) pairs, already tokenised
  by flashrank's own tokenizer, in the adapter's batch size.

The sessions are built here, from the same verified model files and run as the product's
adapters run theirs (single-threaded sessions, batches shared out to `threads` threads), so the
ratio pipeline / floor is what our code costs.
This is the one benchmark module that talks to the model and store libraries directly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from assistant.wiring.adapters.chroma_clients import get_client
from assistant.wiring.adapters.chroma_store import ChromaStore
from assistant.wiring.adapters.flashrank_reranker import FlashrankReranker
from assistant.wiring.adapters.model_files import (
    FLASHRANK_MODEL_FILE,
    FLASHRANK_MODEL_NAME,
    prepare_flashrank_cache,
    verified_files,
)
from assistant.wiring.adapters.onnx_embedder import OnnxEmbedder


def _session(path: str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


@dataclass(slots=True)
class RawEmbed:
    session: ort.InferenceSession
    tokenizer: Tokenizer
    instruction: str
    pool: ThreadPoolExecutor

    @classmethod
    def for_embedder(cls, embedder: object) -> RawEmbed | None:
        if not isinstance(embedder, OnnxEmbedder):
            return None  # an Ollama embedder has no local session to compare with
        files = verified_files(embedder.spec.files)
        tokenizer = Tokenizer.from_file(str(files["tokenizer.json"]))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=embedder.max_tokens)
        session = _session(str(files["model.onnx"]))
        pool = ThreadPoolExecutor(embedder.threads, thread_name_prefix="raw-embed")
        return cls(session, tokenizer, embedder.spec.query_instruction, pool)

    def prepare(self, query: str) -> dict[str, Any]:
        ids = np.array([self.tokenizer.encode(self.instruction + query).ids], dtype=np.int64)
        return {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids)}  # fmt: skip

    def time_ms(self, queries: Sequence[dict[str, Any]]) -> float:
        """The prepared queries, one run each, shared out to the adapter's threads."""
        started = time.perf_counter()
        list(self.pool.map(lambda inputs: self.session.run(["last_hidden_state"], inputs), queries))
        return (time.perf_counter() - started) * 1000


@dataclass(slots=True)
class RawRerank:
    session: ort.InferenceSession
    tokenizer: Any
    batch_size: int
    pool: ThreadPoolExecutor

    @classmethod
    def for_reranker(cls, reranker: object) -> RawRerank | None:
        if not isinstance(reranker, FlashrankReranker):
            return None
        from flashrank import Ranker

        model_dir = prepare_flashrank_cache(reranker.cache_dir)
        # A Ranker of our own only for its tokenizer, configured as the adapter's is
        # (truncation at max_tokens, padding); its session is replaced by a bare one.
        ranker = Ranker(model_name=FLASHRANK_MODEL_NAME, cache_dir=str(reranker.cache_dir),
                        max_length=reranker.max_tokens, log_level="WARNING")  # fmt: skip
        session = _session(str(model_dir / FLASHRANK_MODEL_FILE))
        pool = ThreadPoolExecutor(reranker.threads, thread_name_prefix="raw-rerank")
        return cls(session, ranker.tokenizer, reranker.batch_size, pool)

    def prepare(self, query: str, passages: Sequence[str]) -> list[dict[str, Any]]:
        batches = []
        for start in range(0, len(passages), self.batch_size):
            pairs = [[query, p] for p in passages[start : start + self.batch_size]]
            encoded = self.tokenizer.encode_batch(pairs)
            inputs = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            }
            type_ids = np.array([e.type_ids for e in encoded], dtype=np.int64)
            if type_ids.any():
                inputs["token_type_ids"] = type_ids
            batches.append(inputs)
        return batches

    def time_ms(self, batches: list[dict[str, Any]]) -> float:
        started = time.perf_counter()
        list(self.pool.map(lambda inputs: self.session.run(None, inputs), batches))
        return (time.perf_counter() - started) * 1000


@dataclass(slots=True)
class RawSearch:
    collection: Any

    @classmethod
    def for_store(cls, store: object) -> RawSearch | None:
        if not isinstance(store, ChromaStore):
            return None
        collection = get_client(store.location).get_collection(store.name)
        return cls(collection)

    def time_ms(self, vector: Sequence[float], k: int) -> float:
        started = time.perf_counter()
        self.collection.query(query_embeddings=[list(vector)], n_results=k, include=["distances"])
        return (time.perf_counter() - started) * 1000


@dataclass(slots=True)
class RawFloor:
    embed: RawEmbed | None
    search: RawSearch | None
    rerank: RawRerank | None

    @classmethod
    def build(cls, *, embedder: object, store: object, reranker: object) -> RawFloor:
        return cls(
            RawEmbed.for_embedder(embedder),
            RawSearch.for_store(store),
            RawRerank.for_reranker(reranker),
        )
