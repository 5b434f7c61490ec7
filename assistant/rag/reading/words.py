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
    until since while during after before through within without between upon via
    any all some many much more most such only also just very get gets got use used using one
    name tell does way ways""".split()
)


#: "How long", "how often", "how soon" ask for a duration or a frequency, as "how many" asks
#: for a number: the documents answer with one ("after a 14-day grace period", "every hour"),
#: rarely with the word.
_ASKS_FOR = re.compile(r"\bhow (?:long|often|soon)\b")


def content_words(text: str) -> set[str]:
    """Lower-cased words that carry meaning, cut to a crude stem ("expires" ~ "expire")."""
    words = _WORD.findall(_ASKS_FOR.sub("how", text.lower()))
    return {_stem(w) for w in words if len(w) > 2 and w not in _STOP}


#: What is left of a word with its ending cut must be this long ("keys" -> "key", but not
#: "red" -> "r", "thing" -> "th").
_STEM_LETTERS = 3
#: A plural's "s" is no ending in these ("class", "status", "axis").
_NO_PLURAL = ("ss", "us", "is")


def _stem(word: str) -> str:
    """The word without a plural, then without a verb ending, then without a silent final
    "e", cut to six letters: "pages" ~ "page", "settings" ~ "setting", "queries" ~ "query",
    "expires" ~ "expire" ~ "expiring", "delete" ~ "deleted" ~ "deleting". Six letters alone
    leave a short word's plural apart from it ("page" / "pages"), and the verb endings cut
    without the "e" leave a word apart from its own past ("delete" / "deleted")."""
    if word.endswith("ies") and len(word) > _STEM_LETTERS + 1:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(_NO_PLURAL) and len(word) > _STEM_LETTERS:
        word = word[:-1]
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= _STEM_LETTERS:
            word = word[: -len(ending)]
            break
    if word.endswith("e") and not word.endswith("ee") and len(word) > _STEM_LETTERS:
        word = word[:-1]
    return word[:6]
