"""The follow-up set made from a question set: a second question that cannot be understood
alone, the original's gold carried over, and a re-run that writes the same file."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management import call_command

from assistant.rag.retrieve.queries import leans_on_history
from measuring.evaluation.dataset import load_queries
from measuring.evaluation.followups import (
    ALONE,
    FOLLOWUP,
    followup_rows,
    pronoun_for,
    split_subject,
)

ROWS = [
    {"id": "q1", "question": "How do I convert a string to a number?", "answerable": True,
     "relevant_ids": ["faq#convert"], "gold_page": "faq/programming.html"},
    {"id": "q2", "question": "How can I set the search algorithm using a tune.Tuner?",
     "answerable": True, "relevant_ids": ["tune#search"], "gold_page": "tune.html"},
    {"id": "q3", "question": "How do I modify a string in place?", "answerable": True,
     "relevant_ids": ["faq#modify"], "gold_page": "faq/programming.html"},
    {"id": "q4", "question": "Are there copyright restrictions on the use of Python?",
     "answerable": True, "relevant_ids": ["faq#copyright"], "gold_page": "faq/general.html"},
    {"id": "oos", "question": "what bands are touring in my city", "answerable": False,
     "relevant_ids": []},
]  # fmt: skip


def test_the_subject_is_a_code_term_a_noun_phrase_or_a_name():
    assert split_subject(ROWS[1]["question"]).subject == "a tune.Tuner"
    assert split_subject(ROWS[0]["question"]).subject == "a string"
    assert split_subject(ROWS[3]["question"]).subject == "Python"
    assert split_subject("What is the difference between a task and a job?").subject == "a task"


def test_a_question_whose_rest_says_nothing_gets_no_follow_up():
    assert split_subject("What is Python?") is None
    assert split_subject("What’s a negative index?") is None


def test_the_pronoun_fits_the_subject_and_the_question():
    assert pronoun_for("a string", "How do I modify a string in place?") == "it"
    assert pronoun_for("ray dependencies", "how to install all ray dependencies at once") == "them"
    assert pronoun_for("Python", "Why is it called Python?") == "that"


def test_each_follow_up_leans_on_its_history_and_keeps_the_original_gold():
    rows = followup_rows(ROWS)
    followups = [r for r in rows if r["kind"] == FOLLOWUP]
    alone = {r["original_id"]: r for r in rows if r["kind"] == ALONE}
    assert {r["original_id"] for r in followups} == {"q1", "q2", "q3", "q4"}
    for row in followups:
        original = next(r for r in ROWS if r["id"] == row["original_id"])
        assert row["relevant_ids"] == original["relevant_ids"]
        assert row["question"] != original["question"]
        assert len(row["history"]) == 1
        # The retrieval's own test for "points back at the previous question".
        assert leans_on_history(str(row["question"])), row
        twin = alone[row["original_id"]]
        assert twin["question"] == original["question"] and "history" not in twin
    pronoun = next(r for r in followups if r["shape"] == "pronoun")
    subject = split_subject(str(pronoun["original_question"])).bare_subject
    assert subject in pronoun["history"][0] and subject not in pronoun["question"]


def test_make_followups_writes_a_file_evaluate_reads_and_the_same_on_a_re_run(tmp_path: Path):
    source = tmp_path / "queries.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    call_command("make_followups", queries=source, out=first, stdout=open("/dev/null", "w"))
    call_command("make_followups", queries=source, out=second, stdout=open("/dev/null", "w"))
    assert first.read_bytes() == second.read_bytes()
    queries = load_queries(first)
    assert {q.kind for q in queries} == {FOLLOWUP, ALONE}
    assert all(q.history for q in queries if q.kind == FOLLOWUP)
    assert all(q.answerable and q.relevant_ids for q in queries)
