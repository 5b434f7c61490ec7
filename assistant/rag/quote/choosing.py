"""Which quote answers: from each of the best few sentences the quote of its section, read
whole by the cross-encoder, the best going on into the paragraphs that still answer, and up to
two quotes of other sections that read about as relevant; in prose, the near-best sentences."""

from __future__ import annotations

from collections.abc import Sequence

from assistant.rag.quote.fixes import on_to_the_fix
from assistant.rag.quote.sections import WINDOW_CANDIDATES, WINDOW_MARGIN, quote_from
from assistant.rag.quote.text import CODE_SPAN, whole_text
from assistant.rag.reading.scoring import SentenceScorer, logit, read_for
from assistant.rag.reading.units import Unit
from assistant.rag.types import Candidate, Question

#: Quotes of other sections an answer from structured documentation may add to its first
#: (`_more`), how far below the first they may read (logits), and their
#: length in words. Chosen on the realistic Celery and Requests dev sets by key facts held:
#: none 0.35 / 0.425; two within 3 logits 0.50 / 0.525 (ROUGE-L 0.368 -> 0.410, 0.549 ->
#: 0.555); only quotes showing code the first lacks 0.475 / 0.525.
MORE_QUOTES = 2
MORE_MARGIN = 3.0
MORE_WORDS = 60
#: The first quote starts in a passage the gate read within this many logits of its best.
PASSAGE_MARGIN = 2.0


def best_quote(
    scored: list[tuple[Unit, float]],
    said: str,
    items: dict[int, list[Unit]],
    max_words: int,
    question: Question,
    passages: Sequence[Candidate],
    *,
    scorer: SentenceScorer,
    margin: float,
    max_units: int,
) -> list[Unit]:
    """The quote that answers best: from each of the best few sentences, the quote
    `quote_from` makes; the cross-encoder reads each whole (its code included) and the best
    wins, the sentence's own score breaking ties. A sentence alone may score high for
    naming the question's words ("wait forever for a response" for different connect and
    read timeouts) where the quote that answers shows how ("Specify a tuple: ...")."""
    # Documentation with structure in what was kept (code, lists, API entries) is quoted
    # by section; prose (an encyclopedia's passage, a help centre's page) by its near-best
    # sentences, each with the code it leads to: ClapNQ ROUGE-L 0.608 so, 0.549 by
    # section; in prose the answering sentence may stand apart from the best-scoring one
    # ("Students get 50% off" beside "The student discount is renewed every year").
    structured = any(
        u.kind != "sentence" or CODE_SPAN.search(u.text) for found in items.values() for u in found
    )
    if not structured:
        return _picked(scored, said, items, max_words, margin=margin, max_units=max_units)
    quotes: list[tuple[list[Unit], float]] = []
    better: set[Unit] = set()  # the sentences ranked above the one being read
    trusted = _trusted(scored, passages)
    for rank, (unit, score) in enumerate(trusted[:WINDOW_CANDIDATES]):
        if rank and (score < trusted[0][1] - WINDOW_MARGIN or (said and unit.text in said)):
            continue
        found = items.get(unit.passage, [])
        quote = quote_from(found, unit, max_words=max_words, said=said) if found else [unit]
        lead = _lead_in(found, quote[0])
        if lead is not None:
            # A chunk that is only code (an example's rest, cut off from its lead) is read as
            # one unit, but a quote starts with words: with the sentence that leads into it.
            quote = quote_from(found, lead, max_words=max_words, said=said)
        # A quote that holds a better sentence than the one it starts from is that
        # sentence's quote with words before it: the better sentence starts its own.
        if any(u in better for u in quote[1:]) or quote[0].kind == "code":
            better.add(unit)
            continue
        if all(quote != other for other, _ in quotes):
            quotes.append((quote, score))
        better.add(unit)
    if not quotes:
        quotes = [([trusted[0][0]], trusted[0][1])]
    # Quotes that differ only in prose are told apart by their best sentence: read whole,
    # a quote dense with the question's words ("The student discount is renewed ...")
    # outscores the one that answers ("Students get 50% off"). Where a quote shows code, a
    # list or an API entry, reading it whole sees what the sentence alone cannot.
    shown = any(u.kind != "sentence" for q, _ in quotes for u in q)
    if len(quotes) > 1 and shown:
        texts = [whole_text(q, passages) for q, _ in quotes]
        read = read_for(question, texts, scorer)
        # max() keeps the first of equals: the quote of the better sentence.
        quote = max(zip(quotes, read, strict=True), key=lambda pair: pair[1])[0][0]
    else:
        quote = quotes[0][0]
    quote = _read_on(quote, scored, said, items, max_words, margin)
    quote = on_to_the_fix(quote, said, items, question, passages, scorer)
    return [*quote, *_more(quote, scored, said, items, question, passages, scorer)]


