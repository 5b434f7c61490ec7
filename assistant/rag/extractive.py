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
from dataclasses import dataclass, field, replace

from assistant.rag.ports import Reranker
from assistant.rag.question_parts import question_parts
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
#: A part of a many-part question whose best sentence scores below this (in logits: p = 0.12)
#: is said to be missing rather than answered with a sentence about something else.
PART_FLOOR = -2.0


@dataclass(frozen=True, slots=True)
class Unit:
    """A sentence or a list item of one passage. `code`: the fenced code block that follows a
    sentence ending with a colon ("Install the CLI with pip:"), which belongs to it."""

    passage: int
    position: int
    text: str
    is_list_item: bool
    code: str = ""


def split_units(passage_index: int, text: str) -> list[Unit]:
    """Sentences and list items, skipping headings and tables; a code block is kept only with
    the sentence ending with ':' right before it. A paragraph's lines are joined first:
    hard-wrapped Markdown must not cut a sentence in two. A passage that starts inside a code
    block (a chunk cut within one: an odd number of fences) reads its first lines as code, so
    no stray fence or half a program is ever quoted as a sentence."""
    units: list[Unit] = []
    paragraph: list[str] = []

    def flush() -> None:
        for sentence in _SENTENCE_END.split(" ".join(paragraph)):
            if len(sentence.split()) >= 3:
                units.append(Unit(passage_index, len(units), sentence.strip(), False))
        paragraph.clear()

    lines = text.splitlines()
    in_code = sum(1 for line in lines if line.strip().startswith("```")) % 2 == 1
    code: list[str] | None = None  # the lines of a block that belongs to the last unit
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            if not in_code and units and units[-1].text.endswith(":") and not units[-1].code:
                code = [stripped]  # the fence with its language ("```bash")
            elif in_code and code is not None:
                units[-1] = replace(units[-1], code="\n".join([*code, "```"]))
                code = None
            in_code = not in_code
            continue
        if in_code:
            if code is not None:
                code.append(line)
            continue
        if not stripped or stripped.startswith("#") or stripped.startswith("|"):
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


def asked(question: Question) -> str:
    """The question as sentences are judged against it: with the previous question first when
    it leans on it ("How do I export my data? How long does it take?")."""
    return " ".join(f"{question.leans_on} {question.text}".split())


def sentence_query(question: Question) -> str:
    """What sentences are scored against: the retrieval query's form, `(topic) question`."""
    text = asked(question)
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


@dataclass(frozen=True, slots=True)
class Selection:
    """What an extractive answer quotes: units grouped by passage, in reading order, and the
    parts of the question no sentence answers."""

    groups: list[list[Unit]]
    missing: list[str] = field(default_factory=list)


def _paragraph(units: Sequence[Unit], marker: str) -> str:
    if all(u.is_list_item for u in units):
        return "\n".join([*(u.text for u in units[:-1]), f"{units[-1].text} {marker}"])
    return " ".join(u.text for u in units) + f" {marker}"


def _in_document_order(units: Sequence[Unit], passages: Sequence[Candidate]) -> list[list[Unit]]:
    """Grouped by passage. Passages cut from one document follow its order (install, then log
    in), whatever their relevance; documents come in the order of their best passage."""
    groups: dict[int, list[Unit]] = {}
    for unit in sorted(units, key=lambda u: (u.passage, u.position)):
        groups.setdefault(unit.passage, []).append(unit)

    def document(passage: int) -> str:
        chunk = passages[passage].chunk
        return chunk.document if chunk.document and chunk.ordinal >= 0 else f"#{passage}"

    first_seen: dict[str, int] = {}
    for passage in sorted(groups):
        first_seen.setdefault(document(passage), passage)
    return [
        groups[p]
        for p in sorted(
            groups, key=lambda p: (first_seen[document(p)], passages[p].chunk.ordinal, p)
        )
    ]


def _previous_answer(question: Question) -> str:
    """The answer before this question, when the question leans on the one before it."""
    if not question.leans_on:
        return ""
    answers = [t.content for t in question.history if t.role == "assistant"]
    return answers[-1] if answers else ""


