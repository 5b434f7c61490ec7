"""Follow-up conversations made from any question set: a second question that cannot be
understood alone, whose gold is the original question's.

Each answerable question is split into its subject (a term in code, a capitalised name, or a
noun phrase after a determiner) and the rest, by rules over the question's own words. Two
shapes, picked per question by a hash of its id so a re-run writes the same file:

- `pronoun`: the first turn brings the subject up ("Tell me about tune.Tuner."), the
  follow-up asks the question with a pronoun in its place ("How can I set the search
  algorithm using it?");
- `what_about`: the first turn asks the same question about another subject taken from the
  set ("How do I convert a list to a number?"), the follow-up names only the subject ("What
  about a string?").

Joined with the first turn, either follow-up means the original question, so the original's
gold holds. Each follow-up line comes with a `followup_alone` line (the original question,
no history) so one `evaluate` run reports both kinds side by side."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from measuring.evaluation.dataset import docs_area

FOLLOWUP = "followup"
ALONE = "followup_alone"

_DETERMINERS = frozenset("a an the my our your all each every".split())
#: Words that end a noun phrase: prepositions, conjunctions, question words, auxiliaries,
#: pronouns and the verbs questions most often end on ("... a deployment needs?").
_BOUNDARY = frozenset(
    """to from in on at by for with of into onto over under about after before between through
    via using without within across per as like than and or but so if when while because
    whether what which who whom whose why how where is are was were be been being am can could
    do does did done will would should shall may might must has have had not no it its they them
    their i me my we us you your he she him her there here then just also only still even
    need needs work works run runs take takes use uses get gets make makes mean means return
    returns call calls raise raises change changes contain contains happen happens look looks
    go goes come comes set sets show shows start starts stop stops keep keeps fail fails
    seem seems appear appears exist exists allow allows instead same other this that these
    those what's how's where's who's can't don't doesn't isn't aren't won't didn't sometimes
    always never often really actually already usually e.g i.e etc""".split()
)
_INTROS = ("Tell me about {np}.", "I have a question about {np}.", "I'm working with {np}.")
_WHAT_ABOUTS = ("What about {np}?", "And {np}?", "How about {np}?", "And for {np}?")
_LEAD = "“\"'‘("
_TRAIL = "?!,;:.”\"'’"
_CODE = re.compile(r"[a-z]\w*\.[A-Za-z_]|\w_\w|[a-z][A-Z]|[A-Z]{2}[a-z]|\w\(\)|\w\[")
_PLURAL = re.compile(r"[a-z]{3,}[^s]s$")
_SENTENCE_END = re.compile(r"[.?!:]$")
#: The longest question turned into a follow-up: a pasted paragraph is no conversation turn.
MAX_WORDS = 25


@dataclass(frozen=True, slots=True)
class Word:
    lead: str
    core: str
    trail: str

    @classmethod
    def parse(cls, raw: str) -> Word:
        body = raw.lstrip(_LEAD)
        lead = raw[: len(raw) - len(body)]
        core = body.rstrip(_TRAIL)
        if core.count(")") > core.count("("):
            core = core[:-1]
        return cls(lead, core, body[len(core) :])

    @property
    def lower(self) -> str:
        return self.core.lower().replace("’", "'")


@dataclass(frozen=True, slots=True)
class Split:
    """The question's words, and the span [start, end) of its subject among them."""

    words: tuple[Word, ...]
    start: int
    end: int

    @property
    def subject(self) -> str:
        return " ".join(w.core for w in self.words[self.start : self.end])

    @property
    def bare_subject(self) -> str:
        """The subject without a leading "all"/"each"/"every" (read as "Tell me about ...")."""
        words = [w.core for w in self.words[self.start : self.end]]
        if words[0].lower() in ("all", "each", "every") and len(words) > 1:
            words = words[1:]
        return " ".join(words)

    def with_subject(self, replacement: str) -> str:
        first, last = self.words[self.start], self.words[self.end - 1]
        middle = f"{first.lead}{replacement}{last.trail}"
        before = [f"{w.lead}{w.core}{w.trail}" for w in self.words[: self.start]]
        after = [f"{w.lead}{w.core}{w.trail}" for w in self.words[self.end :]]
        return " ".join([*before, middle, *after])


def split_subject(question: str) -> Split | None:
    """The question's subject by rules over its words; None when none is found, when the
    question is too long to be a conversation turn, or when the rest would carry no content
    word of its own (the follow-up "What is it?")."""
    words = tuple(Word.parse(w) for w in question.split())
    if not 2 <= len(words) <= MAX_WORDS or not all(w.core for w in words):
        return None
    span = _code_term(words) or _name_or_phrase(words)
    if span is None:
        return None
    start, end = span
    rest = [w for i, w in enumerate(words) if not start <= i < end]
    if not any(_content(w) for w in rest):
        return None
    return Split(words, start, end)


def _content(word: Word) -> bool:
    return (
        word.core[:1].isalnum() and word.lower not in _BOUNDARY and word.lower not in _DETERMINERS
    )


def _with_determiner(words: Sequence[Word], start: int, end: int) -> tuple[int, int]:
    if start > 0 and words[start - 1].lower in _DETERMINERS and not words[start - 1].trail:
        return start - 1, end
    return start, end


def _code_term(words: Sequence[Word]) -> tuple[int, int] | None:
    """A term in code (`tune.Tuner`, `log_to_driver`, `DAGDriver`, `ray.init()`)."""
    for i, word in enumerate(words):
        if _CODE.search(word.core) and word.lower not in _BOUNDARY:
            return _with_determiner(words, i, i + 1)
    return None


