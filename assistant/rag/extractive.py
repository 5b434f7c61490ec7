"""The embedded default generator: no LLM, so nothing can be made up.

It quotes the sentences of the kept passages that the cross-encoder finds most relevant to the
question, in their original order, each group followed by its citation marker, and streams them
word by word. The best sentence is always in; others only when they score close to it, so a
passage that merely shares the topic (a shipping page under an export question) adds nothing.
What it says is always in the sources; what it cannot do is paraphrase or combine.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from assistant.rag.ports import Reranker
from assistant.rag.types import Candidate, Prompt, Question

#: (query, sentences) -> similarity of each sentence to the query, in input order.
SentenceScorer = Callable[[str, Sequence[str]], list[float]]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[`*])")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_WORD = re.compile(r"\S+\s*")
#: The sentences of this many kept passages are read (best first): the answer is almost always
#: in the top ones, and each sentence costs a cross-encoder run.
MAX_PASSAGES = 3
MAX_SENTENCES = 30


@dataclass(frozen=True, slots=True)
class Unit:
    """A sentence or a list item of one passage."""

    passage: int
    position: int
    text: str
    is_list_item: bool


def split_units(passage_index: int, text: str) -> list[Unit]:
    """Sentences and list items, skipping headings, tables and code. A paragraph's lines are
    joined first: hard-wrapped Markdown must not cut a sentence in two."""
    units: list[Unit] = []
    paragraph: list[str] = []

    def flush() -> None:
        for sentence in _SENTENCE_END.split(" ".join(paragraph)):
            if len(sentence.split()) >= 3:
                units.append(Unit(passage_index, len(units), sentence.strip(), False))
        paragraph.clear()

    in_code = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code or not stripped or stripped.startswith("#") or stripped.startswith("|"):
            flush()
            continue
        if _LIST_ITEM.match(line):
            flush()
            units.append(Unit(passage_index, len(units), stripped, True))
            continue
        paragraph.append(stripped)
    flush()
    return units


def units_of(passages: Sequence[Candidate]) -> list[Unit]:
    """The units the answerer (and the answerability check) read; a passage with no prose
    sentence (a code block, a table) counts as one unit, so it can still be judged."""
    units: list[Unit] = []
    for index, candidate in enumerate(passages[:MAX_PASSAGES]):
        found = split_units(index, candidate.chunk.text)
        units.extend(found or [Unit(index, 0, candidate.chunk.text.strip(), False)])
    return units[:MAX_SENTENCES]


def in_context(units: Sequence[Unit], passages: Sequence[Candidate]) -> list[str]:
    """What the cross-encoder reads of each unit: its passage's title path, then the unit. A
    sentence alone often leaves out its subject ("Large ones may take up to an hour." under
    *Exporting your data > How long an export takes*)."""
    titles = [c.chunk.title for c in passages]
    return [f"{titles[u.passage]}\n{u.text}" if titles[u.passage] else u.text for u in units]


def sentence_query(question: Question) -> str:
    """What sentences are scored against: the retrieval query's form, `(topic) question`."""
    text = " ".join(question.text.split())
    topic = " ".join(question.topic.split())
    return f"({topic}) {text}" if topic else text


class CrossEncoderScorer:
    """A `SentenceScorer` on the reranker. It remembers recent scores, so the answerability
    check and the answerer pay for a sentence once per question."""

    def __init__(self, reranker: Reranker, *, remember: int = 512) -> None:
        self.reranker = reranker
        self.remember = remember
        self._memo: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, query: str, sentences: Sequence[str]) -> list[float]:
        with self._lock:
            missing = [s for s in dict.fromkeys(sentences) if (query, s) not in self._memo]
        fresh = dict(zip(missing, self.reranker.score(query, missing), strict=True))
        with self._lock:
            for sentence, score in fresh.items():
                self._memo[(query, sentence)] = float(score)
            while len(self._memo) > self.remember:
                self._memo.popitem(last=False)
            return [fresh.get(s, self._memo.get((query, s), 0.0)) for s in sentences]


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


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
        max_words: int = 120,
        margin: float = 1.5,
    ) -> None:
        self.scorer = scorer or lexical_scorer
        self.max_units = max_units
        self.max_words = max_words
        self.margin = margin

    def select(self, prompt: Prompt) -> list[list[Unit]]:
        """The chosen units, grouped by passage (most relevant passage first)."""
        units = units_of(prompt.passages)
        if not units:
            return []
        texts = in_context(units, prompt.passages)
        scores = self.scorer(sentence_query(prompt.question), texts)
        bare = " ".join(prompt.question.text.split())
        if prompt.question.topic.strip():
            # The topic helps find the page, but within a relevant passage it pulls towards the
            # sentence that repeats the page's words ("To apply, open Billing > Plans" over
            # "Students get 50% off" for "(Billing) Do you offer a student discount?"): a
            # sentence counts as relevant as the better of the two forms of the question.
            scores = [max(a, b) for a, b in zip(scores, self.scorer(bare, texts), strict=True)]
        # Ties go to the more relevant passage (they come best-first from the reranker).
        scored = sorted(
            zip(units, map(_logit, scores), strict=True),
            key=lambda pair: (-pair[1], pair[0].passage),
        )
        best = scored[0][1]
        # Others only when the cross-encoder rates them nearly as high: in logits, because its
        # probabilities crowd near 1 (0.998 answers, 0.876 is a shipping sentence on topic), so
        # a passage none of whose sentences comes close adds nothing. Of those near the best,
        # each passage's best sentence comes first: when a page's sentences all share its topic
        # ("the student discount ..."), the one that answers may be the only one of its chunk.
        # Margin and count: the best of a sweep on ClapNQ dev by ROUGE-L (0.59 vs 0.60 without
        # the passage-first order, which is within noise).
        near = [unit for unit, score in scored if score >= best - self.margin]
        firsts: list[Unit] = []  # each passage's best sentence, in order of score
        for unit in near:
            if all(unit.passage != first.passage for first in firsts):
                firsts.append(unit)
        chosen = [firsts[0]]  # the sentence that carries the answer, whatever its length
        words = len(firsts[0].text.split())
        for unit in [*firsts[1:], *(u for u in near if u not in firsts)]:
            length = len(unit.text.split())
            if len(chosen) >= self.max_units or words + length > self.max_words:
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
