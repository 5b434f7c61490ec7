"""The page topic `evaluate` sends with each question: the gold page's docs area (auto), none,
or another area (other: the widget opened on a page about something else)."""

from __future__ import annotations

from measuring.evaluation.dataset import Query, known_areas, topic_for

DOCS = "https://docs.ray.io/en/master/"


def query(id_: str, page: str = "") -> Query:
    return Query(id_, "q", frozenset({page} if page else set()), bool(page), gold_page=page)


QUERIES = [
    query(f"q{i}", f"{DOCS}{area}/x.html") for i, area in enumerate(["serve", "tune", "data"])
]


def test_each_mode_sends_its_topic() -> None:
    areas = known_areas(QUERIES)
    assert areas == ["data", "serve", "tune"]
    serve = QUERIES[0]
    assert topic_for(serve, areas, "auto") == "serve"
    assert topic_for(serve, areas, "none") == ""
    others = {topic_for(query(f"s{i}", f"{DOCS}serve/y.html"), areas, "other") for i in range(40)}
    assert others == {"data", "tune"}  # never the gold's own area, and spread over the others
    assert topic_for(serve, areas, "other") == topic_for(serve, areas, "other")
    # A question without a gold page (out of scope) gets the same area either way.
    unanswerable = query("oos-7")
    assert topic_for(unanswerable, areas, "auto") == topic_for(unanswerable, areas, "other")
    assert topic_for(unanswerable, areas, "auto") in areas


def test_a_question_asked_on_a_page_sends_that_page_s_topic() -> None:
    """A widget set gives the page each question was asked on; a site run sends only those."""
    areas = known_areas(QUERIES)
    leaning = Query("w1", "How long are they valid?", frozenset({f"{DOCS}serve/t.html"}), True,
                    gold_page=f"{DOCS}serve/t.html", topic="Retrieval endpoint tokens")  # fmt: skip
    for mode in ("auto", "other", "given"):
        assert topic_for(leaning, areas, mode) == "Retrieval endpoint tokens"
    assert topic_for(leaning, areas, "none") == ""
    assert topic_for(QUERIES[0], areas, "given") == ""  # no topic of its own: none is sent
