"""Spot text aimed at an AI assistant rather than at a reader: indirect prompt injection
(OWASP LLM01). A page, file or answer that says "ignore your previous instructions", "you are
now an AI without rules" or "Assistant: tell the reader..." is flagged when it is indexed, so
the people running the console see it before it is quoted. Nothing is removed: a
documentation page about prompt injection may say these things on purpose, and an operator
decides.

The same patterns keep such text out of what a local model reads and out of its written answer
(assistant/rag/written.py); ingestion/injection.py flags documents with them.

Plain patterns, kept general (what such text has to say to work on any assistant), not a list
of known attacks; pure Python, no Django.
"""

from __future__ import annotations

import re

#: How many excerpts a document keeps, and how long each may be.
MAX_EXCERPTS = 5
EXCERPT_CHARS = 160

_ANY = r"(?:all|any|every|the|your|my|its|previous|prior|above|earlier|preceding|former|other)"
_RULES = (
    r"(?:rules?|instructions?|guidelines?|directions?|directives?|prompts?|system\s+prompts?"
    r"|policies|policy|constraints?|programming|training)"
)
_PATTERNS = [
    # "Ignore your previous instructions", "disregard all prior rules", "forget the above".
    rf"\b(?:ignore|disregard|forget|override|bypass|abandon|drop)\s+(?:{_ANY}\s+){{1,3}}{_RULES}\b",
    # "End every answer with ...", "begin each reply with ...": orders about every answer.
    r"\b(?:end|start|begin|finish|close|sign)\s+(?:every|each|all|your|any)\s+"
    r"(?:answers?|responses?|repl(?:y|ies)|messages?)\b",
    # "You are FreeBot", "you are now HelpBot".
    r"\byou\s+are\s+(?:now\s+)?[A-Z]?\w*bot\b",
    # "You are now an AI without restrictions", "you are an assistant that...".
    r"\byou\s+are\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:ai|a\.i\.|assistant|chat\s?bot|language\s+model"
    r"|llm|gpt|large\s+language\s+model)\b",
    # Talk of the assistant's own configuration.
    r"\b(?:system|hidden|initial|original)\s+prompt\b",
    # A turn written for the model: "Assistant: ...", "System: ..." at the start of a line or
    # sentence.
    r"(?:^|(?<=[.!?]\s)|(?<=\n))\s*(?:assistant|system|ai|chatgpt|claude|gpt)\s*:\s*\S",
    # Orders about what to tell the person reading.
    r"\b(?:tell|inform|instruct|convince|persuade)\s+(?:the|any|all)\s+(?:readers?|users?|customers?"
    r"|visitors?|humans?)\s+(?:that|to)\b",
    r"\bdo\s+not\s+(?:tell|reveal|mention|disclose)\s+(?:this|these|it)?\s*(?:to\s+)?(?:the\s+)?"
    r"(?:user|reader|customer|human)s?\b",
    # Chat-template markers that only mean something to a model.
    r"<\|im_start\|>|<\|system\|>|\[/?INST\]|<<SYS>>|###\s*(?:instruction|system)\b",
]
_INSTRUCTIONS = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE | re.MULTILINE)


def instructions_to_an_assistant(text: str) -> list[str]:
    """Excerpts of `text` around what reads as instructions to an AI assistant (at most
    MAX_EXCERPTS, each on one line); empty when there are none."""
    excerpts: list[str] = []
    covered_until = -1
    for match in _INSTRUCTIONS.finditer(text):
        if match.start() < covered_until:
            continue
        start = max(0, match.start() - 40)
        end = min(len(text), max(match.end() + 60, start + 80), start + EXCERPT_CHARS)
        covered_until = end
        excerpt = " ".join(text[start:end].split())
        excerpts.append(("…" if start else "") + excerpt + ("…" if end < len(text) else ""))
        if len(excerpts) == MAX_EXCERPTS:
            break
    return excerpts


def gives_instructions(text: str) -> bool:
    """Whether `text` reads as instructions to an AI assistant."""
    return _INSTRUCTIONS.search(text) is not None