def _name_or_phrase(words: Sequence[Word]) -> tuple[int, int] | None:
    """A noun phrase after a determiner ("a string", "the search algorithm", "a Ray Tune
    job") or, failing that, capitalised words that do not start a sentence ("Ray Dataset",
    "Python"). A phrase that goes on with "of"/"between" ("the number of rows") is skipped:
    its head alone is no subject."""
    for i, word in enumerate(words[:-1]):
        if word.lower not in _DETERMINERS or word.trail:
            continue
        end = i + 1
        while end < len(words) and end - i <= 5 and _content(words[end]) and not words[end].lead:
            end += 1
            if words[end - 1].trail:
                break
        if end < len(words) and words[end - 1].lower.endswith("ed") and end - 1 > i + 1:
            end -= 1  # "a method defined in ...": the participle starts the next part
        elif end < len(words) and words[end].lower in _DETERMINERS and end - 1 > i + 1:
            end -= 1  # "my code discover the name": a verb stands before the next phrase
        if end == i + 1 or (end < len(words) and words[end].lower in ("of", "between")):
            continue
        return i, end
    for i in range(1, len(words)):
        after_question_word = words[i - 1].lower in ("what", "which")
        if (
            _is_name(words[i])
            and not after_question_word
            and not _SENTENCE_END.search(words[i - 1].trail or "x")
        ):
            end = i + 1
            while end < len(words) and end - i < 3 and _goes_on_name(words, end):
                end += 1
            if end < len(words) and _content(words[end]) and not words[end - 1].trail:
                continue  # it names what the next word is ("Python strings"): no subject
            return _with_determiner(words, i, end)
    return None


def _goes_on_name(words: Sequence[Word], i: int) -> bool:
    """Another capitalised word ("Ray Serve"), or one lower-case word that ends the phrase
    ("Ray cluster on ...", not "Python allow commas")."""
    if words[i - 1].trail or words[i].lead or not _content(words[i]):
        return False
    if _is_name(words[i]):
        return True
    return i + 1 == len(words) or not _content(words[i + 1])


def _is_name(word: Word) -> bool:
    return (
        word.core[:1].isupper()
        and word.core.replace("’", "'").replace("'", "").isalpha()
        and word.lower not in _BOUNDARY
        and word.core not in ("I", "I'm", "I’m", "OK")
    )


def pronoun_for(subject: str, question: str) -> str:
    """ "it" or "them"; "that" / "those" when the question already has the pronoun ("Why is
    it called that?")."""
    last = subject.split()[-1]
    plural = bool(_PLURAL.match(last)) and "." not in last
    pronoun = "them" if plural else "it"
    if pronoun in {w.strip(_LEAD + _TRAIL).lower() for w in question.split()}:
        return "those" if plural else "that"
    return pronoun


def _pick(key: str, choices: Sequence[str]) -> str:
    digest = int(hashlib.sha256(key.encode()).hexdigest(), 16)
    return choices[digest % len(choices)]


def followup_rows(rows: Sequence[dict[str, object]]) -> list[dict[str, object]]:
    """For each answerable row whose subject can be split off: a `followup` line and its
    `followup_alone` twin. Other fields (gold ids, pages, answers) are carried over."""
    splits = [
        (row, split)
        for row in rows
        if row.get("answerable", True) and (split := split_subject(str(row["question"])))
    ]
    out: list[dict[str, object]] = []
    for number, (row, split) in enumerate(splits):
        key = str(row["id"])
        shape = _pick(f"shape:{key}", ("pronoun", "pronoun", "what_about"))
        other = _other_subject(splits, number)
        if shape == "what_about" and other:
            history = split.with_subject(other)
            question = _pick(f"ask:{key}", _WHAT_ABOUTS).format(np=split.subject)
        else:
            shape = "pronoun"
            subject = split.bare_subject
            if split.start == 0 and not _is_name(split.words[0]):
                subject = subject[:1].lower() + subject[1:]
            history = _pick(f"intro:{key}", _INTROS).format(np=subject)
            pronoun = pronoun_for(split.subject, str(row["question"]))
            if split.start > 0 and split.words[split.start - 1].lower == "there":
                pronoun = "one"  # "Is there one with breakpoints?", not "Is there it"
            question = split.with_subject(pronoun)
            question = question[:1].upper() + question[1:]
        # `answer` repeats `answers_all` where both are given (site_faq): once is enough.
        dropped = {
            "id",
            "question",
            "history",
            "kind",
            *(["answer"] if "answers_all" in row else []),
        }
        base = {k: v for k, v in row.items() if k not in dropped}
        out.append({"id": f"{FOLLOWUP}-{key}", "question": question, **base, "kind": FOLLOWUP,
                    "history": [history], "shape": shape, "original_id": key,
                    "original_question": row["question"]})  # fmt: skip
        out.append({"id": f"{ALONE}-{key}", "question": row["question"], **base, "kind": ALONE,
                    "original_id": key})  # fmt: skip
    return out


def _other_subject(splits: Sequence[tuple[dict[str, object], Split]], number: int) -> str:
    """Another question's subject that this question does not mention, from the same docs area
    (or page) when there is one: "what about X?" follows a question on a sibling subject."""
    row, split = splits[number]
    asked = str(row["question"]).lower()
    group = _group(row)
    others = [splits[(number + step) % len(splits)] for step in range(1, len(splits))]
    for same_group in (True, False):
        for other_row, other in others:
            if same_group and _group(other_row) != group:
                continue
            if (
                other.subject.lower() not in asked
                and split.subject.lower() not in str(other_row["question"]).lower()
            ):
                return other.subject
    return ""


def _group(row: dict[str, object]) -> str:
    page = str(row.get("gold_page") or "")
    return docs_area(page) or page
