"""`evaluate`'s conversation sets replayed through a door: ten two-turn conversations of the
Ray docs set (an earlier question, then the one scored), asked of a project that indexes their
gold passages among a few hundred other passages of the Ray corpus, and asked over REST the
way an integration asks (the conversation id carried), so a door's answers can be compared
with REST's turn by turn.

The Ray set is the CI copy of ../shared beside the repository; the tests that use it are
skipped, saying so, where it is missing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from assistant.models import Project
from ingestion.models import Source
from ingestion.services import IncomingDocument, documents_upsert
from measuring.evaluation.dataset import Query, corpus_slice, load_corpus, load_queries, spread
from tests.conftest import SHARED, secret_of

RAY = SHARED / "eval" / "ray_docs_qa"
CONVERSATIONS_FILE = RAY / "conversations_dev.jsonl"
#: How many conversations are replayed, and how many corpus passages the project indexes.
CONVERSATIONS = 10
PASSAGES = 300

needs_ray = pytest.mark.skipif(
    not all((RAY / name).is_file() for name in ("conversations_dev.jsonl", "queries_dev.jsonl",
                                                "corpus.jsonl")),
    reason=f"evaluate's Ray conversation set is not at {RAY} (the CI copy of ../shared)",
)  # fmt: skip


@dataclass(frozen=True)
class Conversation:
    id: str
    kind: str
    turns: tuple[str, str]


def conversations() -> list[Conversation]:
    """Ten conversations spread over the file, so the three kinds it lists one after the
    other (in scope then out, out then in, one subject then another) are all replayed."""
    chosen = spread(load_queries(CONVERSATIONS_FILE), CONVERSATIONS)
    assert all(len(query.history) == 1 for query in chosen), "two-turn conversations expected"
    return [Conversation(q.id, q.kind, (q.history[0], q.question)) for q in chosen]


def ray_project(name: str, replayed: list[Conversation]) -> Project:
    """A project of its own (the vector store is not emptied between tests) holding the gold
    passages of both turns of each conversation, filled up to PASSAGES with the corpus's others
    in file order."""
    questions = {query.question: query for query in load_queries(RAY / "queries_dev.jsonl")}
    scored = {query.id: query for query in load_queries(CONVERSATIONS_FILE)}
    golds: list[Query] = []
    for conversation in replayed:
        earlier = questions.get(conversation.turns[0])
        golds += [earlier] if earlier is not None else []
        golds.append(scored[conversation.id])
    sections = corpus_slice(load_corpus(RAY / "corpus.jsonl"), golds, PASSAGES)
    project = Project.objects.create(name=name)
    source = Source.objects.create(project=project, name="Ray docs", kind=Source.Kind.FILES)
    documents_upsert(
        source=source,
        documents=[
            IncomingDocument(external_id=s.id, title=s.title, text=s.text, url=s.url)
            for s in sections
        ],
    )
    return project


@dataclass
class RestAsker:
    """An integration's server asking the project over REST with its secret key."""

    client: Client
    project: Project

    def ask(self, question: str, conversation_id: str = "") -> dict[str, Any]:
        body = {"project": self.project.public_key, "question": question}
        if conversation_id:
            body["conversation_id"] = conversation_id
        response = self.client.post(
            "/api/v1/ask", json.dumps(body), content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {secret_of(self.project)}",
        )  # fmt: skip
        assert response.status_code == 200, response.content
        return dict(response.json())

    def conversation(self, turns: tuple[str, str]) -> list[dict[str, Any]]:
        first = self.ask(turns[0])
        second = self.ask(turns[1], conversation_id=first["conversation_id"])
        assert second["conversation_id"] == first["conversation_id"]
        return [first, second]


def shown_urls(answer: dict[str, Any]) -> list[str]:
    """The pages a REST answer shows, each once in its order: its sources, or with a refusal
    the related pages offered (a door lists each page once, as the widget does)."""
    pages = answer["related"] if answer["refused"] else answer["sources"]
    return list(dict.fromkeys(str(page["url"]) for page in pages))
