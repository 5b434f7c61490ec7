"""The `ask` command's table of scored chunks: a chunk only the word search found has no
similarity to the question's vector, and one past the cross-encoder's reading no relevance."""

from __future__ import annotations

from assistant.management.commands.ask import candidate_line


def test_a_chunk_only_the_word_search_found_is_shown_without_a_similarity() -> None:
    found_by_words = {"kept": False, "relevance": 0.031, "similarity": None, "title": "Network"}
    unread = {"kept": False, "relevance": None, "similarity": 0.6364, "title": "Speed"}
    kept = {"kept": True, "relevance": 0.9912, "similarity": 0.7, "title": "x" * 90}

    assert candidate_line(found_by_words).split() == ["0.0310", "-", "Network"]
    assert candidate_line(unread).split() == ["-", "0.6364", "Speed"]
    assert candidate_line(kept).split() == ["yes", "0.9912", "0.7000", "x" * 70]
