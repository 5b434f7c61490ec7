"""Content words: what a question or a passage is about, without the words that say how it is
asked. Shared by the answerability check and the follow-up check; pure Python."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
# Question words and glue: they say how something is asked, not what about.
_STOP = frozenset(
    """a an the of to in on at by for from with about into over under and or but not no is are
    was were be been being am do does did doing have has had having can could should would will
    shall may might must what when where which who whom whose why how this that these those it
    its i me my we our you your he she they them their his her there here than then so if as
    any all some many much more most such only also just very get gets got use used using one
    name tell does way ways""".split()
)


def content_words(text: str) -> set[str]:
    """Lower-cased words that carry meaning, cut to a crude stem ("expires" ~ "expire")."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}


def _stem(word: str) -> str:
    return word[:6]