def _trusted(
    scored: list[tuple[Unit, float]], passages: Sequence[Candidate]
) -> list[tuple[Unit, float]]:
    """The sentences of the passages the relevance gate read about as well as its best
    (within `PASSAGE_MARGIN` logits): a sentence that repeats the question's words in a
    passage read far lower ("Assuming that customer records are stored in the "customers"
    table ..." of a requirements list at 0.80, beside the foreign-key guide at 0.98) does not
    start the quote."""
    relevance = [logit(c.relevance) if c.relevance is not None else None for c in passages]
    known = [r for r in relevance if r is not None]
    if not known:
        return scored
    floor = max(known) - PASSAGE_MARGIN
    kept = [(u, s) for u, s in scored if (r := relevance[u.passage]) is None or r >= floor]
    return kept or scored


def _lead_in(found: Sequence[Unit], first: Unit) -> Unit | None:
    """The sentence right before `first` in its section, when `first` is a code block."""
    if first.kind != "code":
        return None
    at = next((i for i, u in enumerate(found) if u.position == first.position), 0)
    before = found[at - 1] if at > 0 else None
    return before if before is not None and before.kind == "sentence" else None


def _read_on(
    quote: list[Unit],
    scored: list[tuple[Unit, float]],
    said: str,
    items: dict[int, list[Unit]],
    max_words: int,
    margin: float,
) -> list[Unit]:
    """The quote goes on into the next paragraphs of its section while each holds a
    sentence that reads nearly as relevant as the best (within `margin` logits): an
    answer told over several paragraphs ("The implementation uses a contiguous array ...",
    then "When items are appended ...") is quoted whole, one that ends is not padded."""
    found = items.get(quote[0].passage, [])
    near = {
        u.position
        for u, score in scored
        if u.passage == quote[0].passage and score >= scored[0][1] - margin
    }
    at = next((i for i, u in enumerate(found) if u.position == quote[-1].position), None)
    if at is None:
        return quote
    words = sum(len(u.text.split()) for u in quote if u.kind != "code")
    blocks: dict[int, list[Unit]] = {}
    for item in found[at + 1 :]:
        if item.kind == "term":
            break
        blocks.setdefault(item.block, []).append(item)
    extended = list(quote)
    for block in blocks.values():
        if not any(u.position in near for u in block):
            break
        texts = [u for u in block if not (said and u.text in said)]
        length = sum(len(u.text.split()) for u in texts if u.kind != "code")
        if words + length > max_words:
            break
        extended += texts
        words += length
    return extended


