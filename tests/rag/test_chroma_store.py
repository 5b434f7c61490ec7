"""ChromaStore against real Chroma: the embedded PersistentClient and a `chroma run` server."""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.wiring.adapters import chroma_clients, chroma_store
from assistant.wiring.adapters.chroma_clients import (
    VectorStoreUnavailable,
    close_clients,
    get_client,
    reopen_embedded,
)
from assistant.wiring.adapters.chroma_naming import (
    HnswParams,
    VectorStoreMismatch,
    collection_name,
)
from assistant.wiring.adapters.chroma_store import ChromaStore
from tests.servers import free_port, start_chroma, stop

EMBEDDER = "test:tiny-3d"


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


# --- a real Chroma server, once per module --------------------------------------------------------


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server, url = start_chroma(tmp_path_factory.mktemp("chroma-server"), timeout=60)
    try:
        yield url
    finally:
        stop(server, timeout=10)


@pytest.fixture(params=["embedded", "server"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "embedded":
        return str(tmp_path / "chroma")
    return str(request.getfixturevalue("chroma_server"))


@pytest.fixture
def make_store(location: str) -> Iterator[Callable[..., ChromaStore]]:
    # One server serves every test, so each test writes under its own prefix.
    prefix = f"t{uuid.uuid4().hex[:8]}"
    made: list[ChromaStore] = []

    def make(**options: Any) -> ChromaStore:
        options.setdefault("embedder_id", EMBEDDER)
        options.setdefault("dimension", 3)
        options.setdefault("prefix", prefix)
        store = ChromaStore(location, **options)
        made.append(store)
        return store

    yield make
    for store in made:
        store.reset()


@pytest.fixture
def store(make_store: Callable[..., ChromaStore]) -> ChromaStore:
    return make_store()


def fill(store: ChromaStore) -> None:
    store.upsert(
        ["a", "b", "c", "d"],
        [unit(1, 0, 0), unit(1, 1, 0), unit(0, 1, 0), unit(-1, 0, 0)],
        [
            {"project_id": 1, "lang": "en"},
            {"project_id": 2, "lang": "en"},
            {"project_id": 1, "lang": "de"},
            {"project_id": 2, "lang": "de"},
        ],
    )


# --- the VectorStore contract, embedded and served ------------------------------------------------


def test_it_returns_hits_best_first_with_cosine_similarity(store: ChromaStore) -> None:
    fill(store)

    hits = store.query(unit(1, 0, 0), k=3)

    assert [hit.id for hit in hits] == ["a", "b", "c"]
    assert [hit.similarity for hit in hits] == pytest.approx([1.0, math.sqrt(0.5), 0.0], abs=1e-5)
    assert hits[0].metadata == {"project_id": 1, "lang": "en"}


def test_it_gives_negative_similarity_to_opposite_vectors(store: ChromaStore) -> None:
    fill(store)

    hits = store.query(unit(1, 0, 0), k=10)

    assert [hit.id for hit in hits] == ["a", "b", "c", "d"]
    assert hits[-1].similarity == pytest.approx(-1.0, abs=1e-5)


def test_it_filters_by_project(store: ChromaStore) -> None:
    fill(store)

    hits = store.query(unit(1, 0, 0), k=10, where={"project_id": 2})

    assert [hit.id for hit in hits] == ["b", "d"]


def test_it_filters_on_several_keys(store: ChromaStore) -> None:
    fill(store)

    assert [
        h.id for h in store.query(unit(1, 0, 0), k=10, where={"project_id": 1, "lang": "de"})
    ] == ["c"]
    assert store.ids({"project_id": 1, "lang": "en"}) == {"a"}
    assert store.ids({"$or": [{"lang": "de"}, {"project_id": 2}]}) == {"b", "c", "d"}


def test_it_answers_an_empty_collection_with_no_hits(store: ChromaStore) -> None:
    assert store.query(unit(1, 0, 0), k=5) == []
    assert store.count() == 0
    assert store.ids() == set()


def test_it_overwrites_on_upsert(store: ChromaStore) -> None:
    fill(store)

    store.upsert(["d"], [unit(1, 0, 0)], [{"project_id": 3}])

    assert store.count() == 4
    best = store.query(unit(1, 0, 0), k=2, where={"project_id": 3})
    assert [(hit.id, round(hit.similarity, 4)) for hit in best] == [("d", 1.0)]


def test_it_stores_items_without_metadata(store: ChromaStore) -> None:
    store.upsert(["x"], [unit(0, 0, 1)], [{}])

    assert store.query(unit(0, 0, 1), k=1)[0].metadata == {}


def test_it_deletes_ids(store: ChromaStore) -> None:
    fill(store)

    store.delete(["a", "c", "not-there"])
    store.delete([])

    assert store.count() == 2
    assert store.ids() == {"b", "d"}
    assert [hit.id for hit in store.query(unit(1, 0, 0), k=10)] == ["b", "d"]


def test_it_lists_ids_page_by_page(store: ChromaStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chroma_store, "IDS_PAGE_SIZE", 3)
    ids = [f"id-{n}" for n in range(7)]
    store.upsert(ids, [unit(1, n, 0) for n in range(7)], [{"even": n % 2 == 0} for n in range(7)])

    assert store.ids() == set(ids)
    assert store.ids({"even": True}) == {"id-0", "id-2", "id-4", "id-6"}
    assert store.count() == 7


def test_it_splits_upserts_above_the_client_batch_limit(store: ChromaStore) -> None:
    limit = get_client(store.location).get_max_batch_size()
    total = limit + 5
    ids = [f"n{n}" for n in range(total)]

    store.upsert(
        ids, [unit(1, n / total, 0) for n in range(total)], [{"n": n} for n in range(total)]
    )

    assert store.count() == total
    store.delete(ids[: limit + 1])
    assert store.count() == 4


def test_it_refuses_vectors_of_the_wrong_length(store: ChromaStore) -> None:
    with pytest.raises(VectorStoreMismatch, match="4 dimensions"):
        store.upsert(["a"], [[0.5, 0.5, 0.5, 0.5]], [{"x": 1}])
    with pytest.raises(VectorStoreMismatch, match="2 dimensions"):
        store.query([1.0, 0.0], k=1)
    with pytest.raises(ValueError, match="as many"):
        store.upsert(["a", "b"], [unit(1, 0, 0)], [{"x": 1}])


def test_it_refuses_a_collection_built_for_another_dimension(
    make_store: Callable[..., ChromaStore],
) -> None:
    store = make_store()
    get_client(store.location).create_collection(
        store.name,
        embedding_function=None,
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"embedder_id": EMBEDDER, "dimension": 4},
    )

    with pytest.raises(VectorStoreMismatch, match=r"dimension 4 \(expected 3\)"):
        store.count()


def test_it_refuses_a_collection_with_another_distance(
    make_store: Callable[..., ChromaStore],
) -> None:
    store = make_store()
    get_client(store.location).create_collection(
        store.name,
        embedding_function=None,
        configuration={"hnsw": {"space": "l2"}},
        metadata={"embedder_id": EMBEDDER, "dimension": 3},
    )

    with pytest.raises(VectorStoreMismatch, match="distance 'l2'"):
        store.query(unit(1, 0, 0), k=1)


def test_it_keeps_one_collection_per_embedder(make_store: Callable[..., ChromaStore]) -> None:
    bge = make_store(embedder_id="onnx:bge-small-en-v1.5")
    minilm = make_store(embedder_id="onnx:all-MiniLM-L6-v2")
    bge.upsert(["a", "b"], [unit(1, 0, 0), unit(0, 1, 0)], [{"p": 1}, {"p": 1}])
    minilm.upsert(["a"], [unit(0, 0, 1)], [{"p": 1}])

    assert bge.name != minilm.name
    assert (bge.count(), minilm.count()) == (2, 1)
    collections = {c.name: c.metadata for c in get_client(bge.location).list_collections()}
    assert collections[bge.name] == {"embedder_id": "onnx:bge-small-en-v1.5", "dimension": 3}
    assert collections[minilm.name] == {"embedder_id": "onnx:all-MiniLM-L6-v2", "dimension": 3}


def test_it_keeps_prefixes_apart(make_store: Callable[..., ChromaStore]) -> None:
    chunks = make_store(prefix=f"chunks{uuid.uuid4().hex[:6]}")
    memory = make_store(prefix=f"memory{uuid.uuid4().hex[:6]}")
    chunks.upsert(["a"], [unit(1, 0, 0)], [{"p": 1}])

    assert (chunks.count(), memory.count()) == (1, 0)


def test_it_starts_empty_after_reset(store: ChromaStore) -> None:
    fill(store)

    store.reset()
    store.reset()  # dropping a dropped collection is fine

    assert store.count() == 0
    store.upsert(["z"], [unit(1, 0, 0)], [{"p": 1}])
    assert store.ids() == {"z"}


def test_it_sets_ef_search_on_new_and_existing_collections(
    make_store: Callable[..., ChromaStore],
) -> None:
    first = make_store(hnsw=HnswParams(ef_search=40, ef_construction=120, max_neighbors=24))
    first.count()
    hnsw = get_client(first.location).get_collection(first.name, embedding_function=None)
    assert hnsw.configuration_json["hnsw"]["ef_search"] == 40
    assert hnsw.configuration_json["hnsw"]["ef_construction"] == 120
    assert hnsw.configuration_json["hnsw"]["max_neighbors"] == 24

    make_store(hnsw=HnswParams(ef_search=150, max_neighbors=32)).count()

    hnsw = get_client(first.location).get_collection(first.name, embedding_function=None)
    assert hnsw.configuration_json["hnsw"]["ef_search"] == 150
    assert hnsw.configuration_json["hnsw"]["max_neighbors"] == 24  # fixed at creation


# --- embedded only ------------------------------------------------------------------------------


def test_it_keeps_vectors_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    fill(ChromaStore(path, embedder_id=EMBEDDER, dimension=3))
    close_clients()

    reopened = ChromaStore(path, embedder_id=EMBEDDER, dimension=3)

    assert reopened.count() == 4
    assert [hit.id for hit in reopened.query(unit(1, 0, 0), k=1)] == ["a"]


def test_it_reopens_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    fill(ChromaStore(path, embedder_id=EMBEDDER, dimension=3))
    close_clients()

    script = (
        "from assistant.wiring.adapters.chroma_store import ChromaStore\n"
        f"store = ChromaStore({str(path)!r}, embedder_id={EMBEDDER!r}, dimension=3)\n"
        "print(store.count(), sorted(store.ids({'project_id': 1})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )

    assert out.stdout.strip() == "4 ['a', 'c']"


def open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")
def test_a_reopened_store_releases_the_files_of_the_client_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server reopens its embedded client whenever another process wrote the index: the
    replaced one is closed after a grace period (a long-running server leaked about 11 file
    descriptors per index change; a test run passed 1,024 and broke select())."""
    monkeypatch.setattr(chroma_clients, "RETIRED_CLIENT_GRACE_S", 0.2)
    path = tmp_path / "chroma"
    store = ChromaStore(path, embedder_id=EMBEDDER, dimension=3)
    fill(store)
    assert [hit.id for hit in store.query(unit(1, 0, 0), k=1)] == ["a"]
    before = open_descriptors()

    for _ in range(10):
        reopen_embedded(path)
        # a search right after the swap: the new client, the same vectors
        assert [hit.id for hit in store.query(unit(0, 1, 0), k=1)] == ["c"]
    deadline = time.monotonic() + 10
    while open_descriptors() > before + 2 and time.monotonic() < deadline:
        time.sleep(0.1)

    assert open_descriptors() <= before + 2  # ten replaced clients held about 110 more
    assert store.count() == 4


def test_it_holds_one_client_per_location(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    seen: list[object] = []

    def open_client() -> None:
        seen.append(get_client(path))

    threads = [threading.Thread(target=open_client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len({id(client) for client in seen}) == 1
    assert get_client(str(path) + "/") is seen[0]
    a = ChromaStore(path, embedder_id="e:one", dimension=3)
    b = ChromaStore(path, embedder_id="e:two", dimension=3)
    a.count(), b.count()
    assert get_client(a.location) is get_client(b.location) is seen[0]


def test_it_does_not_touch_the_network_when_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[object] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def local(address: object) -> bool:
        host = address[0] if isinstance(address, tuple) else address
        return isinstance(host, (str, bytes)) and host in ("127.0.0.1", "::1", "localhost")

    def guarded_connect(sock: socket.socket, address: Any) -> None:
        if sock.family != socket.AF_UNIX and not local(address):
            attempts.append(address)
            raise OSError(f"test blocks network access to {address!r}")
        real_connect(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not local(host):
            attempts.append(host)
            raise socket.gaierror(f"test blocks name lookups of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)

    store = ChromaStore(tmp_path / "offline", embedder_id=EMBEDDER, dimension=3)
    fill(store)
    hits = store.query(unit(1, 0, 0), k=2, where={"lang": "en"})
    store.delete(["a"])
    store.reset()

    assert [hit.id for hit in hits] == ["a", "b"]
    assert attempts == []


# --- when the server is not there -------------------------------------------------------------


def test_it_does_not_connect_before_first_use() -> None:
    ChromaStore(f"http://127.0.0.1:{free_port()}", embedder_id=EMBEDDER, dimension=3)


def test_it_reports_an_unreachable_server_quickly() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    store = ChromaStore(url, embedder_id=EMBEDDER, dimension=3)

    started = time.monotonic()
    with pytest.raises(VectorStoreUnavailable, match=url.replace(".", r"\.")):
        store.query(unit(1, 0, 0), k=3)

    assert time.monotonic() - started < 3
    assert isinstance(VectorStoreUnavailable("x"), RuntimeError)


def test_it_gives_up_quickly_on_a_server_that_never_answers() -> None:
    with socket.socket() as silent:  # accepts connections (in the kernel) but never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        store = ChromaStore(url, embedder_id=EMBEDDER, dimension=3, connect_timeout=1.0)

        started = time.monotonic()
        with pytest.raises(VectorStoreUnavailable, match="Cannot reach the Chroma server"):
            store.count()

        assert time.monotonic() - started < 3


def test_it_names_collections_within_chromas_rules() -> None:
    assert collection_name("chunks", "onnx:bge-small-en-v1.5", 384) == (
        "chunks-onnx-bge-small-en-v1-5-384"
    )
    assert collection_name("eval-3f2a", "ollama:nomic-embed-text", 768) == (
        "eval-3f2a-ollama-nomic-embed-text-768"
    )
    long_a = collection_name("chunks", "hf:" + "x" * 80 + "/a", 384)
    long_b = collection_name("chunks", "hf:" + "x" * 80 + "/b", 384)
    assert len(long_a) <= 63 and len(long_b) <= 63 and long_a != long_b
    assert long_a[0].isalnum() and long_a[-1].isalnum()


def test_a_server_restarted_empty_is_used_again_without_a_restart(tmp_path: Path) -> None:
    """The web process keeps its collection handle; a Chroma server that comes back without
    the collection (restarted on an empty folder) must not leave it failing until restarted."""
    port = free_port()
    (tmp_path / "first").mkdir()
    server, url = start_chroma(tmp_path / "first", port=port)
    try:
        store = ChromaStore(url, embedder_id="test:3d", dimension=3, prefix="restart")
        store.upsert(["a"], [unit(1, 0, 0)], [{"project_id": 1}])
        assert [h.id for h in store.query(unit(1, 0, 0), k=1)] == ["a"]
    finally:
        stop(server)
    (tmp_path / "second").mkdir()
    server, _ = start_chroma(tmp_path / "second", port=port)
    try:
        assert store.query(unit(1, 0, 0), k=1) == []  # empty, not "does not exist"
        store.upsert(["b"], [unit(0, 1, 0)], [{"project_id": 1}])
        assert store.ids() == {"b"} and store.count() == 1
    finally:
        stop(server)
