"""The embedded default generator: no LLM, so nothing can be made up.

It quotes the sentences of the kept passages that are closest in meaning to the question,
in their original order, each group followed by its citation marker, and streams them word by
word. What it says is always in the sources; what it cannot do is paraphrase or combine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from assistant.rag.types import Prompt

#: (query, sentences) -> similarity of each sentence to the query, in input order.
SentenceScorer = Callable[[str, Sequence[str]], list[float]]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`*])")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_WORD = re.compile(r"\S+\s*")


@dataclass(frozen=True, slots=True)
class Unit:
    """A sentence or a list item of one passage."""

    passage: int
    position: int
    text: str
    is_list_item: bool


def split_units(passage_index: int, text: str) -> list[Unit]:
    units: list[Unit] = []
    in_code = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not stripped or stripped.startswith("#") or stripped.startswith("|"):
            continue
        if _LIST_ITEM.match(line):
            units.append(Unit(passage_index, len(units), stripped, True))
            continue
        for sentence in _SENTENCE_END.split(stripped):
            if len(sentence.split()) >= 3:
                units.append(Unit(passage_index, len(units), sentence.strip(), False))
    return units


def lexical_scorer(query: str, sentences: Sequence[str]) -> list[float]:
    """Word overlap; used when no embedding model is at hand."""
    wanted = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 2}
    scores = []
    for sentence in sentences:
        words = set(re.findall(r"\w+", sentence.lower()))
        scores.append(len(wanted & words) / (len(wanted) or 1))
    return scores


class ExtractiveGenerator:
    id = "extractive"

    def __init__(
        self,
        scorer: SentenceScorer | None = None,
        *,
        max_units: int = 4,
        max_words: int = 140,
        min_share_of_best: float = 0.75,
    ) -> None:
        self.scorer = scorer or lexical_scorer
        self.max_units = max_units
        self.max_words = max_words
        self.min_share_of_best = min_share_of_best

    def select(self, prompt: Prompt) -> list[list[Unit]]:
        """The chosen units, grouped by passage (most relevant passage first)."""
        units = [
            unit
            for index, candidate in enumerate(prompt.passages)
            for unit in split_units(index, candidate.chunk.text)
        ]
        if not units:
            return []
        query = " ".join(filter(None, [prompt.question.topic, prompt.question.text]))
        similarities = self.scorer(query, [u.text for u in units])
        # Passages come best-first from the reranker; a small bonus keeps the answer anchored
        # in the most relevant passage when sentence similarities are close.
        scored = sorted(
            zip(units, similarities, strict=True),
            key=lambda pair: pair[1] - 0.02 * pair[0].passage,
            reverse=True,
        )
        best = scored[0][1]
        chosen: list[Unit] = []
        words = 0
        for unit, similarity in scored:
            if len(chosen) >= self.max_units:
                break
            if chosen and similarity < best * self.min_share_of_best:
                break
            length = len(unit.text.split())
            if chosen and words + length > self.max_words:
                continue
            chosen.append(unit)
            words += length
        groups: dict[int, list[Unit]] = {}
        for unit in sorted(chosen, key=lambda u: (u.passage, u.position)):
            groups.setdefault(unit.passage, []).append(unit)
        return list(groups.values())

    def render(self, groups: list[list[Unit]]) -> str:
        paragraphs = []
        for group in groups:
            marker = f"[{group[0].passage + 1}]"
            if all(u.is_list_item for u in group):
                lines = [u.text for u in group]
                lines[-1] = f"{lines[-1]} {marker}"
                paragraphs.append("\n".join(lines))
            else:
                paragraphs.append(" ".join(u.text for u in group) + f" {marker}")
        return "\n\n".join(paragraphs)

    def stream(self, prompt: Prompt) -> Iterator[str]:
        text = self.render(self.select(prompt))
        for match in _WORD.finditer(text):
            yield match.group(0)