def _more(
    quote: list[Unit],
    scored: list[tuple[Unit, float]],
    said: str,
    items: dict[int, list[Unit]],
    question: Question,
    passages: Sequence[Candidate],
    scorer: SentenceScorer,
) -> list[Unit]:
    """Quotes of other passages that read about as relevant as the first, read whole: the
    cross-encoder's scores crowd near 1 on documentation (the guide's "prefetch multiplier
    of one" and the setting's own entry `worker_prefetch_multiplier` both read 0.99), so
    the section that answers may be the second, or the next chunk of the same section
    ("the headers the server sent back" beside "the headers we sent": `r.request.headers`).
    Each starts at its passage's best sentence and leaves out what is quoted already; at
    most `MORE_QUOTES`, one per section, each within `MORE_MARGIN` logits of the first
    quote and relevant on its own (the gate's 0.5)."""
    quoted = {u.text for u in quote}
    sections: set[str] = set()  # one more quote per section at most
    others: list[list[Unit]] = []
    for passage in sorted(items):
        url = passages[passage].chunk.url
        # Its best sentence not quoted yet: overlapping chunks share a sentence, and the
        # shared one may be the best of both; what the other chunk adds is its own.
        fresh = (u for u, _ in scored if u.passage == passage and u.text not in quoted)
        best = next((u for u in fresh if not (said and u.text in said)), None)
        if passage == quote[0].passage or url in sections or best is None:
            continue
        more = quote_from(items[passage], best, max_words=MORE_WORDS, said=said)
        more = [u for u in more if u.text not in quoted]
        if more and more[0].kind != "code":  # a quote starts with words
            sections.add(url)
            others.append(more)
    if not others:
        return []
    whole = [quote, *others]
    read = read_for(question, [whole_text(q, passages) for q in whole], scorer)
    floor = max(0.0, logit(read[0]) - MORE_MARGIN)
    near = [q for q, p in zip(others, read[1:], strict=True) if logit(p) >= floor]
    return [unit for q in near[:MORE_QUOTES] for unit in q]


def _picked(
    scored: list[tuple[Unit, float]],
    said: str,
    items: dict[int, list[Unit]],
    max_words: int,
    *,
    margin: float,
    max_units: int,
) -> list[Unit]:
    """The near-best sentences (prose: the answer is in the sentences that score near the
    best, ClapNQ's kind), each with the API signature or the sentences it points back to
    before it (ClapNQ ROUGE-L 0.607 so, 0.608 without: it reads whole, at no cost) and the
    code block it leads to."""
    picked: list[Unit] = []
    for unit in _choose(scored, said, max_units, max_words, margin):
        found = items.get(unit.passage, [])
        quote = quote_from(found, unit, max_words=max_words, said=said) if found else [unit]
        start = next((i for i, u in enumerate(quote) if u.position == unit.position), len(quote))
        code = next((i for i, u in enumerate(quote) if u.kind == "code"), None)
        picked += quote[:start]  # its signature, or what it points back to
        picked += quote[start : code + 1] if code is not None else [unit]
    return picked


def _choose(
    scored: list[tuple[Unit, float]], said: str, max_units: int, max_words: int, margin: float
) -> list[Unit]:
    best = scored[0][1]
    # Others only when the cross-encoder rates them nearly as high: in logits, because its
    # probabilities crowd near 1 (0.998 answers, 0.876 is a shipping sentence on topic), so
    # a passage none of whose sentences comes close adds nothing. Of those near the best,
    # each passage's best sentence comes first: when a page's sentences all share its topic
    # ("the student discount ..."), the one that answers may be the only one of its chunk.
    # Margin and count: the best of a sweep on ClapNQ dev by ROUGE-L (0.59 vs 0.60 without
    # the passage-first order, which is within noise).
    near = [unit for unit, score in scored if score >= best - margin]
    if said:
        # A follow-up reads the passages of the previous answer again: what it already
        # quoted is left out, but for the sentence that answers best (the refund sentence
        # that holds "5 to 10 business days" answers "How long does it take?" too).
        near = [near[0], *(u for u in near[1:] if u.text not in said)]
    firsts: list[Unit] = []  # each passage's best sentence, in order of score
    for unit in near:
        if all(unit.passage != first.passage for first in firsts):
            firsts.append(unit)
    chosen = [firsts[0]]  # the sentence that carries the answer, whatever its length
    words = len(firsts[0].text.split())
    for unit in [*firsts[1:], *(u for u in near if u not in firsts)]:
        length = len(unit.text.split())
        if len(chosen) >= max_units or words + length > max_words:
            continue
        chosen.append(unit)
        words += length
    return chosen
