"""What a user told the assistant about themselves (seed 002), in plain Python.

* Commands: "remember ...", "forget ...", "forget everything", "what do you remember about me?".
* Statements ("I'm on the Enterprise plan") a project may learn from when it opts in.
* Facts are refused when empty, oversized, or when they hold an e-mail address, a phone
  number or a card-like number: memory is for preferences and context, not for contact data.
* Relevant facts reach the model as a conversation turn pair placed before the question
  ("Just so you know, ..." / "Got it, I'll keep that in mind!"), never as system-prompt text
  and never in the document retrieval query.

Similarity scales differ between embedders, so the recall threshold and the near-duplicate
threshold are calibrated per embedder (see `CALIBRATION`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assistant.rag.types import Turn

MAX_FACT_CHARS = 300
MAX_INJECTED = 2
#: How many of a user's facts are compared with the question before the threshold cut.
CANDIDATES = 5

ACK = "Got it, I'll keep that in mind!"


@dataclass(frozen=True, slots=True)
class Calibration:
    #: Cosine similarity (query vs fact) above which a fact is used for a question.
    recall: float
    #: Cosine similarity (fact vs fact) at or above which a new fact replaces an old one.
    duplicate: float


#: Measured on small facts (tests/test_memory.py holds the cases). bge-small-en-v1.5 with its
#: query instruction: "sci-fi book recommendations" -> "User likes reading sci-fi books" 0.75,
#: "How do I deploy the app?" -> "I deploy on Kubernetes" 0.77, "How many seats does my plan
#: include?" -> "I'm on the Enterprise plan" 0.64, while unrelated questions ("what's the
#: weather", "Can I export my data?") stay below 0.58 against every fact. Rewordings of one
#: fact score >= 0.93, different facts of one shape ("Enterprise" vs "Pro" plan) <= 0.86.
#: nomic-embed-text keeps the seed's 0.8.
CALIBRATION: dict[str, Calibration] = {
    "onnx:bge-small-en-v1.5": Calibration(recall=0.62, duplicate=0.92),
    "onnx:all-MiniLM-L6-v2": Calibration(recall=0.40, duplicate=0.88),
    "ollama:nomic-embed-text": Calibration(recall=0.80, duplicate=0.95),
}
_FALLBACK = Calibration(recall=0.80, duplicate=0.95)


def calibration(embedder_id: str) -> Calibration:
    """The calibrated thresholds of an embedder; an unknown embedder gets strict ones."""
    if embedder_id in CALIBRATION:
        return CALIBRATION[embedder_id]
    name = embedder_id.split(":", 1)[-1].split(":", 1)[0]  # "ollama:nomic-embed-text:latest"
    for known, values in CALIBRATION.items():
        if known.split(":", 1)[-1] == name:
            return values
    return _FALLBACK


class FactRefused(ValueError):
    """A fact that is not stored; the message is for the user."""


_EMAIL = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+")
# 7+ digits, optionally grouped by spaces, dots, dashes or brackets, optionally with a "+".
_PHONE = re.compile(r"(?<![\w])\+?\(?\d[\d\s().-]{5,}\d(?![\w])")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


def check_fact(text: str) -> str:
    """The fact as stored (trimmed, one line, no trailing full stop), or FactRefused. A
    message masked at the intake (assistant/personal_data) holds a placeholder where the
    personal data was: it is refused as the data itself would be."""
    fact = " ".join(text.split()).strip().rstrip(".!").strip()
    if not fact:
        raise FactRefused("There is nothing to remember; say what I should remember.")
    if len(fact) > MAX_FACT_CHARS:
        raise FactRefused(
            f"That is too long to remember; keep it under {MAX_FACT_CHARS} characters."
        )
    if _EMAIL.search(fact) or "[email]" in fact:
        raise FactRefused("I don't store e-mail addresses. Tell me something else about you.")
    if _CARD.search(fact) or "[card]" in fact or "[iban]" in fact:
        raise FactRefused("I don't store card or account numbers.")
    phones = (sum(c.isdigit() for c in m.group()) >= 7 for m in _PHONE.finditer(fact))
    if any(phones) or "[phone]" in fact:
        raise FactRefused("I don't store phone numbers.")
    if "[secret]" in fact:
        raise FactRefused("I don't store passwords, keys or tokens.")
    return fact


# --- commands ------------------------------------------------------------------------------

CommandKind = Literal["remember", "forget", "forget_all", "recall"]


@dataclass(frozen=True, slots=True)
class Command:
    kind: CommandKind
    text: str = ""


_RECALL = re.compile(
    r"^(?:what\s+do\s+you\s+(?:remember|know)\s+about\s+me"
    r"|what\s+have\s+you\s+remembered(?:\s+about\s+me)?"
    r"|show\s+(?:me\s+)?(?:my\s+memory|what\s+you\s+remember))\s*[?.!]*$",
    re.IGNORECASE,
)
_FORGET_ALL = re.compile(
    r"^(?:please\s+)?forget\s+(?:everything|all(?:\s+about\s+me)?|all\s+(?:my\s+)?facts"
    r"|everything\s+about\s+me)\s*[.!]*$",
    re.IGNORECASE,
)
# "Forget password link is broken" and "Remember me does not work" are support questions.
_FORGET = re.compile(
    r"^(?:please\s+)?forget\s+(?!(?:my\s+|the\s+)?password\b)(?:that\s+|about\s+)?(?P<text>.+)$",
    re.IGNORECASE,
)
_REMEMBER = re.compile(
    r"^(?:please\s+)?remember(?!\s+me\b)(?:(?:\s*:\s*|\s+that\s+|\s+)(?P<text>.*))?$",
    re.IGNORECASE | re.DOTALL,
)


def parse_command(message: str) -> Command | None:
    """The memory command a message is, or None for an ordinary question."""
    text = message.strip()
    if _RECALL.match(text):
        return Command("recall")
    if _FORGET_ALL.match(text):
        return Command("forget_all")
    if (match := _FORGET.match(text)) and not text.endswith("?"):
        return Command("forget", match["text"].strip())
    if (match := _REMEMBER.match(text)) and not text.rstrip().endswith("?"):
        # "remember me on this device?" is a question, not a fact.
        return Command("remember", (match["text"] or "").strip())
    return None


# Statements a user makes about themselves, e.g. "I'm on the Enterprise plan." Questions
# ("Am I ...?", "I'm wondering how ...?") are never taken.
_STATEMENT = re.compile(
    r"^(?:I\s+(?:am|'m|use|deploy|work|run|prefer|like|love|need|host|live|have)"
    r"|I'm|we\s+(?:are|use|deploy|run|host|have|'re)|we're|our\s+\w+|my\s+\w+)\b",
    re.IGNORECASE,
)


def stated_facts(message: str) -> list[str]:
    """Sentences of a message that state something about the user (for projects that opt in
    to learning from conversation). Sentences that would be refused are left out."""
    facts: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", message.strip()):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?") or not _STATEMENT.match(sentence):
            continue
        try:
            facts.append(check_fact(sentence))
        except FactRefused:
            continue
    return facts


# --- use -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FactHit:
    id: str
    text: str
    similarity: float


def relevant(
    hits: Sequence[FactHit], *, threshold: float, limit: int = MAX_INJECTED
) -> list[FactHit]:
    """Facts strictly above the threshold, most similar first, at most `limit`."""
    kept = sorted((h for h in hits if h.similarity > threshold), key=lambda h: -h.similarity)
    return kept[:limit]


def _as_told(fact: str) -> str:
    # "User likes ..." -> "user likes ..."; "I'm ..." stays; "Kubernetes ..." stays.
    first, _, rest = fact.partition(" ")
    if first.isupper() or first in ("I", "I'm", "I've", "I'd", "I'll") or not first[:1].isupper():
        return fact
    if first[1:] and not first[1:].islower():  # a name like "GitHub" or "AWS"
        return fact
    return first.lower() + (" " + rest if rest else "")


def injection(facts: Sequence[FactHit | str]) -> tuple[Turn, ...]:
    """The conversation turns that carry the facts, in order: one exchange per fact."""
    turns: list[Turn] = []
    for fact in facts:
        text = fact.text if isinstance(fact, FactHit) else fact
        turns += [Turn("user", f"Just so you know, {_as_told(text)}."), Turn("assistant", ACK)]
    return tuple(turns)


def recall_reply(facts: Sequence[str]) -> str:
    if not facts:
        return "I don't remember anything about you yet."
    lines = "\n".join(f"- {fact}" for fact in facts)
    return f"Here is what I remember about you:\n{lines}"
