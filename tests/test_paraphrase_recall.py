"""The paraphrase-recall replay: each rule keeps what the gate keeps, and the shares it reports
are counted from the probed candidates."""

from __future__ import annotations

from measuring.evaluation.paraphrase import curve, keyword_form


def candidate(relevance: float, *, gold: bool = False, keywords: float = 0.0) -> dict:
    return {"relevance": relevance, "similarity": 0.8, "gold": gold, "bare": relevance,
            "keywords": keywords, "title": 0.0}  # fmt: skip


ROWS = [
    # A paraphrase: the gold passage is read but scores 0.002 as asked, 0.7 by its key words.
    {"id": "a1", "kind": "", "answerable": True, "form": "question",
     "candidates": [candidate(0.002, gold=True, keywords=0.7), candidate(0.001)]},
    {"id": "a2", "kind": "", "answerable": True, "form": "question",
     "candidates": [candidate(0.9, gold=True)]},
    {"id": "o1", "kind": "", "answerable": False, "form": "question",
     "candidates": [candidate(0.0001, keywords=0.3)]},
]  # fmt: skip


def test_keyword_form_keeps_the_content_words_in_order():
    assert keyword_form("Can I switch to a cheaper plan in the middle of the month?") == (
        "switch cheaper plan middle month"
    )


def test_the_curve_counts_what_each_rule_wins_and_lets_through():
    curves = curve(ROWS)
    at = {name: {p["t"]: p for p in points} for name, points in curves.items()}
    today = at["gate threshold"][0.5]
    assert today["answered"] == 0.5 and today["lost_with_gold"] == 0.5 and today["refused"] == 1.0
    recovered = at["+ keywords"][0.5]
    assert recovered["answered"] == 1.0 and recovered["lost_with_gold"] == 0.0
    assert recovered["refused"] == 1.0
    loose = at["+ keywords"][0.2]
    assert loose["refused"] == 0.0  # the out-of-scope question's key words pass at 0.2
