"""A quote of the section that answers: from a sentence on, what belongs to it in its section
(the rest of its paragraph, the code or list it leads to, the chunks that follow it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from assistant.rag.types import Candidate, Chunk
from assistant.rag.units import Unit, passage_items

#: A quote goes on past its first paragraph (into the next one, or the code block or list
#: after it) while it has fewer words than this: a short lead ("Example: Run the tasks.add
#: task every 30 seconds.") says what follows, not the answer itself.
MIN_LEAD_WORDS = 25
#: A longer code block is not quoted (a whole module is no answer); the sentence before is.
MAX_CODE_LINES = 25
#: Code blocks a quote holds at most: an example, and the next step when one follows at once.
MAX_CODE_BLOCKS = 2


def introduces_code(items: Sequence[Unit], index: int) -> bool:
    """The item at `index` is a sentence ending with ":" right before a code block."""
    return (
        index + 1 < len(items)
        and items[index].kind == "sentence"
        and items[index].text.endswith(":")
        and items[index + 1].kind == "code"
    )


#: How many of the best sentences each start a quote the cross-encoder then reads whole.
WINDOW_CANDIDATES = 5
#: Only sentences this close to the best (in logits) start a quote to be read whole: one far
#: below (a follow-up's previous answer, scored down) is no candidate, whatever follows it.
WINDOW_MARGIN = 3.0


#: Chunk position offset of a following chunk's items when a section is read whole.
_CHAINED = 10_000


def section_items(
    passages: Sequence[Candidate], index: int, following: Sequence[Chunk] = ()
) -> list[Unit]:
    """The items of a passage, followed by those of the chunks cut after it from the same
    section (the same document and link, the next places in it), kept or `following`: a
    quote may go on where the chunk ends. The later chunks' items count as the first's (one
    source, one marker); a sentence two overlapping chunks share is read once."""
    first = passages[index].chunk
    chunks = [*(c.chunk for c in passages), *following]
    items = passage_items(index, first.text)
    seen = {u.text for u in items}
    ordinal, link = first.ordinal, 1
    while first.document and first.url and ordinal >= 0:
        follower = next(
            (c for c in chunks
             if c.document == first.document and c.url == first.url
             and c.ordinal == ordinal + 1),
            None,
        )  # fmt: skip
        if follower is None:
            break
        for unit in passage_items(index, follower.text):
            if unit.text not in seen:
                seen.add(unit.text)
                items.append(
                    replace(unit, position=unit.position + link * _CHAINED,
                            block=unit.block + link * _CHAINED)
                )  # fmt: skip
        ordinal, link = ordinal + 1, link + 1
    return items


def quote_from(items: Sequence[Unit], best: Unit, *, max_words: int, said: str = "") -> list[Unit]:
    """The best sentence and what follows it in its section while it belongs to it: the rest
    of its paragraph; the code block or list right after it; the next paragraph while the
    quote is short, its last sentence ends with ":" (it introduces what follows), or the next
    paragraph is a sentence introducing code. It stops after a code block (the code a lead
    introduces is the answer it leads to) unless a sentence introducing the next step's code
    follows at once, at the next API entry, a code block too long to quote, or `max_words` of
    prose. The first
    sentence of an API entry's definition comes with the entry's signature. What a follow-up's
    previous answer already said is not said again."""
    at = next((i for i, u in enumerate(items) if u.position == best.position), None)
    if at is None:
        return [best]
    quote = [items[at]]
    if items[at].kind == "sentence" and at > 0 and items[at - 1].kind == "term":
        quote.insert(0, items[at - 1])
    words = sum(len(u.text.split()) for u in quote)
    block, last, codes = items[at].block, items[at], 0
    for index in range(at + 1, len(items)):
        item = items[index]
        if item.kind == "term":
            break
        if item.kind == "code":
            if item.text.count("\n") - 1 > MAX_CODE_LINES:
                break
            quote.append(item)
            last, codes = item, codes + 1
            # The code a lead introduces ends the quote, unless a next step follows at once
            # ("To do that, set files to a list of tuples:" and its code).
            if codes >= MAX_CODE_BLOCKS or not introduces_code(items, index + 1):
                break
            continue
        if item.block != block:
            if not (
                last.text.endswith(":") or words < MIN_LEAD_WORDS or introduces_code(items, index)
            ):
                break
            block = item.block
        if said and item.text in said:
            continue
        length = len(item.text.split())
        if words + length > max_words:
            break
        quote.append(item)
        words += length
        last = item
    return quote
