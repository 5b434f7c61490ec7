"""The one place that builds model sessions and clients from settings: lazily, once per
process, never at import time (Celery forks after import; a forked ONNX session misbehaves)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from django.conf import settings

from assistant.rag.judge.answerability import Answerability
from assistant.rag.ports import (
    ChunkLookup,
    Embedder,
    LexicalIndex,
    PassageSource,
    Reranker,
    Retrieves,
    VectorStore,
)
from assistant.rag.quote.generator import ExtractiveGenerator
from assistant.rag.reading.scoring import CrossEncoderScorer
from assistant.rag.retrieve.caching import CachingRetriever
from assistant.rag.retrieve.retriever import Retriever

if TYPE_CHECKING:
    from assistant.wiring.adapters.bm25_index import ScopedBm25
    from assistant.wiring.adapters.local_llm import LocalGenerator, LocalModel
    from assistant.wiring.adapters.ollama import OllamaGenerator
    from assistant.wiring.adapters.openai_chat import OpenAIEndpoint, OpenAIGenerator

# Adapters are imported inside the factories: onnxruntime and chromadb take a second to
# import, and management commands that never answer a question should not pay for it.

logger = logging.getLogger(__name__)
_lock = threading.Lock()


@cache
def embedder() -> Embedder:
    if settings.ASKDOCS_EMBEDDER == "ollama":
        if not settings.OLLAMA_HOST:
            from django.core.exceptions import ImproperlyConfigured

            raise ImproperlyConfigured("ASKDOCS_EMBEDDER=ollama needs OLLAMA_HOST.")
        from assistant.wiring.adapters.ollama import OllamaEmbedder

        return OllamaEmbedder(host=settings.OLLAMA_HOST, model=settings.OLLAMA_EMBED_MODEL)
    from assistant.wiring.adapters.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(settings.ASKDOCS_EMBEDDER, threads=settings.ASKDOCS_MODEL_THREADS)


@cache
def reranker() -> Reranker:
    from assistant.wiring.adapters.flashrank_reranker import FlashrankReranker

    return FlashrankReranker(
        cache_dir=settings.ASKDOCS_MODEL_CACHE,
        max_tokens=settings.ASKDOCS_RERANK_MAX_TOKENS,
        threads=settings.ASKDOCS_MODEL_THREADS,
    )


#: HNSW search breadth of the chunk collections (chromadb's default is 100). A question that
#: belongs to another source lands in a sparse part of a large source's graph, where a narrow
#: search misses neighbours: the help centre's chunks searched in 7,000 Ray chunks had recall@20
#: 0.92 at 100, 0.98 at 400, 1.00 at 800 (tests/ingestion/test_small_source_recall.py), for
#: 1.9 ms against 1.4 ms a search of 10,700 chunks.
CHUNK_EF_SEARCH = 800


@cache
def chunk_store() -> VectorStore:
    """The chunk vectors of the configured embedder: one collection per project and source,
    so every question searches its sources' collections without a filter, and a small source
    is never buried in a large one's index."""
    from assistant.wiring.adapters.chroma_naming import HnswParams
    from assistant.wiring.adapters.chroma_partitions import partitioned

    model = embedder()
    return partitioned(
        settings.CHROMA_URL or str(settings.CHROMA_PATH),
        keys=("project_id", "source_id"),
        prefix="chunks",
        embedder_id=model.id,
        dimension=model.dimension,
        hnsw=HnswParams(ef_search=CHUNK_EF_SEARCH),
    )


@cache
def memory_store() -> VectorStore:
    """The vector collection of users' remembered facts (cosine, one per embedder)."""
    from assistant.wiring.adapters.chroma_store import ChromaStore

    model = embedder()
    return ChromaStore(
        location=settings.CHROMA_URL or str(settings.CHROMA_PATH),
        prefix="memory",
        embedder_id=model.id,
        dimension=model.dimension,
    )


@cache
def sentence_scorer() -> CrossEncoderScorer:
    """Sentences scored by the cross-encoder against the question; shared by the answerability
    check and the extractive answerer, so each sentence is read once per question."""
    return CrossEncoderScorer(reranker())


