"""The evaluation index for a corpus file, built once and cached (shared by `evaluate` and
`bench`): the corpus chunked and embedded with the configured embedder into a Chroma
collection of its own under DATA_DIR/eval."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from tqdm import tqdm

from assistant.rag.ports import Embedder
from assistant.wiring import runtime
from assistant.wiring.adapters.chroma_store import ChromaStore
from measuring.evaluation.dataset import DatasetError, file_digest, load_corpus
from measuring.evaluation.index import EvalIndex, index_key, load_or_build

OVERLAP_TOKENS = 32


def open_eval_index(corpus_path: Path, *, stderr: Any) -> tuple[EvalIndex, Embedder]:
    """`stderr` is a command's OutputWrapper: progress and a one-line summary go there."""
    embedder = runtime.embedder()
    count = getattr(embedder, "count_tokens", None)
    if count is None:
        raise CommandError("The configured embedder has no local tokenizer to chunk with.")
    chunk_tokens = settings.ASKDOCS_CHUNK_TOKENS
    key = index_key(file_digest(corpus_path), embedder.id, chunk_tokens, OVERLAP_TOKENS)
    location = settings.CHROMA_URL or str(settings.DATA_DIR / "eval" / "chroma")

    def store_for(prefix: str) -> ChromaStore:
        return ChromaStore(location, embedder_id=embedder.id, dimension=embedder.dimension,
                           prefix=prefix)  # fmt: skip

    bar = tqdm(desc="Indexing corpus", unit="chunk", file=stderr._out, disable=None)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        index = load_or_build(
            folder=settings.DATA_DIR / "eval", key=key,
            sections=lambda: load_corpus(corpus_path), embedder=embedder,
            count_tokens=count, store_for=store_for, chunk_tokens=chunk_tokens,
            overlap=OVERLAP_TOKENS, progress=progress,
        )  # fmt: skip
    except DatasetError as exc:
        raise CommandError(str(exc)) from exc
    finally:
        bar.close()
    stderr.write(
        f"Index {index.key}: {len(index.chunks)} chunks "
        f"({'built' if index.built else 'from cache'})."
    )
    return index, embedder
