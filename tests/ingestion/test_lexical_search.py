"""The product's lexical search: BM25 over the passages of a project's search scope, read
from the database, built once per process and dropped when another write changes the index.
Real database, real embedder and cross-encoder, real Chroma store."""

from __future__ import annotations

import pytest

from assistant.ask.search import retrieve
from assistant.rag.types import Question, Settings
from assistant.wiring import runtime
from ingestion.models import Source
from ingestion.selectors import passages_in_scope, search_scope
from ingestion.sync import source_sync

pytestmark = pytest.mark.django_db


def manual(project, name: str, text: str) -> Source:  # noqa: ANN001
    return Source.objects.create(
        project=project, kind=Source.Kind.MANUAL, name=name,
        config={"title": name.title(), "text": text},
    )  # fmt: skip


def lexical_hits(project, query: str) -> list[str]:  # noqa: ANN001
    """The texts BM25 finds for `query` in the project, as the answer path asks for them."""
    scope = search_scope(project_id=project.pk)
    runtime.index_seen(project_id=project.pk, stamp=scope.stamp)
    index = runtime.lexical_index(passages_in_scope)
    assert index is not None
    ids, texts = passages_in_scope(scope.where)
    by_id = dict(zip(ids, texts, strict=True))
    return [by_id[i] for i, _ in index.search(query, k=3, where=scope.where)]


def test_the_scope_holds_only_the_projects_own_passages(project, store, django_user_model):  # noqa: ANN001
    from assistant.models import Project

    source_sync(source=manual(project, "shipping", "# Shipping\n\nParcels leave in two days."))
    other = Project.objects.create(name="someone else's")
    source_sync(source=manual(other, "secrets", "# Secrets\n\nThe parcel vault code is 4711."))

    ids, texts = passages_in_scope(search_scope(project_id=project.pk).where)
    assert len(ids) == len(texts) == 1
    assert texts[0].startswith("Shipping") and "two days" in texts[0]
    assert lexical_hits(project, "parcel vault code") == [texts[0]]  # never the other's


def test_a_resync_reaches_the_lexical_index_before_the_next_question(project, store):  # noqa: ANN001
    source = manual(project, "tuning", "# Tuning\n\nSet the worker count in the config file.")
    source_sync(source=source)
    assert lexical_hits(project, "prefetch_multiplier") == []

    source.config["text"] = "# Tuning\n\nSet worker_prefetch_multiplier to 1 for long tasks."
    source.save()
    source_sync(source=source)
    found = lexical_hits(project, "worker_prefetch_multiplier")
    assert len(found) == 1 and "worker_prefetch_multiplier to 1" in found[0]


def test_the_answer_path_searches_words_unless_turned_off(project, store, settings):  # noqa: ANN001
    source_sync(source=manual(project, "limits", "# Limits\n\nSet rate_limit to '10/m'."))
    question = Question("how do I use rate_limit")

    with_words = retrieve(project=project, question=question, settings=Settings())
    assert "lexical_ms" in with_words.timings_ms
    assert with_words.kept and "rate_limit" in with_words.kept[0].chunk.text

    settings.ASKDOCS_LEXICAL_SEARCH = False
    runtime.reset()
    vectors_only = retrieve(project=project, question=Question("how do I use rate_limit?"),
                            settings=Settings())  # fmt: skip
    assert "lexical_ms" not in vectors_only.timings_ms
