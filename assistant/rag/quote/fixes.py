"""The fix, not the problem: tutorials tell the symptom before what to type, so a quote of the
symptom goes on to the sentence or block that names the command, option or identifier."""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.rag.quote.sections import MAX_CODE_LINES, introduces_code
from assistant.rag.quote.text import CODE_SPAN, whole_text
from assistant.rag.reading.scoring import SentenceScorer, logit, read_for
from assistant.rag.reading.units import Unit
from assistant.rag.types import Candidate, Question

#: How many units past the quote's end the sentence or block that names the fix may be.
FIX_REACH = 5
#: How many words it (with its lead) may add: the fix is the answer, not a second topic.
FIX_WORDS = 60
#: How many sentences further on in the section are read whole after the quote as its fix.
FIX_OPTIONS = 4
#: A sentence that tells the reader what to do ("we can tell Rust to ... with `--show-output`",
#: "To do that, we add the outer attribute `#[derive(Debug)]`", "Use `Session.mount`"), not
#: one that describes ("Note that nowhere in this output do we see `I got the value 4`").
_INSTRUCTS = re.compile(
    r"\b(?:you|we|one) (?:can|could|should|must|may|need to|have to|want to)\b"
    r"|\b(?:use|add|set|pass|run|call|specify|enable|disable|configure|install|import|put|"
    r"replace|change|declare|define|mark|write|type)\b",
    re.IGNORECASE,
)
#: A lead that introduces what a run shows ("When we run these tests with `cargo test`, we'll
#: see the following output:"): its block is the problem's output, not the fix.
_SHOWS_OUTPUT = re.compile(
    r"\b(?:output|(?:you|we)(?:'ll| will| should) see|(?:prints?|displays?|looks? like)\b.*:$)",
    re.IGNORECASE,
)


def _shows_output(lead: Unit) -> bool:
    return bool(_SHOWS_OUTPUT.search(lead.text))


def names_something(unit: Unit, question: Question | None = None) -> bool:
    """A code block, an API entry's signature, or a unit with a `code span`: what names the
    command, option or identifier a reader types. With `question`, only a span the question
    does not name already: "My tests print things with println! ..." is not answered by a
    sentence that says what `println!` does in a test."""
    if unit.kind in ("code", "term") or unit.code:
        return True
    spans = (m.group(0).strip("`") for m in CODE_SPAN.finditer(unit.text))
    asked = question.text.casefold() if question is not None else None
    return any(asked is None or span.casefold() not in asked for span in spans)


def on_to_the_fix(
    quote: list[Unit],
    said: str,
    items: dict[int, list[Unit]],
    question: Question,
    passages: Sequence[Candidate],
    scorer: SentenceScorer,
) -> list[Unit]:
    """Tutorials tell the problem before the fix: a quote of its section that names nothing
    the question does not (a symptom, "This causes problems with ETA tasks ...", "we won't
    see the `println!` output") is followed by the fix. The first unit within `FIX_REACH`
    that names something (`_next_fix`) is the fix. With none that close, the sentences
    further on that tell what to do (`_section_fixes`) are read whole after the quote by the
    cross-encoder, and the best is added if the quote then reads better than alone ("If we
    want to see printed values for passing tests as well, we can ... with `--show-output`"
    after the failing run and its output). The fix close by is not put to that reading: it
    shares fewer of the symptom's words than a sentence that describes it again ("So that
    the file does not get removed the next time you deploy" over "You need to add a `CNAME`
    file")."""
    if any(names_something(u, question) for u in quote):
        return quote
    near = _next_fix(quote, said, items, question)
    if near:
        return [*quote, *near]
    options = _section_fixes(quote, said, items, question)
    if not options:
        return quote
    texts = [whole_text(quote, passages), *(whole_text([*quote, *f], passages) for f in options)]
    read = [logit(p) for p in read_for(question, texts, scorer)]
    best = max(range(len(options)), key=lambda i: read[i + 1])
    return [*quote, *options[best]] if read[best + 1] > read[0] else quote


def _after_quote(quote: list[Unit], items: dict[int, list[Unit]]) -> tuple[list[Unit], int]:
    """The items of the quote's section and the index of its last unit there (-1: not there)."""
    found = items.get(quote[0].passage, [])
    at = next((i for i, u in enumerate(found) if u.position == quote[-1].position), -1)
    return found, at


def _with_block(found: list[Unit], index: int) -> list[Unit] | None:
    """The sentence at `index` with the code block it introduces; None when that block is not
    at hand, too long to quote (a lead that says "the following" of nothing), or output."""
    unit = found[index]
    if not introduces_code(found, index):
        return None if unit.text.endswith(":") else [unit]
    block = found[index + 1]
    if block.text.count("\n") - 1 > MAX_CODE_LINES or _shows_output(unit):
        return None
    return [unit, block]


def _section_fixes(
    quote: list[Unit], said: str, items: dict[int, list[Unit]], question: Question
) -> list[list[Unit]]:
    """The first few sentences after the quote in its section (`FIX_OPTIONS`, read on into
    the chunks that follow it) that tell the reader what to do (`_INSTRUCTS`) and name
    something the question does not, each with the code block it introduces: the fix may lie
    further on than `FIX_REACH`, past the failing run and its output."""
    found, at = _after_quote(quote, items)
    if at < 0:
        return []
    options: list[list[Unit]] = []
    for index in range(at + 1, len(found)):
        unit = found[index]
        if unit.kind == "term" or len(options) == FIX_OPTIONS:
            break
        if unit.kind != "sentence" or (said and unit.text in said):
            continue
        if len(unit.text.split()) > FIX_WORDS or not _INSTRUCTS.search(unit.text):
            continue
        fix = _with_block(found, index)
        if fix is not None and any(names_something(u, question) for u in fix):
            options.append(fix)
    return options


def _next_fix(
    quote: list[Unit], said: str, items: dict[int, list[Unit]], question: Question
) -> list[Unit]:
    """The first unit within `FIX_REACH` of the quote's end in its section that names
    something, with the sentence that introduces it ("You can increase this timeout by
    configuring a transport option with the same name:" and `broker_transport_options =
    {...}`); what lies between is left out. None that close, or too long: none."""
    found, at = _after_quote(quote, items)
    if at < 0:
        return []
    for index in range(at + 1, min(len(found), at + 1 + FIX_REACH)):
        unit = found[index]
        if unit.kind == "term" or (said and unit.text in said):
            return []
        if not names_something(unit, question):
            continue
        if unit.kind == "sentence" and not _INSTRUCTS.search(unit.text):
            continue  # "Note that nowhere in this output do we see `I got the value 4`"
        if unit.kind == "code":
            # A block is the fix only with the sentence that says what it does ("You can
            # increase this timeout by configuring ...:"); one without is an example of
            # the problem as often as of the fix.
            if not (index - 1 > at and introduces_code(found, index - 1)):
                continue
            if _shows_output(found[index - 1]):
                continue
            if unit.text.count("\n") - 1 > MAX_CODE_LINES:
                return []
        if unit.kind == "code":
            fix = [found[index - 1], unit]
        else:
            sentence = _with_block(found, index)  # read with its block, or not at all
            if sentence is None:
                continue
            fix = sentence
        if sum(len(u.text.split()) for u in fix if u.kind != "code") > FIX_WORDS:
            return []
        return fix
    return []
