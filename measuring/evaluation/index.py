"""The evaluation index: the corpus chunked, embedded and stored once, then reused.

It is cached under a key made of the corpus file's content, the embedder and the chunking
settings, so a second run with the same inputs skips ingestion entirely."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.rag.chunking.pieces import CHUNKING_VERSION, chunk_markdown
from assistant.rag.ports import Embedder, VectorStore
from assistant.rag.reading.scoring import passage_text
from assistant.rag.types import Chunk
from assistant.wiring.adapters.bm25_index import Bm25Index
from assistant.wiring.adapters.chroma_store import ChromaStore
from measuring.evaluation.dataset import Section

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    chunk: Chunk
    section_id: str
    page: str


@dataclass(slots=True)
class EvalIndex:
    key: str
    chunks: dict[str, IndexedChunk]
    store: VectorStore
    built: bool  # False when it came from the cache
    _sections: dict[str, list[Chunk]] = field(default_factory=dict)

    def lookup(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return {i: self.chunks[i].chunk for i in ids if i in self.chunks}

    def section_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Every chunk of the sections the given chunks belong to, in index order."""
        if not self._sections:
            for indexed in self.chunks.values():
                self._sections.setdefault(indexed.section_id, []).append(indexed.chunk)
        wanted = dict.fromkeys(self.chunks[i].section_id for i in chunk_ids if i in self.chunks)
        return [chunk for section in wanted for chunk in self._sections[section]]

    def lexical(self) -> EvalLexicalIndex:
        return EvalLexicalIndex(
            Bm25Index(list(self.chunks), [passage_text(c.chunk) for c in self.chunks.values()])
        )


@dataclass(frozen=True, slots=True)
class EvalLexicalIndex:
    """Implements `LexicalIndex` over the whole evaluation corpus (one project)."""

    index: Bm25Index

    def search(
        self, query: str, *, k: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        return self.index.search(query, k=k)


def index_key(corpus_digest: str, embedder_id: str, chunk_tokens: int, overlap: int) -> str:
    raw = f"{corpus_digest}|{embedder_id}|{chunk_tokens}|{overlap}|{CHUNKING_VERSION}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def chunk_sections(
    sections: Sequence[Section],
    *,
    count_tokens: Callable[[str], int],
    chunk_tokens: int,
    overlap: int,
) -> list[IndexedChunk]:
    chunks: list[IndexedChunk] = []
    for section in sections:
        pieces = chunk_markdown(
            section.text,
            count_tokens=count_tokens,
            max_tokens=chunk_tokens,
            overlap_tokens=overlap,
            title=section.title,
        )
        for number, piece in enumerate(pieces):
            title = " > ".join(filter(None, [section.title, piece.heading_path]))
            chunk_id = hashlib.sha256(f"{section.id}#{number}".encode()).hexdigest()[:24]
            chunks.append(
                IndexedChunk(
                    Chunk(
                        chunk_id,
                        piece.text,
                        title,
                        section.url,
                        document=section.id,
                        ordinal=number,
                    ),
                    section.id,
                    section.page,
                )
            )
    return chunks


def load_or_build(
    *,
    folder: Path,
    key: str,
    sections: Callable[[], Sequence[Section]],
    embedder: Embedder,
    count_tokens: Callable[[str], int],
    store_for: Callable[[str], ChromaStore],
    chunk_tokens: int,
    overlap: int,
    batch_size: int = 64,
    progress: Progress | None = None,
) -> EvalIndex:
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / f"{key}.chunks.jsonl"
    done = folder / f"{key}.done"
    store = store_for(f"eval-{key}")
    if done.exists() and table.exists():
        return EvalIndex(key, _read_table(table), store, built=False)

    store.reset()  # whatever a crashed build left behind
    chunks = chunk_sections(
        sections(), count_tokens=count_tokens, chunk_tokens=chunk_tokens, overlap=overlap
    )
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        vectors = embedder.embed_documents([passage_text(c.chunk) for c in batch])
        store.upsert(
            [c.chunk.id for c in batch],
            vectors,
            [{"section": c.section_id[:500]} for c in batch],
        )
        if progress:
            progress(min(start + batch_size, len(chunks)), len(chunks))
    _write_table(table, chunks)
    done.write_text("ok\n")
    return EvalIndex(key, {c.chunk.id: c for c in chunks}, store, built=True)


def _write_table(path: Path, chunks: Sequence[IndexedChunk]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for c in chunks:
            row = {"id": c.chunk.id, "text": c.chunk.text, "title": c.chunk.title,
                   "url": c.chunk.url, "section": c.section_id, "page": c.page}  # fmt: skip
            handle.write(json.dumps(row) + "\n")
    tmp.replace(path)


def _read_table(path: Path) -> dict[str, IndexedChunk]:
    chunks = {}
    ordinals: dict[str, int] = {}  # a section's chunks are written one after another, in order
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            ordinal = ordinals[row["section"]] = ordinals.get(row["section"], -1) + 1
            chunk = Chunk(row["id"], row["text"], row["title"], row["url"],
                          document=row["section"], ordinal=ordinal)  # fmt: skip
            chunks[row["id"]] = IndexedChunk(chunk, row["section"], row["page"])
    return chunks
