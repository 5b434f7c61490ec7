"""The page's topic goes first in the query, but a question that names a subject of its own is
not refused because the widget was opened on a page about something else. Real embedder, real
cross-encoder, real Chroma store on disk."""

from __future__ import annotations

from assistant.rag.reading.scoring import passage_text
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Chunk, Question, Settings
from assistant.wiring.adapters.chroma_store import ChromaStore

DOCS = [
    Chunk("theme", "To use the readthedocs theme, set theme: name: readthedocs in mkdocs.yml.",
          "Choosing your Theme > readthedocs", "https://docs.example.com/themes#readthedocs"),
    Chunk("tokens", "Retrieval endpoint tokens expire after 90 days. Revoke one from its row "
          "in Settings > Tokens.", "Retrieval endpoint tokens",
          "https://docs.example.com/tokens"),
]  # fmt: skip


def retriever(embedder, reranker, tmp_path) -> Retriever:  # noqa: ANN001
    store = ChromaStore.for_embedder(tmp_path, embedder)
    store.upsert(
        [c.id for c in DOCS],
        embedder.embed_documents([passage_text(c) for c in DOCS]),
        [{"project_id": 1} for _ in DOCS],
    )
    by_id = {c.id: c for c in DOCS}
    return Retriever(
        embedder=embedder, store=store, reranker=reranker,
        chunks=lambda ids: {i: by_id[i] for i in ids if i in by_id},
    )  # fmt: skip


def test_a_question_of_another_subject_than_the_page_is_read_without_the_topic(
    embedder, reranker, tmp_path
):  # noqa: ANN001
    found = retriever(embedder, reranker, tmp_path)
    asked = Question("how do I switch to the readthedocs theme?", topic="Retrieval endpoint tokens")
    # With the tokens page's topic first, the theme's section reads under the gate.
    assert reranker.score(f"({asked.topic}) {asked.text}", [passage_text(DOCS[0])])[0] < 0.5
    result = found.retrieve(asked, Settings())
    assert [c.chunk.id for c in result.kept] == ["theme"]
    assert result.kept[0].relevance > 0.9  # as the question reads without the topic
    # A vague question keeps what the topic gives it: without it, it names nothing.
    bare = "How long are they valid?"
    assert reranker.score(bare, [passage_text(DOCS[1])])[0] < 0.5
    vague = found.retrieve(Question(bare, topic="Retrieval endpoint tokens"), Settings())
    assert [c.chunk.id for c in vague.kept] == ["tokens"]
    # A question neither reading finds passages for is still refused.
    off = found.retrieve(Question("What is the capital of France?", topic="Tokens"), Settings())
    assert off.kept == []


class Recorded:
    """The real cross-encoder, with what it was asked to read written down."""

    def __init__(self, reranker) -> None:  # noqa: ANN001
        self.reranker = reranker
        self.read: list[tuple[str, list[str]]] = []

    def score(self, query: str, passages: list[str]) -> list[float]:
        self.read.append((query, list(passages)))
        return self.reranker.score(query, passages)


def test_the_retrieval_says_what_the_cross_encoder_read(embedder, reranker, tmp_path):  # noqa: ANN001
    """The stage bench times the bare libraries on the same pairs (measuring/benchmark)."""
    found = retriever(embedder, reranker, tmp_path)
    recorded = Recorded(reranker)
    found.reranker = recorded
    asked = Question("How long are tokens valid?", topic="Retrieval endpoint tokens")
    result = found.retrieve(asked, Settings())

    assert [c.chunk.id for c in result.kept] == ["tokens"]
    scored = [passage_text(c.chunk) for c in result.candidates if c.relevance is not None]
    assert sorted(scored) == sorted(passage_text(c) for c in DOCS)
    # With the topic and without it, both passages each time, and the retrieval says so.
    assert [query for query, _ in recorded.read] == result.readings
    assert result.readings == [f"({asked.topic}) {asked.text}", asked.text]
    assert all(sorted(texts) == sorted(scored) for _, texts in recorded.read)
