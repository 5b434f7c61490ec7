"""The answer pipeline with the real ONNX embedder, the real cross-encoder and a real Chroma
store on disk. Only the chunk lookup is a dict (in the product it is a database query)."""

from __future__ import annotations

import re

import pytest

from assistant.rag.answer import is_refusal
from assistant.rag.answering import Pipeline
from assistant.rag.quote.generator import ExtractiveGenerator
from assistant.rag.reading.scoring import passage_text
from assistant.rag.retrieve.queries import (
    follow_up_query,
    leans_on_history,
    retrieval_query,
    search_queries,
)
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import SORRY, Chunk, Prompt, Question, Settings, Turn
from assistant.rag.write.prompting import REMINDER, build_prompt
from assistant.wiring.adapters.chroma_store import ChromaStore

DOCS = [
    Chunk("es-1", "To connect to Elasticsearch, create an API key in Kibana under Stack "
          "Management > API keys and paste it into the Elasticsearch integration form.",
          "Elastic quickstart > API key", "https://docs.example.com/elastic-quickstart"),
    Chunk("es-2", "The Elasticsearch integration authenticates with an API key. The key needs "
          "the manage and write privileges on the target index.",
          "Elastic integration > Authentication", "https://docs.example.com/elastic"),
    Chunk("s3-1", "To set up an S3 bucket, create an IAM user, attach a policy allowing "
          "s3:GetObject and copy the access key ID and secret access key.",
          "Set up an S3 bucket", "https://docs.example.com/s3"),
    Chunk("tok-1", "Retrieval endpoint tokens expire after 90 days by default. Expired tokens "
          "return HTTP 401; generate a new token before the old one expires.",
          "Retrieval endpoint tokens > Token expiry", "https://docs.example.com/tokens#expiry"),
    Chunk("cb-1", "Couchbase Capella clusters are created from the Capella console. Choose a "
          "cloud provider and a region, then pick the number of nodes.",
          "Couchbase quickstart", "https://docs.example.com/couchbase"),
]  # fmt: skip


class RecordingGenerator:
    """A Generator that remembers whether it was asked: refusals must never reach one."""

    id = "recording"

    def __init__(self) -> None:
        self.prompts: list[Prompt] = []

    def stream(self, prompt: Prompt):  # noqa: ANN201
        self.prompts.append(prompt)
        yield "generated"


@pytest.fixture(scope="module")
def store(embedder, tmp_path_factory):  # noqa: ANN001, ANN201
    store = ChromaStore.for_embedder(tmp_path_factory.mktemp("chroma"), embedder)
    vectors = embedder.embed_documents([passage_text(c) for c in DOCS])
    store.upsert([c.id for c in DOCS], vectors, [{"project_id": 1} for _ in DOCS])
    return store


@pytest.fixture
def retriever(embedder, reranker, store) -> Retriever:  # noqa: ANN001
    by_id = {c.id: c for c in DOCS}
    return Retriever(
        embedder=embedder,
        store=store,
        reranker=reranker,
        chunks=lambda ids: {i: by_id[i] for i in ids if i in by_id},
    )


def test_it_puts_the_topic_in_parentheses_before_the_question():
    question = Question("When does it expire?", topic="Retrieval endpoint token management")
    assert retrieval_query(question) == "(Retrieval endpoint token management) When does it expire?"
    assert retrieval_query(Question("  When does\n it expire? ")) == "When does it expire?"


def test_with_a_topic_it_also_searches_the_bare_question():
    assert search_queries(Question("When does it expire?", "Tokens")) == [
        "(Tokens) When does it expire?",
        "When does it expire?",
    ]
    assert search_queries(Question("When does it expire?")) == ["When does it expire?"]


