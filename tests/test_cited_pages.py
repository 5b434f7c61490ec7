"""The pages a chat door lists under an answer (assistant/ask/pages.py)."""

from __future__ import annotations

from assistant.ask.pages import cited_pages


def test_each_page_once_under_the_number_the_answer_cites_it_by():
    sources = [
        {"n": 1, "title": "Retries", "url": "https://docs.example/retries#a"},
        {"n": 2, "title": "Retries", "url": "https://docs.example/retries#a"},  # same section
        {"n": 3, "title": "Timeouts", "url": "https://docs.example/timeouts"},
    ]
    assert cited_pages(sources) == [
        (1, "https://docs.example/retries#a", "Retries"),
        (3, "https://docs.example/timeouts", "Timeouts"),
    ]


def test_related_pages_which_nobody_cites_are_numbered_in_their_order():
    related = [{"title": "Billing", "url": "https://docs.example/billing"}, {"title": "Upload"}]
    assert cited_pages(related) == [
        (1, "https://docs.example/billing", "Billing"),
        (2, "", "Upload"),
    ]
