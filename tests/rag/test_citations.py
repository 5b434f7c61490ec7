"""Citation markers renumbered from [1] in the order an answer cites (rag/write/citations.py)."""

from __future__ import annotations

from assistant.rag.write.citations import renumbered, uncited


def test_markers_count_from_one_in_the_order_the_answer_cites():
    text, order = renumbered("Set the timeout [3]. Retries back off [2], then stop [3].", 4)
    assert text == "Set the timeout [1]. Retries back off [2], then stop [1]."
    assert order == [3, 2, 1, 4]  # the cited sources first, then the others as they were


def test_code_and_numbers_beyond_the_sources_are_left_as_written():
    code = "```python\nfirst = items[1]\n```"
    text, order = renumbered(f"Index with `items[2]` [2]:\n\n{code}\n\nSee [7] and [2].", 2)
    assert text == f"Index with `items[2]` [1]:\n\n{code}\n\nSee [7] and [1]."
    assert order == [2, 1]


def test_an_answer_citing_in_order_is_unchanged():
    answer = "Install it [1]. Log in [2]."
    assert renumbered(answer, 3) == (answer, [1, 2, 3])
    assert renumbered("No markers at all.", 2) == ("No markers at all.", [1, 2])


def test_uncited_drops_the_markers_and_leaves_code_as_written():
    code = "```\n>>> r.history\n[<Response [301]>]\n```"
    assert uncited(f"Follow it [1]:\n\n{code}\n\nSee `items[2]` [2].") == (
        f"Follow it:\n\n{code}\n\nSee `items[2]`."
    )
