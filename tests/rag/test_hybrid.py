"""Hybrid retrieval: BM25's best passages join the vector search's head that the cross-encoder
reads. Real embedder, real cross-encoder, real Chroma store on disk; the lexical index is
bm25s."""

from __future__ import annotations

import threading

import pytest

from assistant.rag.reading.scoring import passage_text
from assistant.rag.retrieve.retriever import Retriever, fuse
from assistant.rag.types import Chunk, Question, Settings
from assistant.wiring.adapters.bm25_index import Bm25Index, ScopedBm25
from assistant.wiring.adapters.chroma_store import ChromaStore
from assistant.wiring.adapters.flashrank_reranker import FlashrankReranker
from assistant.wiring.adapters.onnx_embedder import OnnxEmbedder
from assistant.wiring.adapters.workers import Workers

DOCS = [
    Chunk("serve-1", "Set num_replicas in the @serve.deployment decorator to run several copies "
          "of a deployment.", "Serve > Scaling", "https://docs.example.com/serve/scaling"),
    Chunk("serve-2", "A deployment can scale itself between a minimum and a maximum number of "
          "copies based on queued requests.", "Serve > Autoscaling",
          "https://docs.example.com/serve/autoscaling"),
    Chunk("env-1", "The RAY_ADDRESS environment variable tells ray.init which cluster to join.",
          "Cluster > Connecting", "https://docs.example.com/cluster/connect"),
    Chunk("bill-1", "Invoices are sent on the first day of each month to the billing contact.",
          "Billing", "https://docs.example.com/billing"),
]  # fmt: skip


