"""One Chroma collection per project and source (real Chroma on disk): a question's filter on
its project's sources becomes unfiltered searches of their collections, merged."""

from __future__ import annotations

import pytest

from assistant.wiring.adapters.chroma_clients import get_client
from assistant.wiring.adapters.chroma_partitions import partitioned
from assistant.wiring.adapters.chroma_store import ChromaStore

KEYS = ("project_id", "source_id")


def unit(*values: float) -> list[float]:
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


@pytest.fixture
def store(tmp_path):  # noqa: ANN001, ANN201
    store = partitioned(tmp_path, keys=KEYS, embedder_id="test:3d", dimension=3)
    store.upsert(
        ["a1", "a2", "b1", "b2"],
        [unit(1, 0, 0), unit(0, 1, 0), unit(1, 0.1, 0), unit(0, 0, 1)],
        [{"project_id": 1, "source_id": 1, "lang": "en"},
         {"project_id": 1, "source_id": 2, "lang": "de"},
         {"project_id": 2, "source_id": 3, "lang": "en"},
         {"project_id": 2, "source_id": 3, "lang": "en"}],
    )  # fmt: skip
    return store


def names(tmp_path) -> list[str]:  # noqa: ANN001
    return sorted(c.name for c in get_client(tmp_path).list_collections())


def test_each_project_and_source_gets_its_own_collection(store, tmp_path):  # noqa: ANN001
    assert names(tmp_path) == ["chunks-p1-s1-test-3d-3", "chunks-p1-s2-test-3d-3",
                               "chunks-p2-s3-test-3d-3"]  # fmt: skip
    one = ChromaStore(tmp_path, embedder_id="test:3d", dimension=3, prefix="chunks-p1-s2")
    assert one.ids() == {"a2"}


def test_a_project_filter_searches_its_sources_and_merges_best_first(store):  # noqa: ANN001
    hits = store.query(unit(1, 0.5, 0), k=4, where={"project_id": 1})
    assert [h.id for h in hits] == ["a1", "a2"]
    assert [h.id for h in store.query(unit(1, 0, 0), k=4, where={"project_id": 2})] == ["b1", "b2"]
    assert store.query(unit(1, 0, 0), k=4, where={"project_id": 1, "lang": "de"})[0].id == "a2"
    assert store.query(unit(1, 0, 0), k=4, where={"project_id": 3}) == []


def test_a_list_of_sources_picks_their_collections_without_listing(store, tmp_path):  # noqa: ANN001
    scope = {"project_id": 1, "source_id": {"$in": [2, 9]}}
    assert [h.id for h in store.query(unit(1, 0, 0), k=4, where=scope)] == ["a2"]
    assert store.ids(scope) == {"a2"}
    assert store.query(unit(1, 0, 0), k=4, where={"project_id": 1, "source_id": {"$in": []}}) == []


def test_without_a_project_filter_it_merges_every_partition_best_first(store):  # noqa: ANN001
    hits = store.query(unit(1, 0, 0), k=3)
    assert [h.id for h in hits][:2] == ["a1", "b1"]
    assert hits[2].id in {"a2", "b2"}  # both at similarity 0
    assert hits == sorted(hits, key=lambda h: -h.similarity)
    assert {h.id for h in store.query(unit(1, 0, 0), k=10, where={"lang": "en"})} == {
        "a1", "b1", "b2",
    }  # fmt: skip


def test_ids_count_and_delete_span_the_partitions(store):  # noqa: ANN001
    assert store.count() == 4
    assert store.ids() == {"a1", "a2", "b1", "b2"}
    assert store.ids({"project_id": 1}) == {"a1", "a2"}
    assert store.ids({"project_id": 9}) == set()
    store.delete(["a2", "b1", "missing"])
    assert store.ids() == {"a1", "b2"}
    assert store.count() == 2


def test_a_vector_without_its_source_is_refused_and_nothing_is_written(store):  # noqa: ANN001
    with pytest.raises(ValueError, match="source_id"):
        store.upsert(["c1", "c2"], [unit(1, 1, 0), unit(0, 1, 1)],
                     [{"project_id": 1, "source_id": 1}, {"project_id": 1}])  # fmt: skip
    assert store.count() == 4


def test_a_collection_of_the_earlier_layout_is_split_by_source_when_the_store_is_built(tmp_path):  # noqa: ANN001
    earlier = ChromaStore(
        tmp_path, embedder_id="test:3d", dimension=3, prefix="chunks-project-id-1"
    )
    earlier.upsert(
        ["a1", "a2", "a3"], [unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)],
        [{"project_id": 1, "source_id": 1}, {"project_id": 1, "source_id": 2},
         {"project_id": 1, "source_id": 2}],
    )  # fmt: skip
    assert names(tmp_path) == ["chunks-project-id-1-test-3d-3"]

    store = partitioned(tmp_path, keys=KEYS, embedder_id="test:3d", dimension=3)

    assert names(tmp_path) == ["chunks-p1-s1-test-3d-3", "chunks-p1-s2-test-3d-3"]
    assert store.ids({"project_id": 1, "source_id": 2}) == {"a2", "a3"}
    assert store.query(unit(0, 0, 1), k=1, where={"project_id": 1})[0].id == "a3"
    # Built again (another process, a restart): nothing left to move, nothing lost.
    assert partitioned(tmp_path, keys=KEYS, embedder_id="test:3d", dimension=3).count() == 3