def test_both_searches_are_fused_and_each_chunk_keeps_its_closer_similarity(retriever, embedder):
    question = Question("How do I authenticate to Elasticsearch?", "Couchbase")
    retrieval = retriever.retrieve(question, Settings(num_candidates=5, rerank=False))
    assert retrieval.searched == [
        "(Couchbase) How do I authenticate to Elasticsearch?",
        "How do I authenticate to Elasticsearch?",
    ]
    assert {c.chunk.id for c in retrieval.candidates} == {d.id for d in DOCS}
    vectors = [embedder.embed_query(text) for text in retrieval.searched]
    passages = embedder.embed_documents([passage_text(c.chunk) for c in retrieval.candidates])
    for candidate, passage in zip(retrieval.candidates, passages, strict=True):
        closer = max(sum(a * b for a, b in zip(v, passage, strict=True)) for v in vectors)
        assert candidate.similarity == pytest.approx(closer, abs=1e-3), candidate.chunk.id
    # Fused by reciprocal rank (k=60): the candidates come in order of their summed 1/(60+rank)
    # over the two searches, each ranked here from the embeddings alone.
    chunk_vectors = dict(zip([d.id for d in DOCS], embedder.embed_documents(
        [passage_text(d) for d in DOCS]), strict=True))  # fmt: skip
    totals = dict.fromkeys(chunk_vectors, 0.0)
    for v in vectors:
        ranked = sorted(chunk_vectors, key=lambda i, v=v: -sum(
            a * b for a, b in zip(v, chunk_vectors[i], strict=True)))  # fmt: skip
        for rank, chunk_id in enumerate(ranked, start=1):
            totals[chunk_id] += 1 / (60 + rank)
    fused = [totals[c.chunk.id] for c in retrieval.candidates]
    assert fused == sorted(fused, reverse=True)
    assert len(set(fused)) > 1  # the two searches disagree somewhere, so the order is tested


def test_the_topic_prefix_finds_what_a_vague_question_leaves_out(retriever):
    vague = retriever.retrieve(Question("When does it expire?"), Settings())
    with_topic = retriever.retrieve(
        Question("When does it expire?", topic="Retrieval endpoint token management"), Settings()
    )
    assert with_topic.query.startswith("(Retrieval endpoint token management) ")
    assert [c.chunk.id for c in with_topic.kept][:1] == ["tok-1"]
    best_vague = {c.chunk.id: c.relevance for c in vague.candidates}
    best_topic = {c.chunk.id: c.relevance for c in with_topic.candidates}
    assert best_topic["tok-1"] > best_vague["tok-1"]


def test_it_keeps_only_chunks_at_or_above_the_threshold(retriever):
    retrieval = retriever.retrieve(
        Question("How do I set the API key?", topic="Elasticsearch integration"), Settings()
    )
    kept = {c.chunk.id for c in retrieval.kept}
    assert kept == {"es-1", "es-2"}
    for candidate in retrieval.candidates:
        assert candidate.relevance is not None
        assert candidate.kept == (candidate.chunk.id in kept)
        if candidate.chunk.id in {"s3-1", "cb-1"}:
            assert candidate.relevance < 0.05
    relevances = [c.relevance for c in retrieval.candidates]
    assert relevances == sorted(relevances, reverse=True)


def test_a_stricter_threshold_and_a_smaller_limit_keep_fewer(retriever):
    question = Question("How do I set the API key?", topic="Elasticsearch integration")
    only_one = retriever.retrieve(question, Settings(max_kept=1))
    assert len(only_one.kept) == 1
    best = only_one.kept[0].relevance
    above_best = retriever.retrieve(question, Settings(threshold=min(1.0, best + 1e-6)))
    assert above_best.kept == []


def test_it_refuses_without_calling_the_generator_when_nothing_is_relevant(retriever):
    generator = RecordingGenerator()
    answer = Pipeline(retriever=retriever, generator=generator).answer(
        Question("Do you offer a student discount?"), Settings()
    )
    assert [p for p in answer.parts if isinstance(p, str)] == [SORRY]
    assert answer.refused_before_generation
    assert generator.prompts == []
    assert answer.retrieval.candidates  # it did search; nothing passed the gate


def test_it_generates_from_the_kept_chunks_only(retriever):
    generator = RecordingGenerator()
    answer = Pipeline(retriever=retriever, generator=generator).answer(
        Question("How do I set the API key?", topic="Elasticsearch integration"), Settings()
    )
    assert answer.read().text == "generated"
    (prompt,) = generator.prompts
    assert {c.chunk.id for c in prompt.passages} == {"es-1", "es-2"}
    assert "S3" not in prompt.system and "Couchbase" not in prompt.system


def test_the_prompt_carries_the_rules_the_passages_and_the_history():
    passages = [c for c in _candidates(DOCS[:2])]
    history = (Turn("user", "Hi"), Turn("assistant", "Hello! How can I help?"))
    prompt = build_prompt(Question("How do I add the key?", "Elasticsearch", history), passages)
    assert "assume the question is related to this general topic: Elasticsearch" in prompt.system
    assert f'respond with exactly "{SORRY}"' in prompt.system
    assert "Never include these names" in prompt.system
    assert "Markdown" in prompt.system
    assert "[1] Elastic quickstart > API key (https://docs.example.com/elastic-quickstart)" in (
        prompt.system
    )
    assert "[2] Elastic integration > Authentication" in prompt.system
    # The question ends with the citation and sorry rules said again (a small model reads
    # them last).
    assert prompt.messages == (*history, Turn("user", f"How do I add the key?\n\n{REMINDER}"))
    assert "cite them like [1]" in REMINDER and SORRY in REMINDER


