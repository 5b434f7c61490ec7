"""The seams of the pipeline. Adapters in `adapters/` implement these; the core only sees these."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from assistant.rag.types import Chunk, Part, Prompt, Question, Retrieval, Settings


class Embedder(Protocol):
    #: Stable identifier, e.g. "onnx:bge-small-en-v1.5"; one vector collection per id.
    id: str
    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Several queries at once (a question's searches): one model run or one request."""
        ...


class VectorHit(Protocol):
    id: str
    similarity: float
    metadata: Mapping[str, Any]


class VectorStore(Protocol):
    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[Mapping[str, str | int | float | bool]],
    ) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def query(
        self, vector: Sequence[float], *, k: int, where: Mapping[str, Any] | None = None
    ) -> list[VectorHit]: ...

    def ids(self, where: Mapping[str, Any] | None = None) -> set[str]: ...

    def count(self) -> int: ...


class LexicalIndex(Protocol):
    def search(
        self, query: str, *, k: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """The best `k` (chunk id, score) pairs by word overlap, best first."""
        ...


class PassageSource(Protocol):
    def __call__(self, where: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """The vector ids and texts (as `passage_text` gives them) of every passage a search
        with `where` may find: the lexical index's corpus."""
        ...


class Reranker(Protocol):
    id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance of each passage to the query, in [0, 1], in input order."""
        ...


class SectionLookup(Protocol):
    """The chunks around the given ones in their sections (same document and link): at most
    `before` right before each and `depth` right after it, in document order."""

    def __call__(
        self, chunks: Sequence[Chunk], *, depth: int = ..., before: int = ...
    ) -> list[Chunk]: ...


class ChunkLookup(Protocol):
    def __call__(self, ids: Sequence[str]) -> Mapping[str, Chunk]: ...


class Generator(Protocol):
    id: str

    def stream(self, prompt: Prompt) -> Iterator[Part]:
        """Yield text deltas, `Waiting` while the answer has not started (a generator that
        can keep a question waiting says so at least every few seconds, which is also when
        the consumer gets the chance to close it). Closing the iterator must stop the work
        upstream. `Cut` last when the answer stopped at its length limit. Raising
        GeneratorUnavailable means: tell the user kindly."""
        ...


class GeneratorUnavailable(RuntimeError):
    """The generator (e.g. an Ollama server) cannot answer now; the message is for logs."""


class GeneratorBusy(GeneratorUnavailable):
    """The generator could not start this answer in time: the questions ahead of it take
    longer than it may wait. Said at once, before the question joins any line."""


class RetrievalCache(Protocol):
    """Plain data (lists, strings, numbers) by key. A cache that fails must answer None /
    drop the value, never raise: it only saves time."""

    def get(self, key: str) -> object | None: ...

    def put(self, key: str, value: object) -> None: ...


class Retrieves(Protocol):
    """What `Pipeline` needs: `Retriever`, or `CachingRetriever` in front of one."""

    def retrieve(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None = None
    ) -> Retrieval: ...
