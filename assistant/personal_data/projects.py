"""A project's masker: the built-in kinds when the project masks personal data, plus its own
patterns, compiled once per process for each distinct set of patterns."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from assistant.personal_data.custom_patterns import custom_rule, from_stored
from assistant.personal_data.masking import Masker

if TYPE_CHECKING:
    from assistant.models import Project


def masked(project: Project, text: str) -> str:
    """The text as the project keeps it: masked when the project masks personal data."""
    if not project.mask_personal_data or not text:
        return text
    return masker_for(project).mask(text)


def masker_for(project: Project) -> Masker:
    stored = project.mask_patterns if isinstance(project.mask_patterns, list) else []
    key = tuple((str(item.get("label", "")), str(item.get("pattern", ""))) for item in stored)
    return _masker(key)


@lru_cache(maxsize=256)
def _masker(patterns: tuple[tuple[str, str], ...]) -> Masker:
    checked = from_stored({"label": label, "pattern": pattern} for label, pattern in patterns)
    return Masker(extra=tuple(custom_rule(custom) for custom in checked))
