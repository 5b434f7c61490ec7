"""Follow-ups that keep their subject, on a small worker-queue manual with the real embedder and
cross-encoder: a follow-up the cross-encoder cannot read by itself ("and if it's already
running?") is answered from the previous subject's passages, an unrelated request leaning on
the previous question is not, and no passage is kept that fits neither turn."""

from __future__ import annotations

import pytest

from assistant.rag.reading.scoring import passage_text
from assistant.rag.retrieve.follow_ups import FOLLOW_UP_FLOOR
from assistant.rag.retrieve.queries import earlier_query
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Chunk, Question, Retrieval, Settings, Turn
from assistant.wiring.adapters.chroma_store import ChromaStore

DOCS = [
    Chunk("revoke", "When a worker receives a revoke request it skips executing the task, but "
          "it won't terminate an already executing task unless the terminate option is set. "
          "All workers keep a memory of revoked task ids. Example: "
          "app.control.revoke('d9078da5-9915-40a0-bfa1-392c7bde42ed')",
          "Workers Guide > Remote control > revoke: Revoking tasks", "https://docs.example.com/workers#revoke"),
    Chunk("terminate", "If terminate is set the worker child process processing the task will "
          "be terminated. The default signal sent is TERM, but you can specify this using the "
          "signal argument: app.control.revoke(task_id, terminate=True, signal='SIGKILL')",
          "Workers Guide > Remote control > revoke: Revoking tasks", "https://docs.example.com/workers#revoke"),
    Chunk("rate", "The rate_limit option of a task limits how many tasks of that type a worker "
          "starts per second, minute or hour, for example rate_limit='10/m'.",
          "Tasks > Options > Task.rate_limit", "https://docs.example.com/tasks#rate-limit"),
    Chunk("flower", "You can use pip to install Flower: pip install flower. Running the flower "
          "command will start a web-server that you can visit: celery -A proj flower. The "
          "default port is http://localhost:5555, but you can change this using the --port "
          "argument: celery -A proj flower --port=5555",
          "Monitoring > Flower: Real-time web monitor > Usage", "https://docs.example.com/monitoring#usage"),
    Chunk("beat", "celery beat is a scheduler; it kicks off tasks at regular intervals, which "
          "are then executed by available worker nodes in the cluster.",
          "Periodic Tasks > Introduction", "https://docs.example.com/periodic#introduction"),
    Chunk("results", "If you want to keep track of tasks or need the return values, then "
          "Celery must store or send the states somewhere so that they can be retrieved later.",
          "Tasks > Result backends", "https://docs.example.com/tasks#result-backends"),
]  # fmt: skip

REVOKE = "how do I revoke a task by its id?"


@pytest.fixture(scope="module")
def retriever(embedder, reranker, tmp_path_factory) -> Retriever:  # noqa: ANN001
    store = ChromaStore.for_embedder(tmp_path_factory.mktemp("chroma"), embedder)
    vectors = embedder.embed_documents([passage_text(c) for c in DOCS])
    store.upsert([c.id for c in DOCS], vectors, [{"project_id": 1} for _ in DOCS])
    by_id = {c.id: c for c in DOCS}
    return Retriever(
        embedder=embedder, store=store, reranker=reranker,
        chunks=lambda ids: {i: by_id[i] for i in ids if i in by_id},
    )  # fmt: skip


def after(retriever: Retriever, earlier: str, question: str) -> Retrieval:
    return retriever.retrieve(Question(question, history=(Turn("user", earlier),)), Settings())


def test_a_follow_up_the_cross_encoder_cannot_read_alone_keeps_the_previous_subject(retriever):
    alone = retriever.retrieve(Question("and if it's already running?"), Settings())
    follow_up = after(retriever, REVOKE, "and if it's already running?")
    assert not alone.kept
    assert follow_up.query_form == "with_history"
    assert {c.chunk.id for c in follow_up.kept} >= {"revoke", "terminate"}
    assert "rate" not in {c.chunk.id for c in follow_up.kept}


@pytest.mark.parametrize(
    "request_",
    ["can you translate that into French?", "i have a rash, what can i use for it",
     "how much does it cost?", "is it going to rain there tomorrow?"],
)  # fmt: skip
def test_an_unrelated_request_after_it_is_refused_as_when_asked_alone(retriever, request_):
    assert not retriever.retrieve(Question(request_), Settings()).kept
    assert not after(retriever, REVOKE, request_).kept


def test_every_passage_kept_for_a_follow_up_fits_one_of_the_turns(retriever, reranker):
    for earlier, question in [
        (REVOKE, "and if it's already running?"),
        (REVOKE, "can I send it another signal?"),
        ("how do I start flower?", "can it listen on another port?"),
    ]:
        follow_up = after(retriever, earlier, question)
        asked = Question(question, history=(Turn("user", earlier),))
        texts = [passage_text(c.chunk) for c in follow_up.kept]
        assert texts, question
        as_asked = reranker.score(question, texts)
        previous = reranker.score(earlier_query(asked), texts)
        for candidate, fit, read in zip(follow_up.kept, as_asked, previous, strict=True):
            assert fit >= FOLLOW_UP_FLOOR or read >= follow_up.threshold, candidate.chunk.id


def test_a_follow_up_read_lower_joined_than_its_subject_alone_is_answered_from_that_subject(
    retriever,
):
    # Joined, the two turns read the usage section below the gate; the earlier question alone
    # passes with it, and the follow-up keeps it far more relevant than an unrelated request.
    follow_up = after(retriever, "how do I start flower?", "can it listen on another port?")
    assert [c.chunk.id for c in follow_up.kept][:1] == ["flower"]
    poem = after(retriever, "how do I start flower?", "can you translate that into French?")
    assert not poem.kept


@pytest.mark.parametrize("question", ["is the process killed too?", "even mid-execution?"])
def test_a_question_finding_nothing_as_asked_is_read_after_the_previous_one(retriever, question):
    # No word points back, but the question leaves out its subject.
    alone = retriever.retrieve(Question(question), Settings())
    follow_up = after(retriever, REVOKE, question)
    assert not alone.kept
    assert follow_up.query_form == "with_history"
    assert {c.chunk.id for c in follow_up.kept} == {"revoke", "terminate"}
