"""A quote of the section that answers: from a sentence on, what belongs to it in its section
(the rest of its paragraph, the code or list it leads to, the chunks that follow it)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from assistant.rag.quote.text import names_code
from assistant.rag.reading.units import Unit, passage_items
from assistant.rag.types import Candidate, Chunk

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
    passages: Sequence[Candidate], index: int, neighbours: Sequence[Chunk] = ()
) -> list[Unit]:
    """The items of a passage, preceded by those of the chunk cut right before it from the same
    section and followed by those of the chunks cut after it (the same document and link, the
    next places in it), kept or `neighbours`: a quote may start with what its first sentence
    points back to, and go on where the chunk ends. The other chunks' items count as the
    passage's own (one source, one marker); a sentence two overlapping chunks share is read
    once, and a code block the chunker cut between chunks is one block again (`_joined`)."""
    first = passages[index].chunk
    chunks = [*(c.chunk for c in passages), *neighbours]
    items = passage_items(index, first.text)
    seen = {u.text for u in items}

    def place(ordinal: int) -> Chunk | None:
        return next(
            (c for c in chunks
             if c.document == first.document and c.url == first.url and c.ordinal == ordinal),
            None,
        )  # fmt: skip

    if first.document and first.url and first.ordinal > 0:
        before = place(first.ordinal - 1)
        if before is not None:
            earlier = [u for u in passage_items(index, before.text) if u.text not in seen]
            earlier = [
                replace(unit, position=unit.position - _CHAINED, block=unit.block - _CHAINED)
                for unit in earlier
            ]
            items = _joined(earlier, items, cut=_cut_between(before, first))
            seen.update(u.text for u in earlier)
    ordinal, link, last = first.ordinal, 1, first
    while first.document and first.url and ordinal >= 0:
        follower = place(ordinal + 1)
        if follower is None:
            break
        later: list[Unit] = []
        for unit in passage_items(index, follower.text):
            if unit.text not in seen:
                seen.add(unit.text)
                later.append(
                    replace(unit, position=unit.position + link * _CHAINED,
                            block=unit.block + link * _CHAINED)
                )  # fmt: skip
        items = _joined(items, later, cut=_cut_between(last, follower))
        ordinal, link, last = ordinal + 1, link + 1, follower
    return items


def _cut_between(chunk: Chunk, following: Chunk) -> bool:
    """The chunk ends with a code block and the next one starts with one: the chunker cut a
    block between lines there, fencing each part again (chunking/pieces.py). A short line
    between two blocks ("or persistent:") is no sentence to quote, but it parts them."""
    return chunk.text.rstrip().endswith("```") and following.text.lstrip().startswith("```")


def _joined(items: list[Unit], later: list[Unit], *, cut: bool) -> list[Unit]:
    """`later` (the items of the next chunk of the section) after `items`. Where the chunker
    `cut` a code block between the two chunks (an example of 27 lines in three chunks), its
    parts are one block again while it stays quotable (`MAX_CODE_LINES`), the last part taken
    up to a blank line within the limit (whole statements, not half a call), the rest left a
    block of its own."""
    if not (cut and items and later and items[-1].kind == "code" and later[0].kind == "code"):
        return [*items, *later]
    head, tail = items[-1].text.splitlines(), later[0].text.splitlines()
    if head[0] != tail[0]:  # another language's fence: two blocks
        return [*items, *later]
    body, more = head[1:-1], tail[1:-1]
    room = MAX_CODE_LINES - len(body)
    take = len(more) if len(more) <= room else _last_blank(more[: room + 1])
    if take <= 0:
        return [*items, *later]
    # The joined block stands where the passage's own part stood: a sentence-less chunk of
    # code is read as one unit (units_of) and is looked up by its place.
    own = next((u for u in (items[-1], later[0]) if 0 <= u.position < _CHAINED), items[-1])
    joined = replace(
        own, text="\n".join([head[0], *body, *more[:take], head[-1]]), block=items[-1].block
    )
    rest = more[take:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    if not rest:
        return [*items[:-1], joined, *later[1:]]
    left = replace(later[0], text="\n".join([tail[0], *rest, tail[-1]]))
    return [*items[:-1], joined, left, *later[1:]]


def _last_blank(lines: Sequence[str]) -> int:
    """How many of `lines` come before the last blank one (0 when none is blank)."""
    return next((i for i in range(len(lines) - 1, -1, -1) if not lines[i].strip()), 0)


#: A sentence that opens by pointing back ("This causes problems ...", "So if you're making
#: several requests ...", "At this point only the headers ...", "To use these, ...") or with
#: an example of what was said ("For example, to change the color of the headers, create a
#: file called `extra.css`" after "The extra_css ... options can be used to make tweaks")
#: says half of what it means: the quote starts with the sentence it points to. Not an "it"
#: that points ahead ("It should be noted that ...", "It is recommended to ...").
_POINTS_BACK = re.compile(
    r"(?:This|These|That|Those|It(?!(?:'s| is| was|(?: should| may| might| can| would| will)"
    r" be)(?: [\w*_]+){1,4}? (?:to|that)\b)|Its|They|Their|So|Thus|Hence|Therefore|Then|Also|"
    r"However|But|Otherwise|Such|Instead|Alternatively|Consequently|Likewise|Similarly|Furthermore|"
    r"Moreover|In (?:this|that|such a|either|both) cases?|At this point|As a result|"
    r"For this reason|To do (?:so|that)|To \w+ (?:this|these|those|it|them)|This way|"
    r"In addition|For (?:example|instance))\b"
)


def _points_back(item: Unit) -> bool:
    return item.kind == "sentence" and _POINTS_BACK.match(item.text) is not None


#: How many sentences a quote reaches back for what its first one points to.
MAX_ANTECEDENTS = 2


def _follows_example(items: Sequence[Unit], at: int) -> bool:
    """The item at `at` is a sentence right after a code block that a sentence ending with ":"
    introduces, short enough to quote."""
    return (
        at >= 2
        and items[at].kind == "sentence"
        and introduces_code(items, at - 2)
        and items[at - 1].text.count("\n") - 1 <= MAX_CODE_LINES
    )


def _lead_of(items: Sequence[Unit], at: int, said: str) -> list[Unit]:
    """What the item at `at` starts from: the signature of the API entry it belongs to (not a
    field of it in words, "Parameters") with the entry's first sentence, its summary
    ("Returns True if status_code is less than 400" before "This is not a check for 200 OK");
    the example right before it with its lead; or the sentences before it that a sentence
    pointing back needs, or the code block it points back to with its lead."""
    term = next((i for i in range(at - 1, -1, -1) if items[i].kind != "sentence"), None)
    if (
        items[at].kind == "sentence" and term is not None and items[term].kind == "term"
        and names_code(items[term].text)
    ):  # fmt: skip
        start = [items[term]]
        if term + 1 < at:
            start.append(items[term + 1])
        return start
    lead: list[Unit] = []
    i = at
    # Right after an example its lead introduces, a sentence reads on it as one that points
    # back does ("Save your changes, and you'll see the ReadTheDocs theme being used." after
    # the `theme:` it says to add): the example is what it speaks of.
    while (
        len(lead) < MAX_ANTECEDENTS and i > 0
        and (_points_back(items[i]) or (i == at and _follows_example(items, at)))
    ):  # fmt: skip
        previous = items[i - 1]
        if said and previous.text in said:
            break
        if previous.kind == "code":
            lead_in = items[i - 2] if i >= 2 and introduces_code(items, i - 2) else None
            if lead_in is not None and not (said and lead_in.text in said):
                lead[:0] = [lead_in, previous]
            break
        if previous.kind != "sentence":
            break
        lead.insert(0, previous)
        i -= 1
    return lead


def quote_from(items: Sequence[Unit], best: Unit, *, max_words: int, said: str = "") -> list[Unit]:
    """The best sentence and what follows it in its section while it belongs to it: the rest
    of its paragraph; the code block or list right after it; the next paragraph while the
    quote is short, its last sentence ends with ":" (it introduces what follows), or the next
    paragraph is a sentence introducing code or points back at the quote ("So you have to
    ..."). It stops after a code block (the code a lead
    introduces is the answer it leads to) unless a sentence introducing the next step's code
    follows at once, at the next API entry, a code block too long to quote, or `max_words` of
    prose. A sentence of an API entry's definition comes after the entry's signature and first
    sentence; one right after an example after the example and its lead; one that points back
    ("So if ...", "At this point ...") after what it points to (`_lead_of`). What a
    follow-up's previous answer already said is not said again."""
    at = next((i for i, u in enumerate(items) if u.position == best.position), None)
    if at is None:
        return [best]
    # What the sentence starts from is context: `max_words` counts from the sentence on, but
    # a quote with its context is no short lead.
    lead = _lead_of(items, at, said)
    quote = [*lead, items[at]]
    words = len(items[at].text.split())
    context = sum(len(u.text.split()) for u in lead if u.kind != "code")
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
            # The next paragraph belongs to the quote when the quote introduces it, is still
            # short, or when it points back at the quote ("So you have to increase the
            # visibility timeout ..." after what the timeout causes).
            goes_on = last.text.endswith(":") or context + words < MIN_LEAD_WORDS
            if not (goes_on or introduces_code(items, index) or _points_back(item)):
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
