"""`bench --only local` and `evaluate --answers --generator local` with the real local model,
on small data: the figures they report are there and make sense together."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from tests.test_bench_smoke import _Sink, needs_ray, ray_slice  # noqa: F401 - fixture
from tests.test_local_model import model  # noqa: F401 - fixture

pytestmark = [pytest.mark.local_model, pytest.mark.bench]


@needs_ray
def test_bench_times_the_local_model_on_demo_questions(ray_slice, tmp_path, model):  # noqa: F811
    corpus, queries = ray_slice
    out = tmp_path / "bench.json"
    call_command(
        "bench", corpus=corpus, queries=queries, only="local", runs=1, local_concurrency="1,2",
        json=out, stdout=_Sink(), stderr=_Sink(),
    )  # fmt: skip
    local = json.loads(out.read_text())["local"]

    single = local["single"]
    assert single["answers"] == 6 and single["fell_back"] == 0
    assert 0 < single["first_token_s"]["median"] <= single["answer_s"]["median"]
    assert single["tokens_per_s"]["median"] > 1
    # Each prompt starts with the rules, which llama.cpp keeps from the previous question.
    assert single["cache_n"] > 100 and single["prompt_n"] > 0
    assert set(local["levels"]) == {"1", "2"} and local["levels"]["2"]["answers"] == 2
    # the model is resident after its first question (loaded here, or by an earlier test of
    # this process: one model per process)
    assert local["rss_after_mb"] > 1000 and local["rss_after_mb"] >= local["rss_before_mb"] - 50
    assert local["generator"] == model.id and local["passages"] == 3


@needs_ray
def test_evaluate_answers_with_the_local_model(ray_slice, tmp_path, model):  # noqa: F811
    corpus, queries = ray_slice
    out = tmp_path / "evaluate.json"
    call_command(
        "evaluate", corpus=corpus, queries=queries, answers=True, generator="local",
        candidates=5, json=out, stdout=_Sink(), stderr=_Sink(),
    )  # fmt: skip
    report = json.loads(out.read_text())

    assert report["config"]["generator"] == "local"
    written = [q for q in report["per_query"] if q.get("generate_ms")]
    assert written and all(q["answer_text"] for q in written)
    # Grounded words first: each answer is the model's, or the quote with why it stood (the
    # model late or busy on a loaded machine); a failed generation is counted, never raised.
    for q in written:
        assert q["generator"] == model.id or q.get("written") not in (None, "complete"), q
    assert report["generate_ms"]["median"] > 0
