"""Whether a written sentence is supported by the passage it cites: enough of its content
words (stemmed, stop words aside) stand in that passage or its title. A small model free of
unknown identifiers may still add what no passage says ("The capital of France is Paris."
after a cited refund answer); such a sentence shares almost no content word with its passage.

Word overlap, not a model: it runs per sentence while the answer streams, on the two cores
the local model already fills, and needs nothing offline but this file. Calibrated on the
local model's own answers to the demo documents and the Celery dev questions (see
SUPPORT_THRESHOLD). Pure Python, no Django.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: The share of a sentence's content words its cited passages must hold. On the local
#: model's written answers (demo documents, Celery dev questions) grounded sentences held
#: 0.6 to 1.0 of theirs; sentences from its own knowledge held 0 to 0.25.
SUPPORT_THRESHOLD = 0.5
#: A sentence with fewer content words is judged word by word: each must be in its passage
#: ("Open Billing [1]." stands, a bare "PWNED" does not; "Yes [1]." has none to judge).
MIN_CONTENT_WORDS = 3

_WORD = re.compile(r"[^\W\d_]{3,}")
_MARKER = re.compile(r"\[(\d+)\]")
_STOP = frozenset(
    """about above after again against also always among and any are aren because been before
    being below between both but can cannot could did does doing done down during each either
    else even ever every few for from further get gets getting got had has have having her here
    hers him his how however into its itself just least less let like made make makes many may
    might more most much must need needs never not now off once one only other otherwise our
    ours out over own per please same see should since some still such than that the their
    theirs them then there these they this those through thus too under until upon use used
    uses using very via was way well were what whatever when where whether which while who whom
    whose why will with within without would yes yet you your yours also able sure following
    text texts answer question step steps example""".split()
)


def stem(word: str) -> str:
    """A light stem: "refunds", "refunded" and "refunding" share one."""
    word = word.lower()
    for ending in ("ing", "ed", "es", "s"):
        if len(word) > len(ending) + 3 and word.endswith(ending) and not word.endswith("ss"):
            word = word[: -len(ending)]
            break
    return word[:6]


def content(text: str) -> set[str]:
    """The stems of the content words of `text`."""
    return {stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP}


def cited(sentence: str, count: int) -> list[int]:
    """The passages (0-based) a sentence cites by its markers; all of them when it cites none
    it could mean."""
    numbers = {int(n) - 1 for n in _MARKER.findall(sentence)}
    chosen = sorted(n for n in numbers if 0 <= n < count)
    return chosen or list(range(count))


def best_source(sentence: str, passages: Sequence[set[str]]) -> int | None:
    """The passage (0-based) that holds most of the sentence's content words, the first of
    those that hold as many; None when the sentence has none or no passage holds one."""
    words = content(_MARKER.sub(" ", sentence))
    held = [len(words & passage) for passage in passages]
    if not held or not max(held):
        return None
    return held.index(max(held))


def support(sentence: str, passages: Sequence[set[str]]) -> float | None:
    """The share of the sentence's content words held by the passages it cites (each given
    as its `content`); None when the sentence has none, or there are no passages."""
    words = content(_MARKER.sub(" ", sentence))
    if not words or not passages:
        return None
    held: set[str] = set().union(*(passages[n] for n in cited(sentence, len(passages))))
    return len(words & held) / len(words)


def unsupported(sentence: str, passages: Sequence[set[str]]) -> bool:
    share = support(sentence, passages)
    if share is None:
        return False
    if len(content(_MARKER.sub(" ", sentence))) < MIN_CONTENT_WORDS:
        return share < 1.0
    return share < SUPPORT_THRESHOLD
