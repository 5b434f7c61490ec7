"""`evaluate --answers` scoring and the answerability model fit: pure functions on small,
hand-checked inputs."""

from __future__ import annotations

import math

from assistant.rag.judge.answerability import FEATURES
from assistant.rag.types import Candidate, Chunk
from measuring.evaluation.answerability_fit import (
    Example,
    auc,
    cross_validate,
    fit,
    fit_model,
    folds_of,
    probability,
    threshold_for,
)
from measuring.evaluation.answers import (
    cited,
    oracle,
    rouge_l,
    summary,
    unheld,
    without_markers,
)
from measuring.evaluation.dataset import Query
from measuring.evaluation.index import EvalIndex, IndexedChunk
from measuring.evaluation.misses import misses_markdown


def kept(*texts: str) -> list[Candidate]:
    return [
        Candidate(Chunk(f"c{i}", text), similarity=0.8, relevance=0.9, kept=True)
        for i, text in enumerate(texts)
    ]


def test_rouge_l_takes_the_closest_gold_answer() -> None:
    golds = ["the cat sat on the mat", "dogs bark loudly at night"]
    assert rouge_l("the cat sat on the mat", golds) == 1.0
    assert rouge_l("dogs bark at night", golds) > rouge_l("the dog", golds)
    assert rouge_l("anything", []) == 0.0


def test_markers_are_dropped_before_scoring_and_point_at_kept_passages() -> None:
    passages = kept("One passage.", "Two passage.")
    text = "Refunds take 5 days. [2]\n\nThey go to the card. [1] [7]"
    assert without_markers(text) == "Refunds take 5 days. They go to the card."
    assert [c.chunk.id for c in cited(text, passages)] == ["c1", "c0"]  # [7] is out of range
    # In code a marker is code: `<Response [200]>` is what the reader sees, `a[1]` cites nothing.
    text = "It returns `<Response [200]>` [2]; read `a[1]`."
    assert without_markers(text) == "It returns `<Response [200]>`; read `a[1]`."
    assert [c.chunk.id for c in cited(text, passages)] == ["c1"]


def test_the_oracle_quotes_the_best_sentences_in_passage_order() -> None:
    passages = kept(
        "The sky is blue on clear days. Grass is green in spring.",
        "Paris is the capital of France. It lies on the Seine river.",
    )
    gold = ["Paris is the capital of France and lies on the Seine river."]
    best = oracle(passages, gold)
    assert best == rouge_l("Paris is the capital of France. It lies on the Seine river.", gold)
    assert best > rouge_l("Paris is the capital of France.", gold)
    assert oracle(kept("```\ncode only\n```"), gold) == 0.0


def test_the_summary_averages_only_questions_that_have_each_score() -> None:
    outcomes = [
        {"answered": True, "answer_rougeL": 0.5, "oracle_rougeL": 0.8, "answer_words": 10,
         "answer_cites_gold": True},
        {"answered": True, "answer_rougeL": 0.3, "oracle_rougeL": 0.6, "answer_words": 30,
         "answer_cites_gold": False, "written": "omits", "unheld": ["pip install sqlite-tools"]},
        {"refused": True},
    ]  # fmt: skip
    report = summary(outcomes)
    # A complete written answer that left out a name the quote gives is not a failure.
    assert report == {
        "answer_rougeL": 0.4, "oracle_rougeL": 0.7, "answer_cites_gold": 0.5,
        "answer_words": 20.0, "n_answers_scored": 2, "answerability_ms": {},
        "generate_ms": {}, "fell_back": 0, "written_failed": 0, "written_omits": 1,
        "written_sentences_withheld": 0, "answers_naming_unheld": 1, "unheld_names": 1,
    }  # fmt: skip


def test_a_name_or_link_no_passage_holds_is_counted_and_what_they_hold_is_not() -> None:
    passages = [
        Chunk("c0", "Run `PRAGMA foreign_keys = ON;` on each connection.",
              url="https://docs.example/pragma.html", title="PRAGMA foreign_keys")
    ]  # fmt: skip
    held = (
        "Set `PRAGMA foreign_keys = ON;` on each connection [1] (https://docs.example/pragma.html)."
    )
    assert unheld(held, passages) == []
    # Brackets inside code are code, not a citation marker to drop before reading it.
    shown = [Chunk("c1", "```\n>>> requests.get(url)\n<Response [200]>\n```", title="Quickstart")]
    assert (
        unheld("Ask for it [1]:\n\n```\n>>> requests.get(url)\n<Response [200]>\n```", shown) == []
    )
    # A name, an option and a link from memory, none of them in the passage.
    invented = (
        "Use `PRAGMA enforce_fk` or start the shell so [1]:\n\n```sh\n$ sqlite3 --strict-keys\n"
        "```\n\nSee https://other.example/fk."
    )
    assert unheld(invented, passages) == [
        "--strict-keys", "enforce_fk", "https://other.example/fk", "pragma enforce_fk",
        "sqlite3 --strict-keys",
    ]  # fmt: skip


