"""Confidence intervals and question-by-question comparison of `evaluate` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from measuring.evaluation.compare import (
    ComparisonError,
    compare,
    format_comparison,
    load_run,
)
from measuring.evaluation.metrics import sign_test, wilson


def test_wilson_interval_matches_the_textbook_values():
    assert wilson(0, 10) == (0.0, 0.2775)
    assert wilson(10, 10) == (0.7225, 1.0)
    low, high = wilson(121, 168)  # page-hit@5 0.720 on the Ray dev half
    assert (low, high) == (0.648, 0.7826)  # centre 0.7153, half-width 0.0673
    assert wilson(0, 0) is None


def test_wilson_interval_is_symmetric_between_successes_and_failures():
    low, high = wilson(30, 75)
    other_low, other_high = wilson(45, 75)
    assert low == pytest.approx(1 - other_high, abs=1e-4)
    assert high == pytest.approx(1 - other_low, abs=1e-4)


@pytest.mark.parametrize(
    "won, lost, p",
    [(8, 1, 0.0391), (5, 0, 0.0625), (0, 5, 0.0625), (3, 3, 1.0), (0, 0, 1.0), (12, 4, 0.0768)],
)
def test_sign_test_is_the_exact_two_sided_binomial(won, lost, p):
    assert sign_test(won, lost) == p


def _outcome(qid: str, **values: object) -> dict[str, object]:
    return {"id": qid, **values}


def test_compare_counts_questions_won_and_lost_over_the_shared_ones():
    baseline = [
        _outcome("a", answerable=True, **{"hit@5": True, "page_hit@5": False, "answered": True}),
        _outcome("b", answerable=True, **{"hit@5": False, "page_hit@5": False, "answered": True}),
        _outcome("c", answerable=True, **{"hit@5": True, "page_hit@5": True, "answered": True}),
        _outcome("u", answerable=False, refused=True),
        _outcome("gone", answerable=True, **{"hit@5": True}),
    ]
    current = [
        _outcome("a", answerable=True, **{"hit@5": True, "page_hit@5": True, "answered": True}),
        _outcome("b", answerable=True, **{"hit@5": True, "page_hit@5": True, "answered": True}),
        _outcome("c", answerable=True, **{"hit@5": False, "page_hit@5": True, "answered": False}),
        _outcome("u", answerable=False, refused=False),
        _outcome("new", answerable=True, **{"hit@5": False}),
    ]
    result = compare(baseline, current)

    assert result["shared_questions"] == 4
    metrics = result["metrics"]
    assert set(metrics) == {"hit@5", "page_hit@5", "answered", "refused"}
    assert metrics["page_hit@5"] == {"n": 3, "baseline": 0.3333, "current": 1.0,
                                     "delta": 0.6667, "won": 2, "lost": 0, "p": 0.5}  # fmt: skip
    assert (metrics["hit@5"]["won"], metrics["hit@5"]["lost"]) == (1, 1)
    assert metrics["answered"]["lost"] == 1 and metrics["answered"]["delta"] == -0.3333
    assert metrics["refused"] == {"n": 1, "baseline": 1.0, "current": 0.0, "delta": -1.0,
                                  "won": 0, "lost": 1, "p": 1.0}  # fmt: skip
    text = format_comparison(result)
    assert "4 questions in common" in text
    assert "page_hit@5" in text and "+0.667" in text


def test_compare_refuses_runs_without_a_question_in_common():
    with pytest.raises(ComparisonError, match="no question in common"):
        compare([_outcome("a", **{"hit@5": True})], [_outcome("b", **{"hit@5": True})])


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "No such file"),
        ("{not json", "not a JSON report"),
        ('{"hit@5": 0.6}', "no per-question outcomes"),
        ('{"per_query": [{"hit@5": true}]}', "no per-question outcomes"),
        ("[1, 2]", "no per-question outcomes"),
    ],
)
def test_a_baseline_that_is_not_an_evaluate_report_is_refused(tmp_path, content, message):
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ComparisonError, match=message):
        load_run(path)


def test_load_run_returns_the_outcomes(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"per_query": [{"id": "q1", "hit@5": True}]}))
    assert load_run(path) == [{"id": "q1", "hit@5": True}]


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"baseline": "/nonexistent/base.json"}, "--baseline: No such file"),
        ({"json": "/nonexistent/folder/out.json"}, "--json: no such folder"),
    ],
)
def test_evaluate_refuses_a_bad_baseline_or_output_before_doing_anything(tmp_path, extra, message):
    corpus = tmp_path / "corpus.jsonl"
    queries = tmp_path / "queries.jsonl"
    corpus.write_text('{"id": "s1", "text": "hello"}\n')
    queries.write_text('{"id": "q1", "question": "hi?", "relevant_ids": ["s1"]}\n')
    paths = {option: Path(value) for option, value in extra.items()}
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", corpus=corpus, queries=queries, **paths)
