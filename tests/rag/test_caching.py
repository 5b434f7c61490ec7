"""The repeated-question cache in front of the real retriever (ONNX embedder, cross-encoder,
Chroma on disk). The cache itself is a dict here; tests/test_retrieval_cache.py runs the
Django/Redis one."""

from __future__ import annotations

import pytest

from assistant.rag.reading.scoring import passage_text
from assistant.rag.retrieve.caching import CachingRetriever, cache_key, normalise
from assistant.rag.retrieve.queries import follow_up_query, search_queries
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Chunk, Question, Settings, Turn
from assistant.wiring.adapters.chroma_store import ChromaStore

DOCS = [
    Chunk("tok-1", "Retrieval endpoint tokens expire after 90 days by default. Expired tokens "
          "return HTTP 401; generate a new token before the old one expires.",
          "Retrieval endpoint tokens > Token expiry", "https://docs.example.com/tokens#expiry", 7),
    Chunk("key-1", "API keys never expire. Rotate a key from Settings > API keys: create the "
          "new key, deploy it, then revoke the old one.",
          "API keys > Rotation", "https://docs.example.com/api-keys", 7),
    Chunk("s3-1", "To set up an S3 bucket, create an IAM user, attach a policy allowing "
          "s3:GetObject and copy the access key ID and secret access key.",
          "Set up an S3 bucket", "https://docs.example.com/s3", 8),
]  # fmt: skip
TOKENS = Question("When does it expire?", topic="Retrieval endpoint token management")


class DictCache:
    def __init__(self) -> None:
        self.entries: dict[str, object] = {}

    def get(self, key: str) -> object | None:
        return self.entries.get(key)

    def put(self, key: str, value: object) -> None:
        self.entries[key] = value