def examples(n: int) -> list[Example]:
    """Answerable questions have a better best sentence; the two groups overlap a little."""
    rows = []
    for i in range(n):
        answerable = i % 2 == 0
        base = (2.0 if answerable else -1.0) + ((i * 37) % 11 - 5) * 0.35
        features = {f: 0.0 for f in FEATURES} | {"sentence_logit": base}
        rows.append(Example(f"q{i}", "d", features, answerable))
    return rows


def test_the_fit_finds_the_direction_and_calibrates() -> None:
    data = examples(200)
    coefficients, intercept = fit(data)
    assert coefficients["sentence_logit"] > 0.5
    mean_p = sum(probability(e.features, coefficients, intercept) for e in data) / len(data)
    assert math.isclose(mean_p, 0.5, abs_tol=0.02)  # logistic regression matches the base rate


def test_a_dataset_without_unanswerable_examples_sets_the_threshold_not_the_weights() -> None:
    labelled = examples(200)
    # Answerable only, and weaker than the labelled set's: it must not move the coefficients,
    # but the threshold must still answer 95% of it.
    weak = [
        Example(f"w{i}", "other", {f: 0.0 for f in FEATURES} | {"sentence_logit": -1.0 + i / 50},
                True)
        for i in range(100)
    ]  # fmt: skip
    coefficients, intercept, cut = fit_model([*labelled, *weak], keep_share=0.95)
    assert (coefficients, intercept) == fit(labelled)
    kept = [probability(e.features, coefficients, intercept) >= cut for e in weak]
    assert sum(kept) >= 95


def test_the_threshold_keeps_the_asked_share_of_answerable_scores() -> None:
    scores = [i / 100 for i in range(100)]
    cut = threshold_for(scores, keep_share=0.97)
    assert sum(s >= cut for s in scores) == 97


def test_auc_and_folds() -> None:
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.5], [0.5]) == 0.5
    assert auc([0.9], []) is None
    folds = folds_of(examples(50), 5)
    assert sorted(e.id for f in folds for e in f) == sorted(e.id for e in examples(50))
    assert all(sum(e.answerable for e in f) == 5 for f in folds)  # stratified


def test_cross_validation_reports_held_out_shares_per_dataset() -> None:
    report = cross_validate(examples(200), k=5, keep_share=0.95)
    figures = report["d"]
    assert figures["n_answerable"] == figures["n_unanswerable"] == 100
    assert figures["auc"] > 0.8
    assert figures["answerable_answered"] >= 0.85
    assert 0.0 < figures["unanswerable_refused"] <= 1.0


def test_fit_answerability_writes_a_model_the_check_reads(tmp_path) -> None:  # noqa: ANN001
    import json
    from dataclasses import asdict

    from django.core.management import call_command

    from assistant.rag.judge.answerability import Model

    cache = tmp_path / "features.json"
    cache.write_text(json.dumps([asdict(e) for e in examples(100)]))
    out = tmp_path / "model.json"
    call_command("fit_answerability", "--features", str(cache), "--out", str(out), stdout=None)
    written = json.loads(out.read_text())
    assert written["cross_validation"]["d"]["n_answerable"] == 50
    model = Model.load(out)
    strong = {f: 0.0 for f in FEATURES} | {"sentence_logit": 4.0}
    weak = {f: 0.0 for f in FEATURES} | {"sentence_logit": -4.0}
    assert model.probability(strong) >= model.threshold > model.probability(weak)


def test_a_miss_read_again_in_the_models_draft_says_what_the_draft_found() -> None:
    query = Query("sq-006", "Can the INSERT hand the new id back?", frozenset({"a#b"}), True)
    refused = {
        "id": "sq-006", "answerable": True, "answered": False, "refused_by": "gate",
        "draft": "Use the RETURNING clause.", "second_reading_judge_ms": 4210.4,
        "second_reading": [{"section": "lang_returning.html#overview", "relevance": 0.99}],
    }  # fmt: skip

    written = misses_markdown([query], [refused])

    assert "- read again as the model's draft: Use the RETURNING clause." in written
    assert "- the draft's reading kept: lang_returning.html#overview" in written
    assert "- the model did not say they answer (4210 ms)" in written
    # A miss that was not read again says nothing of a draft.
    plain = misses_markdown([query], [{**refused, "draft": None}])
    assert "draft" not in plain and "## sq-006: refused (by the gate)" in plain


def test_an_answer_is_made_from_its_passages_sections_as_a_quote_reads_on_into_them() -> None:
    length = Chunk("a0", "But you should not do that anyway.", url="limits.html#max_sql_length")
    on = Chunk("a1", "Prepare short SQL statements like this: INSERT INTO tab1 VALUES(?,?,?);",
               url="limits.html#max_sql_length")  # fmt: skip
    other = Chunk("b0", "PRAGMA max_page_count;", url="pragma.html#max_page_count")
    index = EvalIndex(
        "k", {c.id: IndexedChunk(c, c.url, "page") for c in (length, on, other)},
        store=None, built=False,  # type: ignore[arg-type]
    )  # fmt: skip
    assert index.section_chunks(["a0"]) == [length, on]
    quote = "Prepare short SQL statements like this:\n\n```\nINSERT INTO tab1 VALUES(?,?,?);\n```"
    assert unheld(quote, [length]) == ["insert into tab1 values(?,?,?);", "values"]
    assert unheld(quote, index.section_chunks(["a0"])) == []
