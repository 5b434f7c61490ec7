"""Remove people from support answers before they are stored or embedded: the names of the
authors and participants the API told us about, @mentions, e-mail addresses and phone numbers."""

from __future__ import annotations

import re
from collections.abc import Iterable

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# Discord's <@123>, <@!123>, <@&123> and plain @handles (not decorators such as @ray.remote).
_DISCORD_MENTION = re.compile(r"<@[!&]?\d+>")
_HANDLE = re.compile(r"(?<![\w@])@[A-Za-z0-9_][\w-]{1,31}\b(?![.(])")
# Seven or more digits with the usual separators, optionally with a leading +.
_PHONE = re.compile(r"(?<![\w-])\+?\(?\d[\d\s().-]{5,}\d(?![\w-])")
_SPACES = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"[ \t]+([,.!?;:])")


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}")


def _is_phone(match: re.Match[str]) -> bool:
    found = match.group().strip()
    return sum(c.isdigit() for c in found) >= 7 and not _DATE.fullmatch(found)


def scrub(text: str, *, names: Iterable[str] = ()) -> str:
    text = _EMAIL.sub("", text)
    text = _DISCORD_MENTION.sub("", text)
    text = _HANDLE.sub("", text)
    text = _PHONE.sub(lambda m: "" if _is_phone(m) else m.group(), text)
    for name in _name_variants(names):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", "", text, flags=re.IGNORECASE)
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", text))
    return "\n".join(line.strip() for line in text.splitlines()).strip()


def _name_variants(names: Iterable[str]) -> list[str]:
    """A full name, then each part of it long enough not to be an ordinary word fragment."""
    variants: set[str] = set()
    for name in names:
        name = (name or "").strip()
        if not name:
            continue
        variants.add(name)
        variants.update(part for part in re.split(r"[\s._-]+", name) if len(part) >= 3)
    return sorted(variants, key=len, reverse=True)