def test_the_prompt_has_no_topic_rule_without_a_topic():
    prompt = build_prompt(Question("How?"), _candidates(DOCS[:1]))
    assert "general topic" not in prompt.system


def test_extractive_answers_quote_the_passages_with_citations_word_by_word(embedder):
    def similarity(query: str, sentences: list[str]) -> list[float]:
        q = embedder.embed_query(query)
        return [
            sum(a * b for a, b in zip(q, v, strict=True))
            for v in embedder.embed_documents(sentences)
        ]

    passages = _candidates([DOCS[3], DOCS[0]])
    prompt = build_prompt(Question("How long are retrieval tokens valid?"), passages)
    tokens = list(ExtractiveGenerator(similarity).stream(prompt))
    assert len(tokens) > 5 and all(len(t.split()) == 1 for t in tokens)
    text = "".join(tokens)
    assert "expire after 90 days" in text
    assert text.split("\n\n")[0].endswith("[1]")
    for paragraph in text.split("\n\n"):
        body = re.sub(r"\s*\[\d+\]$", "", paragraph)
        for sentence in re.split(r"(?<=[.!?])\s+", body):
            assert any(sentence in c.chunk.text for c in passages), sentence


def test_it_recognises_a_refusal_written_by_a_model():
    assert is_refusal(SORRY)
    assert is_refusal("  I'm sorry, I couldn't find an answer to your question")
    assert not is_refusal("Refunds take 5 days.")


def _candidates(chunks):  # noqa: ANN001, ANN202
    from assistant.rag.types import Candidate

    return [Candidate(c, similarity=0.8, relevance=0.9, kept=True) for c in chunks]


def test_only_a_question_that_points_back_leans_on_the_history():
    assert leans_on_history("How do I revoke one?")
    assert leans_on_history("When does it expire?")
    assert leans_on_history("What about annual plans?")
    assert not leans_on_history("Write me a poem about cats")
    assert not leans_on_history("How do I rotate an API key?")


def test_a_follow_up_query_joins_the_previous_user_question_only_when_it_leans():
    history = (Turn("user", "How do tokens work?"), Turn("assistant", "They ..."))
    leaning = Question("When do they expire?", topic="Tokens", history=history)
    assert follow_up_query(leaning) == "(Tokens) How do tokens work? When do they expire?"
    assert retrieval_query(leaning) == "(Tokens) When do they expire?"  # as asked
    assert follow_up_query(Question("Write me a poem", "Tokens", history)) is None
    assert follow_up_query(Question("When do they expire?", "Tokens")) is None


def test_the_previous_question_never_lets_an_unrelated_question_through(retriever):
    history = (Turn("user", "When do retrieval endpoint tokens expire?"),)
    settings = Settings(num_candidates=5)
    alone = retriever.retrieve(Question("Write me a poem about it"), settings)
    after = retriever.retrieve(Question("Write me a poem about it", history=history), settings)
    assert not alone.kept
    assert not after.kept and after.query_form == "question"


def test_the_previous_question_helps_a_follow_up_that_does_not_stand_alone(retriever):
    history = (Turn("user", "How do I connect to Elasticsearch?"),)
    settings = Settings(num_candidates=5)
    alone = retriever.retrieve(Question("Which privileges does it need?"), settings)
    after = retriever.retrieve(
        Question("Which privileges does it need?", history=history), settings
    )
    assert after.kept and after.kept[0].chunk.id == "es-2"
    assert after.query_form == "with_history"
    assert (after.best_relevance or 0) > (alone.best_relevance or 0)


def test_a_self_contained_follow_up_is_judged_exactly_as_when_asked_alone(retriever):
    history = (Turn("user", "Do you offer a student discount?"),)
    settings = Settings(num_candidates=5)
    question = "How do I create an Elasticsearch API key in Kibana?"
    alone = retriever.retrieve(Question(question), settings)
    after = retriever.retrieve(Question(question, history=history), settings)
    assert [(c.chunk.id, c.relevance, c.kept) for c in after.candidates] == [
        (c.chunk.id, c.relevance, c.kept) for c in alone.candidates
    ]
