"""`measure_related_floor` end to end on a 50-document slice of the Ray docs: two answerable
questions and three out-of-scope requests through the real answer path. The full run is slow
and not part of the suite; this proves the command works and its figures are sane."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from measuring.evaluation.dataset import (
    corpus_slice,
    load_corpus,
    load_queries,
    write_corpus,
)
from tests.test_bench_smoke import RAY, needs_ray


@pytest.mark.bench
@needs_ray
def test_it_reports_the_refused_questions_and_the_share_offered_pages_per_floor(tmp_path: Path):
    lines = (RAY / "queries_dev.jsonl").read_text().splitlines()
    answerable = [line for line in lines if json.loads(line)["answerable"]][:2]
    out_of_scope = [line for line in lines if not json.loads(line)["answerable"]][:3]
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(answerable + out_of_scope) + "\n")
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus, corpus_slice(load_corpus(RAY / "corpus.jsonl"), load_queries(queries), 50))
    rows_path = tmp_path / "rows.json"
    printed = io.StringIO()
    call_command("measure_related_floor", corpus=corpus, queries=[queries], json=rows_path,
                 stdout=printed, stderr=io.StringIO())  # fmt: skip

    rows = json.loads(rows_path.read_text())
    refused_oos = [r for r in rows if not r["answerable"]]
    assert len(refused_oos) == 3  # a weather or banking request finds nothing in Ray's docs
    assert all(0.0 <= r["best"] <= 1.0 and len(r["relevances"]) <= 3 for r in rows)
    report = printed.getvalue()
    assert "out of scope / unanswerable: n 3" in report
    assert "floor 0.1     pages offered" in report and "(floor in use: 0.1)" in report