class CountingEmbedder:
    """The real embedder, counting the queries that reach it."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner, self.id, self.dimension = inner, inner.id, inner.dimension
        self.queries: list[str] = []

    def embed_documents(self, texts):  # noqa: ANN001, ANN201
        return self.inner.embed_documents(texts)

    def embed_query(self, text):  # noqa: ANN001, ANN201
        self.queries.append(text)
        return self.inner.embed_query(text)

    def embed_queries(self, texts):  # noqa: ANN001, ANN201
        self.queries += texts
        return self.inner.embed_queries(texts)


@pytest.fixture(scope="module")
def store(embedder, tmp_path_factory):  # noqa: ANN001, ANN201
    store = ChromaStore.for_embedder(tmp_path_factory.mktemp("chroma"), embedder)
    vectors = embedder.embed_documents([passage_text(c) for c in DOCS])
    store.upsert([c.id for c in DOCS], vectors, [{"project_id": 1} for _ in DOCS])
    return store


@pytest.fixture
def counting(embedder) -> CountingEmbedder:  # noqa: ANN001
    return CountingEmbedder(embedder)


@pytest.fixture
def cache() -> DictCache:
    return DictCache()


def caching(counting, reranker, store, cache, scope="1.1") -> CachingRetriever:  # noqa: ANN001
    by_id = {c.id: c for c in DOCS}
    inner = Retriever(
        embedder=counting, store=store, reranker=reranker,
        chunks=lambda ids: {i: by_id[i] for i in ids if i in by_id},
    )  # fmt: skip
    return CachingRetriever(inner, cache=cache, scope=scope)


def test_a_repeated_question_is_answered_from_the_cache(counting, reranker, store, cache):
    retriever = caching(counting, reranker, store, cache)
    first = retriever.retrieve(TOKENS, Settings(num_candidates=3))
    again = retriever.retrieve(TOKENS, Settings(num_candidates=3))
    assert counting.queries == search_queries(TOKENS)  # the models ran once
    assert first.timings_ms["cache_hit"] == 0 and "rerank_ms" in first.timings_ms
    assert again.timings_ms["cache_hit"] == 1 and "rerank_ms" not in again.timings_ms
    assert again.query == first.query
    assert again.candidates == first.candidates  # chunks, scores, kept: all the same
    assert again.kept[0].chunk == DOCS[0]  # source_id and url survive the round trip


def test_spelling_that_does_not_change_the_question_shares_an_entry(
    counting, reranker, store, cache
):
    retriever = caching(counting, reranker, store, cache)
    retriever.retrieve(TOKENS, Settings())
    retyped = Question("  when does it   EXPIRE ", topic="Retrieval endpoint token management")
    assert retriever.retrieve(retyped, Settings()).timings_ms["cache_hit"] == 1
    assert counting.queries == search_queries(TOKENS)


def test_a_new_threshold_re_gates_the_cached_candidates(counting, reranker, store, cache):
    retriever = caching(counting, reranker, store, cache)
    first = retriever.retrieve(TOKENS, Settings(threshold=0.5))
    assert first.kept
    best = first.best_relevance
    assert best is not None
    stricter = retriever.retrieve(TOKENS, Settings(threshold=best + (1 - best) / 2))
    assert stricter.timings_ms["cache_hit"] == 1
    assert stricter.kept == []  # nothing passes now: the pipeline will refuse
    one = retriever.retrieve(TOKENS, Settings(threshold=0.0, max_kept=1))
    assert [c.chunk.id for c in one.kept] == [first.candidates[0].chunk.id]


def test_without_rerank_the_most_similar_are_kept_from_the_cache(counting, reranker, store, cache):
    retriever = caching(counting, reranker, store, cache)
    first = retriever.retrieve(TOKENS, Settings(rerank=False, max_kept=2))
    again = retriever.retrieve(TOKENS, Settings(rerank=False, max_kept=2))
    assert again.timings_ms["cache_hit"] == 1
    assert [c.kept for c in again.candidates] == [c.kept for c in first.candidates]
    assert [c.kept for c in again.candidates] == [True, True, False]


@pytest.mark.parametrize(
    "change",
    [
        {"question": Question("When does it expire?", topic="Billing")},
        {"question": Question("When does it expire?")},
        {"question": Question("When does it expire?", topic=TOKENS.topic,
                              history=(Turn("user", "How do I rotate an API key?"),))},
        {"settings": Settings(num_candidates=2)},
        {"settings": Settings(rerank=False)},
        {"settings": Settings(rerank_top=2)},
        {"where": {"project_id": 2}},
        {"scope": "1.2"},
    ],
)  # fmt: skip
def test_what_changes_the_candidates_gets_its_own_entry(counting, reranker, store, cache, change):
    caching(counting, reranker, store, cache).retrieve(TOKENS, Settings(), {"project_id": 1})
    retriever = caching(counting, reranker, store, cache, scope=change.get("scope", "1.1"))
    retrieval = retriever.retrieve(
        change.get("question", TOKENS),
        change.get("settings", Settings()),
        change.get("where", {"project_id": 1}),
    )
    assert retrieval.timings_ms["cache_hit"] == 0
    asked = change.get("question", TOKENS)
    follow_up = follow_up_query(asked)
    again = [*search_queries(asked), *([follow_up] if follow_up else [])]
    assert counting.queries == [*search_queries(TOKENS), *again]  # ran twice


def test_an_entry_it_cannot_read_is_a_miss(counting, reranker, store, cache):
    retriever = caching(counting, reranker, store, cache)
    retriever.retrieve(TOKENS, Settings())
    for key in cache.entries:
        cache.entries[key] = [["tok-1", "text"]]  # written by some other code
    assert retriever.retrieve(TOKENS, Settings()).timings_ms["cache_hit"] == 0


def test_normalise_keeps_what_the_question_asks():
    assert normalise("  How do I   get my MONEY back??  ") == "how do i get my money back"
    assert normalise("(Billing) Refund?") == "(billing) refund"
    assert normalise('"refund"') == "refund"
    assert normalise("refund policy") != normalise("refund policy for devices")


def test_keys_do_not_depend_on_the_order_of_the_filter():
    def key(where: dict[str, int]) -> str:
        return cache_key(
            scope="s", query="q", settings=Settings(), where=where, embedder_id="e",
            reranker_id="r",
        )  # fmt: skip

    assert key({"a": 1, "b": 2}) == key({"b": 2, "a": 1})
    assert key({"a": 1}) != key({"a": 2})
