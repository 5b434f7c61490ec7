"""Grounded words first, the written answer after.

A model on a busy two-core server may take a minute to start, stall between tokens, or run
out of tokens mid-sentence; the quoted answer is made in milliseconds from the same passages.
So when the passages answer the question (the answerability check), the visitor gets the
quote at once, then `Written`, then the model's answer sentence by sentence, each checked
against the passages before it leaves (write/grounding.py): a sentence's tokens are sent
only once it passed, so the visitor never sees one taken back. Whatever stops the model (busy,
a stall, the length limit, a refusal, nothing grounded left) ends the written part with `Unwritten`
and the quote stands. A written answer that leaves out a name the quote gives (an option, an
identifier, a command: what the reader came to copy) is shown under the quote but does not
replace it where an answer is given in one piece (`written: omits`). When the check finds no
answer in the passages there is nothing to quote: the model writes alone, checked the same
way, and a failure before its first sentence is the sorry-sentence.

Closing these parts closes the model's stream: llama.cpp or Ollama stops its work, and a
question still in the local model's line leaves it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from assistant.rag.answer import Fallback, is_refusal
from assistant.rag.ports import GeneratorBusy, GeneratorUnavailable
from assistant.rag.types import SORRY, Cut, Outcome, Part, Prompt, Unwritten, Waiting, Written
from assistant.rag.write.grounding import (
    Sentences,
    attributed,
    grounds,
    leads_in,
    left_out,
    names,
    says_nothing,
    why_withheld,
)

#: How often a sentence being written is reported (`Waiting`) while its words are held.
HEARTBEAT_SECONDS = 1.0


def quote_then_write(
    writer: str,
    prompt: Prompt,
    parts: Iterator[Part],
    fallback: Fallback,
    *,
    origins: Iterable[str] = (),
) -> Iterator[Part]:
    """The quote, `Written`, then the checked written answer of `writer` (the model's id) or
    `Unwritten`, and the `Outcome`."""
    quote: list[str] = []
    written: list[str] = []
    withheld: list[str] = []
    ended: Unwritten | None = None
    try:
        for part in fallback.generator.stream(prompt):
            if isinstance(part, str):
                quote.append(part)
            yield part
        yield Written()
        for part in checked(prompt, parts, withheld, alone=False, origins=origins):
            if isinstance(part, Unwritten):
                ended = part
            elif isinstance(part, str):
                written.append(part)
            yield part
    finally:
        _close(parts)
    kept = tuple(withheld)
    if ended is not None:
        if written:
            yield Outcome(writer, ended.reason, withheld=kept)
        else:
            # Nothing of the model's reached the visitor: the quote is the answer.
            because = f"{writer} {ended.reason}: {ended.detail}"[:200]
            yield Outcome(fallback.generator.id, ended.reason, because, kept)
        return
    # The small model paraphrases: on the realistic dev sets its complete answers left out the
    # option or call the quote named in most questions (key facts 0.425 against the quote's
    # 0.625 on Celery). Such an answer stays beside the quote. The model wrote it (and the
    # widget showed it): its id stays, as for a cut answer.
    missing = left_out(names("".join(quote)), "".join(written))
    if missing:
        yield Outcome(writer, "omits", f"{writer} omits: {', '.join(missing)}"[:200], kept)
    else:
        yield Outcome(writer, "complete", withheld=kept)


def write_alone(
    writer: str,
    prompt: Prompt,
    parts: Iterator[Part],
    fallback: Fallback,
    *,
    origins: Iterable[str] = (),
) -> Iterator[Part]:
    """No quote to give first (the check found no answer in the passages, or was not asked):
    the model's checked sentences; the sorry-sentence when none comes; then the `Outcome`."""
    said = False
    withheld: list[str] = []
    ended = ""
    try:
        for part in checked(prompt, parts, withheld, alone=True, origins=origins):
            if isinstance(part, Unwritten):
                if not said:
                    because = f"{writer} {part.reason}: {part.detail}"[:200]
                    yield SORRY
                    yield Outcome(fallback.generator.id, part.reason, because, tuple(withheld))
                    return
                ended = part.reason
            elif isinstance(part, str):
                said = True
            yield part
    finally:
        _close(parts)
    yield Outcome(writer, ended or "complete", withheld=tuple(withheld))


def checked(
    prompt: Prompt,
    parts: Iterator[Part],
    withheld: list[str],
    *,
    alone: bool,
    origins: Iterable[str] = (),
) -> Iterator[Part]:
    """The model's text as whole sentences that passed the grounding check; `Waiting` as it
    comes; `Unwritten` when it stopped early or said nothing that could be shown. Sentences
    kept from the visitor are added to `withheld`, each with its reason. A link may lead to the
    passages' own sites and to `origins` (the project's)."""
    source = grounds(prompt.passages, origins=origins)
    sentences = Sentences()
    said = 0
    heard_at = time.monotonic()
    # A sentence that leads in ("For example,") waits for what it leads to: when that is
    # withheld, or never comes, the lead-in is not shown either ("For example, [1]" alone).
    lead: list[str] = []

    def judged(sentence: str) -> Iterator[Part]:
        nonlocal said
        if not said and not lead and is_refusal(sentence):
            if alone:
                said += 1
                yield sentence.strip()
            else:
                # The quote already answers: a model that found nothing has nothing to add.
                yield Unwritten("refused", "the model found no answer in the passages")
            return
        if says_nothing(sentence):
            return
        reason = why_withheld(sentence, source)
        if reason:
            withheld.append(f"{sentence.strip()[:200]} ({reason})")
            withheld.extend(f"{text.strip()[:200]} (it leads to that)" for text in lead)
            lead.clear()
            return
        lead.append(attributed(sentence, source))
        if leads_in(sentence):
            return
        for shown in lead:
            said += 1
            yield shown if said > 1 else shown.lstrip()
        lead.clear()

    try:
        for part in parts:
            if isinstance(part, Waiting):
                heard_at = time.monotonic()
                yield part
                continue
            if isinstance(part, Cut):
                sentences.rest()  # an unfinished sentence is never shown
                yield Unwritten("cut", "the answer reached its length limit")
                return
            if not isinstance(part, str):
                continue
            whole = sentences.feed(part)
            if not whole and time.monotonic() - heard_at >= HEARTBEAT_SECONDS:
                # A sentence is being written: say so now and then, which is also when
                # whoever streams this may close it (a visitor who left stops the model).
                heard_at = time.monotonic()
                yield Waiting(ahead=0, read=1.0)
            for sentence in whole:
                heard_at = time.monotonic()
                for out in judged(sentence):
                    yield out
                    if isinstance(out, Unwritten):
                        return
        tail = sentences.rest()
        if tail.strip():
            for out in judged(tail):
                yield out
                if isinstance(out, Unwritten):
                    return
        withheld.extend(f"{text.strip()[:200]} (nothing followed it)" for text in lead)
        if not said:
            yield Unwritten(
                "ungrounded" if withheld else "empty",
                withheld[0] if withheld else "the model wrote nothing",
            )
    except GeneratorBusy as exc:
        yield Unwritten("busy", str(exc)[:200])
    except GeneratorUnavailable as exc:
        yield Unwritten("unavailable", str(exc)[:200])


def _close(parts: Iterator[Part]) -> None:
    close = getattr(parts, "close", None)
    if close is not None:
        close()