@cache
def extractive_generator() -> ExtractiveGenerator:
    return ExtractiveGenerator(sentence_scorer())


@cache
def answerability() -> Answerability:
    return Answerability(scorer=sentence_scorer())


@cache
def ollama_generator() -> OllamaGenerator:
    from assistant.wiring.adapters.ollama import OllamaGenerator

    timeouts = settings.ASKDOCS_OLLAMA_TIMEOUTS
    return OllamaGenerator(
        host=settings.OLLAMA_HOST,
        model=settings.OLLAMA_MODEL,
        connect_timeout=timeouts["connect"],
        first_token_timeout=timeouts["first_token"],
        between_tokens_timeout=timeouts["between_tokens"],
    )


@cache
def local_generator() -> LocalGenerator:
    """The local model: one per process, loaded on its first question. A reset (new settings:
    timeouts, the line's bounds) builds a new generator around the model already loaded."""
    from assistant.wiring.adapters.gguf_files import expected_sha256
    from assistant.wiring.adapters.local_llm import LocalGenerator, LocalModel, LocalModelSettings

    path = settings.ASKDOCS_LOCAL_MODEL
    chosen = LocalModelSettings(
        path=path,
        sha256=expected_sha256(path, settings.ASKDOCS_LOCAL_MODEL_SHA256),
        threads=settings.ASKDOCS_LOCAL_THREADS,
        context=settings.ASKDOCS_LOCAL_CONTEXT,
        batch=settings.ASKDOCS_LOCAL_BATCH,
        max_tokens=settings.ASKDOCS_LOCAL_MAX_TOKENS,
        first_token_timeout=settings.ASKDOCS_LOCAL_FIRST_TOKEN_TIMEOUT,
        between_tokens_timeout=settings.ASKDOCS_LOCAL_BETWEEN_TOKENS_TIMEOUT,
        queue_limit=settings.ASKDOCS_LOCAL_QUEUE_LIMIT,
        cache_ram_mib=settings.ASKDOCS_LOCAL_PROMPT_CACHE_MIB,
    )
    # What loading depends on: the file and how llama.cpp runs it.
    loaded_as = (path, chosen.sha256, chosen.threads, chosen.context, chosen.batch,
                 chosen.cache_ram_mib)  # fmt: skip
    with _lock:
        model = _local_models.get(loaded_as)
        if model is None:
            model = _local_models[loaded_as] = LocalModel(chosen)
    return LocalGenerator(chosen, model=model)


#: Local models loaded in this process (1 GB each): kept across resets.
_local_models: dict[tuple[object, ...], LocalModel] = {}


def openai_endpoint(fields: Mapping[str, str] | None = None) -> OpenAIEndpoint | None:
    """A project's OpenAI-compatible server: its own base URL, model and key (`fields`, from
    `Project.openai_endpoint_fields`), each empty one from ASKDOCS_OPENAI_*; None when no base
    URL is set anywhere. The site's key goes only to the site's server: a project that names
    another server sends its own key or none."""
    from assistant.wiring.adapters.openai_chat import OpenAIEndpoint

    given = fields or {}
    base_url = given.get("base_url", "") or settings.ASKDOCS_OPENAI_BASE_URL
    if not base_url:
        return None
    api_key = given.get("api_key", "")
    if not api_key and base_url == settings.ASKDOCS_OPENAI_BASE_URL:
        api_key = settings.ASKDOCS_OPENAI_API_KEY
    timeouts = settings.ASKDOCS_OPENAI_TIMEOUTS
    return OpenAIEndpoint(
        base_url=base_url,
        model=given.get("model", "") or settings.ASKDOCS_OPENAI_MODEL,
        api_key=api_key,
        connect_timeout=timeouts["connect"],
        first_token_timeout=timeouts["first_token"],
        between_tokens_timeout=timeouts["between_tokens"],
        max_tokens=settings.ASKDOCS_OPENAI_MAX_TOKENS,
    )


@lru_cache(maxsize=32)
def openai_generator(endpoint: OpenAIEndpoint) -> OpenAIGenerator:
    """One generator (and HTTP connection pool) per endpoint, shared by its projects."""
    from assistant.wiring.adapters.openai_chat import OpenAIGenerator

    return OpenAIGenerator(endpoint)