def _both(p: float, q: float) -> float:
    """The probability whose logit is the mean of the two's."""
    return 1.0 / (1.0 + math.exp(-(_logit(p) + _logit(q)) / 2))


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

    def select(self, prompt: Prompt) -> Selection:
        """The chosen units, grouped by passage: passages of one document in its order, the
        documents by relevance. A question that asks for several things ("How do I install the
        CLI and log in?") has each part answered from its own best sentences, or named as
        missing when no sentence speaks to it."""
        units = units_of(prompt.passages)
        if not units:
            return Selection([])
        texts = in_context(units, prompt.passages)
        question = prompt.question
        # A follow-up is read with the question it leans on, which is not split.
        parts = [question.text] if question.leans_on else question_parts(question.text)
        said = _previous_answer(question)
        chosen: list[Unit] = []
        missing: list[str] = []
        for part in parts:
            asked_part = replace(question, text=part) if len(parts) > 1 else question
            scored = self._scored(units, texts, asked_part)
            if len(parts) > 1 and scored[0][1] < PART_FLOOR:
                missing.append(part)
                continue
            share = max(1, self.max_units // len(parts))
            for unit in self._choose(scored, said, share, self.max_words // len(parts)):
                # Overlapping chunks repeat a sentence: it is quoted once.
                if all(unit.text != other.text for other in chosen):
                    chosen.append(unit)
        if not chosen:  # no part found a sentence: the question's best, as for one part
            scored = self._scored(units, texts, question)
            chosen, missing = self._choose(scored, said, self.max_units, self.max_words), []
        return Selection(_in_document_order(chosen, prompt.passages), missing)

    def _scored(
        self, units: Sequence[Unit], texts: Sequence[str], question: Question
    ) -> list[tuple[Unit, float]]:
        """Each unit with its logit for the question, best first."""
        scores = self.scorer(sentence_query(question), texts)
        scores = self._better_of_topic(question, texts, scores)
        if question.leans_on:
            # Read with the previous question, every sentence of its answer fits again: a
            # sentence must also speak to the follow-up as asked ("Click Revoke ..." for "How
            # do I revoke one?", not "Tokens expire after 90 days" again). Both count alike
            # (the mean of the logits); the follow-up alone is too vague to decide by itself.
            alone = replace(question, leans_on="")
            as_asked = self.scorer(sentence_query(alone), texts)
            as_asked = self._better_of_topic(alone, texts, as_asked)
            scores = [_both(a, b) for a, b in zip(scores, as_asked, strict=True)]
            # Beside the best, only sentences about as close to the follow-up as asked: joined
            # to "When does it expire?", "Expired tokens return HTTP 401" still reads well.
            best = max(range(len(scores)), key=lambda i: scores[i])
            floor = _logit(as_asked[best]) - self.margin
            scores = [
                p if i == best or _logit(a) >= floor else 0.0
                for i, (p, a) in enumerate(zip(scores, as_asked, strict=True))
            ]
        # Ties go to the more relevant passage (they come best-first from the reranker).
        return sorted(
            zip(units, map(_logit, scores), strict=True),
            key=lambda pair: (-pair[1], pair[0].passage),
        )

    def _choose(
        self, scored: list[tuple[Unit, float]], said: str, max_units: int, max_words: int
    ) -> list[Unit]:
        best = scored[0][1]
        # Others only when the cross-encoder rates them nearly as high: in logits, because its
        # probabilities crowd near 1 (0.998 answers, 0.876 is a shipping sentence on topic), so
        # a passage none of whose sentences comes close adds nothing. Of those near the best,
        # each passage's best sentence comes first: when a page's sentences all share its topic
        # ("the student discount ..."), the one that answers may be the only one of its chunk.
        # Margin and count: the best of a sweep on ClapNQ dev by ROUGE-L (0.59 vs 0.60 without
        # the passage-first order, which is within noise).
        near = [unit for unit, score in scored if score >= best - self.margin]
        if said:
            # A follow-up reads the passages of the previous answer again: what it already
            # quoted is left out, but for the sentence that answers best (the refund sentence
            # that holds "5 to 10 business days" answers "How long does it take?" too).
            near = [near[0], *(u for u in near[1:] if u.text not in said)]
        firsts: list[Unit] = []  # each passage's best sentence, in order of score
        for unit in near:
            if all(unit.passage != first.passage for first in firsts):
                firsts.append(unit)
        chosen = [firsts[0]]  # the sentence that carries the answer, whatever its length
        words = len(firsts[0].text.split())
        for unit in [*firsts[1:], *(u for u in near if u not in firsts)]:
            length = len(unit.text.split())
            if len(chosen) >= max_units or words + length > max_words:
                continue
            chosen.append(unit)
            words += length
        return chosen

    def _better_of_topic(
        self, question: Question, texts: Sequence[str], scores: list[float]
    ) -> list[float]:
        """The topic helps find the page, but within a relevant passage it pulls towards the
        sentence that repeats the page's words ("To apply, open Billing > Plans" over "Students
        get 50% off" for "(Billing) Do you offer a student discount?"): a sentence counts as
        relevant as the better of the two forms of the question."""
        if not question.topic.strip():
            return scores
        bare = self.scorer(asked(question), texts)
        return [max(a, b) for a, b in zip(scores, bare, strict=True)]

    def render(self, selection: Selection) -> str:
        """Each passage's units with its marker; a unit's code block right after it."""
        paragraphs = []
        for group in selection.groups:
            marker = f"[{group[0].passage + 1}]"
            run: list[Unit] = []
            for unit in group:
                run.append(unit)
                if unit.code:
                    paragraphs += [_paragraph(run, marker), unit.code]
                    run = []
            if run:
                paragraphs.append(_paragraph(run, marker))
        paragraphs += [f"*Not found in the documents: {part}*" for part in selection.missing]
        return "\n\n".join(paragraphs)

    def stream(self, prompt: Prompt) -> Iterator[str]:
        text = self.render(self.select(prompt))
        for match in _WORD.finditer(text):
            yield match.group(0)