class Lexical:
    """The LexicalIndex port over one Bm25Index (the evaluation index does the same)."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.index = Bm25Index([c.id for c in chunks], [passage_text(c) for c in chunks])
        self.queries: list[str] = []

    def search(self, query, *, k, where=None):  # noqa: ANN001, ANN201
        self.queries.append(query)
        return self.index.search(query, k=k)


@pytest.fixture(scope="module")
def store(embedder, tmp_path_factory):  # noqa: ANN001, ANN201
    store = ChromaStore.for_embedder(tmp_path_factory.mktemp("chroma"), embedder)
    store.upsert(
        [c.id for c in DOCS],
        embedder.embed_documents([passage_text(c) for c in DOCS]),
        [{"project_id": 1} for _ in DOCS],
    )
    return store


def lookup(ids):  # noqa: ANN001, ANN201
    by_id = {c.id: c for c in DOCS}
    return {i: by_id[i] for i in ids if i in by_id}


def test_rrf_rewards_what_both_lists_rank_high():
    assert fuse([["a", "b", "c"], ["b", "d"]]) == ["b", "a", "d", "c"]
    assert fuse([["x", "y"], []]) == ["x", "y"]
    assert fuse([]) == []


def test_bm25_finds_an_identifier_and_ignores_stop_words_only_queries():
    index = Bm25Index([c.id for c in DOCS], [passage_text(c) for c in DOCS])
    assert index.search("what is num_replicas", k=2)[0][0] == "serve-1"
    assert index.search("RAY_ADDRESS", k=4)[0][0] == "env-1"
    assert index.search("what is the", k=4) == []
    assert index.search("zebra giraffe", k=4) == []
    assert Bm25Index([], []).search("anything", k=3) == []
    with pytest.raises(ValueError, match="differ"):
        Bm25Index(["a"], [])


def test_a_scopes_word_index_is_built_once_and_forgotten_only_with_its_scope():
    reads: list[int] = []

    def passages(where):  # noqa: ANN001, ANN202
        reads.append(where["project_id"])
        return [c.id for c in DOCS], [passage_text(c) for c in DOCS]

    index = ScopedBm25(passages, scopes=2)
    assert index.search("num_replicas", k=1, where={"project_id": 1})[0][0] == "serve-1"
    assert index.search("RAY_ADDRESS", k=1, where={"project_id": 1})[0][0] == "env-1"
    index.search("invoices", k=1, where={"project_id": 2})
    assert reads == [1, 2]
    index.forget(lambda where: where["project_id"] == 1)
    index.search("invoices", k=1, where={"project_id": 2})
    index.search("num_replicas", k=1, where={"project_id": 1})
    assert reads == [1, 2, 1]
    index.search("invoices", k=1, where={"project_id": 3})  # a third scope: the oldest goes
    index.search("invoices", k=1, where={"project_id": 2})
    assert reads == [1, 2, 1, 3, 2]


def test_bm25_stems_words_so_plurals_match():
    index = Bm25Index(["inv"], ["Invoices are sent monthly."])
    assert index.search("when is an invoice sent", k=1)[0][0] == "inv"


def test_hybrid_candidates_include_a_lexical_only_hit_without_a_similarity(
    embedder, reranker, store
):  # noqa: ANN001
    lexical = Lexical(DOCS)
    retriever = Retriever(
        embedder=embedder, store=store, reranker=reranker, chunks=lookup, lexical=lexical
    )
    # Two candidates: the vector search's best and BM25's best must both get through fusion.
    settings = Settings(num_candidates=4)
    result = retriever.retrieve(Question("RAY_ADDRESS", topic="cluster"), settings)
    assert lexical.queries == ["(cluster) RAY_ADDRESS"]
    assert "lexical_ms" in result.timings_ms
    assert result.candidates[0].chunk.id == "env-1"
    assert result.candidates[0].kept
    # Every candidate the vector search returned carries its cosine similarity.
    assert all(c.similarity is not None for c in result.candidates)


def test_lexical_only_candidates_have_no_similarity(embedder, reranker, tmp_path):  # noqa: ANN001
    # The vector store knows only the billing passage, BM25 knows all of them.
    store = ChromaStore.for_embedder(tmp_path, embedder)
    store.upsert(["bill-1"], embedder.embed_documents([passage_text(DOCS[3])]), [{"p": 1}])
    retriever = Retriever(
        embedder=embedder, store=store, reranker=reranker, chunks=lookup, lexical=Lexical(DOCS)
    )
    result = retriever.retrieve(Question("num_replicas"), Settings(num_candidates=3))
    by_id = {c.chunk.id: c for c in result.candidates}
    assert by_id["serve-1"].similarity is None
    assert by_id["bill-1"].similarity is not None
    assert result.kept[0].chunk.id == "serve-1"


def test_lexical_hits_join_the_read_head_without_pushing_out_the_vector_search_best(
    embedder, reranker, store
):  # noqa: ANN001
    vector = Retriever(embedder=embedder, store=store, reranker=reranker, chunks=lookup)
    hybrid = Retriever(
        embedder=embedder, store=store, reranker=reranker, chunks=lookup, lexical=Lexical(DOCS)
    )
    settings = Settings(num_candidates=4, rerank_top=1)
    question = Question("How do I scale a deployment to several copies, and what is RAY_ADDRESS?")
    read_by_vector = {c.chunk.id for c in vector.retrieve(question, settings).candidates
                      if c.relevance is not None}  # fmt: skip
    read = {c.chunk.id for c in hybrid.retrieve(question, settings).candidates
            if c.relevance is not None}  # fmt: skip
    assert len(read_by_vector) == 1
    assert read_by_vector < read  # the vector search's best is still read
    assert "env-1" in read - read_by_vector  # and BM25's, the one naming the identifier


def test_the_cross_encoder_reads_only_the_head_and_only_the_head_can_be_kept(
    embedder, reranker, store
):  # noqa: ANN001
    retriever = Retriever(embedder=embedder, store=store, reranker=reranker, chunks=lookup)
    everything = retriever.retrieve(Question("num_replicas"), Settings(num_candidates=4))
    head = retriever.retrieve(Question("num_replicas"), Settings(num_candidates=4, rerank_top=2))
    assert [c.relevance is None for c in head.candidates] == [False, False, True, True]
    # The tail keeps search order and is never kept, even when its chunk is relevant.
    assert head.candidates[2].similarity >= head.candidates[3].similarity
    assert all(c.kept is False for c in head.candidates[2:])
    # The head is the search's best two, in the cross-encoder's order, scored as before.
    assert {c.chunk.id for c in head.candidates[:2]} == {
        c.chunk.id for c in sorted(everything.candidates, key=lambda c: -c.similarity)[:2]
    }
    scores = {c.chunk.id: c.relevance for c in everything.candidates}
    assert [c.relevance for c in head.candidates[:2]] == sorted(
        (scores[c.chunk.id] for c in head.candidates[:2]), reverse=True
    )


def test_workers_keep_input_order_and_use_several_threads():
    seen: set[str] = set()
    barrier = threading.Barrier(2, timeout=5)

    def work(item: int) -> int:
        seen.add(threading.current_thread().name)
        if item < 2:
            barrier.wait()  # both first items must run at the same time, or this times out
        return item * 10

    assert list(Workers(2, "test").map(work, range(6))) == [0, 10, 20, 30, 40, 50]
    assert len(seen) == 2
    assert list(Workers(1, "test").map(work, [7])) == [70]


def test_parallel_reranking_gives_the_scores_of_one_run_at_a_time(tmp_path):  # noqa: ANN001
    parallel = FlashrankReranker(cache_dir=tmp_path, threads=2)
    single = FlashrankReranker(cache_dir=tmp_path, threads=1)
    passages = [passage_text(c) for c in DOCS]
    assert parallel.score("num_replicas", passages) == pytest.approx(
        single.score("num_replicas", passages), abs=1e-6
    )


def test_parallel_embedding_gives_the_vectors_of_one_run_at_a_time():
    texts = [passage_text(c) for c in DOCS]
    parallel = OnnxEmbedder(threads=2).embed_documents(texts)
    single = OnnxEmbedder(threads=1).embed_documents(texts)
    for a, b in zip(parallel, single, strict=True):
        assert a == pytest.approx(b, abs=1e-6)
