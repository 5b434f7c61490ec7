"""A project's own kinds of personal data (an account-number format, a member id), written as
regular expressions in the console: validated before they are stored, bounded when they run.

A pattern is run by the `regex` module with a time limit, so a pattern that backtracks without
end (`(a+)+$`) cannot hold a question up: it is refused when saved if it takes too long on
texts made to trip it, and a run that still overruns is abandoned (the message goes on with
the built-in kinds masked) and logged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

logger = logging.getLogger(__name__)

MAX_PATTERNS = 20
MAX_PATTERN_CHARS = 200
#: A run's time limit for one pattern on one message, in seconds.
RUN_TIMEOUT = 0.01
#: The time limit of the saving test, on each text made to trip the pattern.
CHECK_TIMEOUT = 0.05
LABEL = re.compile(r"[a-z][a-z0-9_]{0,23}")
RESERVED = frozenset({"email", "phone", "card", "iban", "secret", "ip"})

#: Texts that make badly nested quantifiers backtrack for ever.
_TRIPWIRES = tuple(
    body + tail
    for body in ("a" * 3000, "1" * 3000, "a1" * 1500, "a " * 1500, "-" * 3000, "aA1-_. " * 400)
    for tail in ("!", "")
)


class PatternError(ValueError):
    """A pattern that cannot be used; the message is for the person who wrote it."""


@dataclass(frozen=True, slots=True)
class CustomPattern:
    label: str
    pattern: str

    def as_dict(self) -> dict[str, str]:
        return {"label": self.label, "pattern": self.pattern}


def parse_lines(text: str) -> list[CustomPattern]:
    """The console's textarea, one `label: pattern` a line, checked (PatternError)."""
    patterns: list[CustomPattern] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label, colon, pattern = line.partition(":")
        if not colon:
            raise PatternError(
                f'Line {number}: write "label: pattern", e.g. "account: ACC-\\d{{8}}".'
            )
        patterns.append(CustomPattern(label=label.strip(), pattern=pattern.strip()))
    return validated(patterns)


def as_lines(patterns: Iterable[Mapping[str, Any]]) -> str:
    return "\n".join(f"{p['label']}: {p['pattern']}" for p in patterns)


def validated(patterns: list[CustomPattern]) -> list[CustomPattern]:
    if len(patterns) > MAX_PATTERNS:
        raise PatternError(f"At most {MAX_PATTERNS} patterns.")
    for custom in patterns:
        check(custom)
    return patterns


def check(custom: CustomPattern) -> None:
    """PatternError unless the label is a short lowercase word that names no built-in kind and
    the pattern compiles, is short, matches no empty text and runs in bounded time."""
    name = custom.label
    if not LABEL.fullmatch(name):
        raise PatternError(f'"{name}": a label is 1-24 lowercase letters, digits or _.')
    if name in RESERVED:
        raise PatternError(f'"{name}" is built in; choose another label.')
    if not custom.pattern:
        raise PatternError(f'"{name}": the pattern is empty.')
    if len(custom.pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f'"{name}": a pattern is at most {MAX_PATTERN_CHARS} characters.')
    try:
        compiled = regex.compile(custom.pattern)
    except (regex.error, RecursionError, OverflowError) as error:
        raise PatternError(f'"{name}": not a regular expression ({error}).') from None
    if compiled.search("", timeout=CHECK_TIMEOUT) is not None:
        raise PatternError(f'"{name}": the pattern matches an empty text.')
    for text in _TRIPWIRES:
        try:
            compiled.search(text, timeout=CHECK_TIMEOUT)
        except TimeoutError:
            raise PatternError(
                f'"{name}": the pattern takes too long on long texts (nested repeats such as '
                '"(a+)+" backtrack without end); write it without them.'
            ) from None


def custom_rule(custom: CustomPattern) -> Callable[[str], str]:
    """The pattern as a masking rule: its matches become `[label]`, within RUN_TIMEOUT."""
    compiled = regex.compile(custom.pattern)
    replacement = f"[{custom.label}]"

    def rule(text: str) -> str:
        try:
            masked: str = compiled.sub(replacement.replace("\\", "\\\\"), text, timeout=RUN_TIMEOUT)
        except TimeoutError:
            logger.warning("custom masking pattern %r overran its time limit", custom.label)
            return text
        return masked

    return rule


def from_stored(stored: Iterable[Mapping[str, Any]]) -> list[CustomPattern]:
    """The stored list, keeping only patterns that still pass the checks (a pattern that a
    newer version refuses is skipped, and logged, rather than failing every question)."""
    kept: list[CustomPattern] = []
    for item in stored:
        custom = CustomPattern(
            label=str(item.get("label", "")), pattern=str(item.get("pattern", ""))
        )
        try:
            check(custom)
        except PatternError as error:
            logger.warning("custom masking pattern skipped: %s", error)
            continue
        kept.append(custom)
    return kept