def local_model_problem() -> str:
    """Why the local model cannot answer in this process ("" when its library and its file are
    in place). Loads nothing: the file's digest is checked when the model loads."""
    import importlib.util

    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed: .venv/bin/pip install -e '.[local]'"
    if not settings.ASKDOCS_LOCAL_MODEL.is_file():
        return (
            f"the model file is missing ({settings.ASKDOCS_LOCAL_MODEL}): "
            ".venv/bin/python manage.py fetch_model"
        )
    return ""


_lexical_indexes: dict[PassageSource, ScopedBm25] = {}


def lexical_index(passages: PassageSource) -> LexicalIndex | None:
    """BM25 over the passages `passages` reads per search scope, once per process (None when
    `ASKDOCS_LEXICAL_SEARCH` is off). It finds the exact identifiers a dense vector misses;
    index_seen() drops what it built when another write changed the index."""
    if not settings.ASKDOCS_LEXICAL_SEARCH:
        return None
    from assistant.wiring.adapters.bm25_index import ScopedBm25

    with _lock:
        if passages not in _lexical_indexes:
            _lexical_indexes[passages] = ScopedBm25(passages)
        return _lexical_indexes[passages]


def retriever(*, chunks: ChunkLookup, passages: PassageSource | None = None) -> Retriever:
    """`chunks` reads chunk rows by vector id and `passages` a search scope's passages for the
    lexical index (ingestion's selectors): the caller passes them, so the wiring does not
    depend on an app. Without `passages` the search is by vector alone."""
    return Retriever(
        embedder=embedder(), store=chunk_store(), reranker=reranker(), chunks=chunks,
        lexical=lexical_index(passages) if passages is not None else None,
    )  # fmt: skip


def answer_retriever(
    *, project_id: int, chunks: ChunkLookup, passages: PassageSource | None = None
) -> Retrieves:
    """The retriever for users' questions (widget, API, SMS): repeated questions come from the
    cache until the project's index changes. The console sandbox and the evaluation runner
    use `retriever()`, because they exist to watch the pipeline itself run."""
    plain = retriever(chunks=chunks, passages=passages)
    ttl = settings.ASKDOCS_RETRIEVAL_CACHE_SECONDS
    if not ttl:
        return plain
    from assistant.wiring.retrieval_cache import DjangoRetrievalCache, index_scope

    try:
        scope = index_scope(project_id=project_id)
    except Exception:  # noqa: BLE001 - without the cache the answer is slower, not wrong
        logger.warning("retrieval cache unreachable; answering without it", exc_info=True)
        return plain
    return CachingRetriever(plain, cache=DjangoRetrievalCache(ttl_seconds=ttl), scope=scope)


_index_stamps: dict[int, object] = {}


def index_seen(*, project_id: int, stamp: object) -> None:
    """Call with the project's index stamp (from the database) before searching it. When it
    changed since this process last looked, another process wrote to the index (a CLI
    command, a worker, the scheduler): the embedded store's client is opened afresh, so the
    search sees those writes, and the project's cached retrievals are dropped. The first look
    only records it."""
    with _lock:
        before = _index_stamps.get(project_id)
        _index_stamps[project_id] = stamp
    if before is None or before == stamp:
        return
    with _lock:
        indexes = list(_lexical_indexes.values())
    # Outside the lock: a scope being built holds its own index's lock meanwhile.
    for index in indexes:
        index.forget(lambda where: where.get("project_id") == project_id)
    from assistant.wiring.adapters.chroma_clients import reopen_embedded
    from assistant.wiring.retrieval_cache import index_changed

    if not settings.CHROMA_URL:
        reopen_embedded(settings.CHROMA_PATH)
    index_changed(project_id=project_id)


def reset() -> None:
    """Forget built components (tests that change settings)."""
    with _lock:
        _index_stamps.clear()
        _lexical_indexes.clear()
        for factory in (
            embedder,
            reranker,
            chunk_store,
            memory_store,
            sentence_scorer,
            extractive_generator,
            answerability,
            ollama_generator,
            local_generator,
        ):
            factory.cache_clear()
        openai_generator.cache_clear()
