"""One Chroma collection per project (real Chroma on disk): a question's filter on its
project becomes an unfiltered search of that project's collection."""

from __future__ import annotations

import pytest

from assistant.wiring.adapters.chroma_clients import get_client
from assistant.wiring.adapters.chroma_store import ChromaStore, partitioned


def unit(*values: float) -> list[float]:
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


@pytest.fixture
def store(tmp_path):  # noqa: ANN001, ANN201
    store = partitioned(tmp_path, key="project_id", embedder_id="test:3d", dimension=3)
    store.upsert(
        ["a1", "a2", "b1", "b2"],
        [unit(1, 0, 0), unit(0, 1, 0), unit(1, 0.1, 0), unit(0, 0, 1)],
        [{"project_id": 1, "lang": "en"}, {"project_id": 1, "lang": "de"},
         {"project_id": 2, "lang": "en"}, {"project_id": 2, "lang": "en"}],
    )  # fmt: skip
    return store


def test_each_project_gets_its_own_collection(store, tmp_path):  # noqa: ANN001
    names = sorted(c.name for c in get_client(tmp_path).list_collections())
    assert names == [
        "chunks-project-id-1-test-3d-3",
        "chunks-project-id-2-test-3d-3",
    ]
    one = ChromaStore(tmp_path, embedder_id="test:3d", dimension=3, prefix="chunks-project-id-1")
    assert one.ids() == {"a1", "a2"}


def test_a_project_filter_searches_only_that_project(store):  # noqa: ANN001
    hits = store.query(unit(1, 0, 0), k=4, where={"project_id": 2})
    assert [h.id for h in hits] == ["b1", "b2"]
    assert store.query(unit(1, 0, 0), k=4, where={"project_id": 1, "lang": "de"})[0].id == "a2"
    assert store.query(unit(1, 0, 0), k=4, where={"project_id": 3}) == []


def test_without_a_project_filter_it_merges_every_project_best_first(store):  # noqa: ANN001
    hits = store.query(unit(1, 0, 0), k=3)
    assert [h.id for h in hits][:2] == ["a1", "b1"]
    assert hits[2].id in {"a2", "b2"}  # both at similarity 0
    assert hits == sorted(hits, key=lambda h: -h.similarity)
    assert {h.id for h in store.query(unit(1, 0, 0), k=10, where={"lang": "en"})} == {
        "a1", "b1", "b2",
    }  # fmt: skip


def test_ids_count_and_delete_span_the_projects(store):  # noqa: ANN001
    assert store.count() == 4
    assert store.ids() == {"a1", "a2", "b1", "b2"}
    assert store.ids({"project_id": 1}) == {"a1", "a2"}
    assert store.ids({"project_id": 9}) == set()
    store.delete(["a2", "b1", "missing"])
    assert store.ids() == {"a1", "b2"}
    assert store.count() == 2


def test_a_vector_without_its_project_is_refused_and_nothing_is_written(store):  # noqa: ANN001
    with pytest.raises(ValueError, match="project_id"):
        store.upsert(["c1", "c2"], [unit(1, 1, 0), unit(0, 1, 1)], [{"project_id": 1}, {}])
    assert store.count() == 4
