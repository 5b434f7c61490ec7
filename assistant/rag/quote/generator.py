"""The embedded default generator: no LLM, so nothing can be made up.

It quotes the section that answers: the sentence of the kept passages that the cross-encoder
finds most relevant to the question, and what follows it in its section while it belongs to
it: the rest of its paragraph, the code block or list it introduces ("Example: ...", a
sentence ending with ":"), and the next paragraph when the lead is short. An API entry is
quoted as its signature with its first sentence. A question that asks several things gets one
such quote per part, from its own best passage; a part no sentence speaks to is named as not
found. Quotes of one document follow its order; each is followed by its citation marker,
numbered from [1] in the order the sources appear. What it says is always in the sources;
what it cannot do is paraphrase or combine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from assistant.rag.quote.choosing import MORE_WORDS, best_quote
from assistant.rag.quote.ranking import ranked
from assistant.rag.quote.sections import quote_from, section_items
from assistant.rag.quote.text import (
    Selection,
    citation_number,
    entry_name,
    in_document_order,
    paragraph_text,
    whole_text,
)
from assistant.rag.reading.question_parts import question_parts
from assistant.rag.reading.scoring import (
    SentenceScorer,
    in_context,
    lexical_scorer,
    logit,
    passage_text,
    sentence_query,
)
from assistant.rag.reading.units import MAX_PASSAGES, Unit, units_of
from assistant.rag.types import Candidate, Prompt, Question

_WORD = re.compile(r"\S+\s*")
#: A word that points back to what an earlier part of the question named.
_POINTER = re.compile(r"\b(?:it|its|that|this|them|they|those|these|one)\b", re.IGNORECASE)
#: A part of a many-part question whose best sentence scores below this (in logits: p = 0.12)
#: is said to be missing rather than answered with a sentence about something else.
PART_FLOOR = -2.0


def _previous_answer(question: Question) -> str:
    """The answer before this question, when the question leans on the one before it."""
    if not question.leans_on:
        return ""
    answers = [t.content for t in question.history if t.role == "assistant"]
    return answers[-1] if answers else ""


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
        documents by relevance. The question's best sentence is quoted with what follows it in
        its section (`quote_from`). A question that asks for several things ("How do I install
        the CLI and log in?") has each part answered from its own best sentence, or named as
        missing when no sentence speaks to it."""
        units = units_of(prompt.passages)
        if not units:
            return Selection([])
        texts = in_context(units, prompt.passages)
        question = prompt.question
        # A follow-up is read with the question it leans on, which is not split.
        parts = [question.text] if question.leans_on else question_parts(question.text)
        said = _previous_answer(question)
        read = min(len(prompt.passages), MAX_PASSAGES)
        items = {i: section_items(prompt.passages, i, prompt.neighbours) for i in range(read)}
        chosen: list[Unit] = []
        missing: list[tuple[Question, list[tuple[Unit, float]]]] = []
        for number, part in enumerate(parts):
            asked_part = replace(question, text=part) if len(parts) > 1 else question
            scored = ranked(units, texts, asked_part, scorer=self.scorer, margin=self.margin)
            if len(parts) > 1 and scored[0][1] < PART_FLOOR:
                # A later part that points back ("... deleted, and can I change that?") may
                # read as nothing alone: it is asked of what the part before it names, whose
                # quote answers it if anything kept does; it is not named as missing.
                if not (number and _POINTER.search(part)):
                    missing.append((asked_part, scored))
                continue
            quoted = self._quote(
                scored, said, items, self.max_words // len(parts), asked_part, prompt
            )
            for unit in quoted:
                # Overlapping chunks repeat a sentence: it is quoted once.
                if all(unit.text != other.text for other in chosen):
                    chosen.append(unit)
        if not chosen:  # no part found a sentence: the question's best, as for one part
            scored = ranked(units, texts, question, scorer=self.scorer, margin=self.margin)
            chosen = self._quote(scored, said, items, self.max_words, question, prompt)
            missing = []
        unheld = [
            part.text for part, by in missing if not self._held(part, by, chosen, items, prompt)
        ]
        return Selection(in_document_order(chosen, prompt.passages), unheld)

    def _held(
        self,
        part: Question,
        scored: list[tuple[Unit, float]],
        chosen: list[Unit],
        items: dict[int, list[Unit]],
        prompt: Prompt,
    ) -> bool:
        """Whether a part no single sentence speaks to is answered all the same: by what the
        answer quotes, read whole (a quote's sentences together may answer what none does
        alone), or by a kept passage read whole (relevant on its own: the gate's 0.5), whose
        best sentence for the part (`scored`: the part's sentences, best first) is then quoted
        too (added to `chosen`). A part is named as not found only when no kept passage holds
        it."""
        query = sentence_query(part)
        quoted = [
            whole_text(g, prompt.passages) for g in in_document_order(chosen, prompt.passages)
        ]
        if quoted and max(map(logit, self.scorer(query, quoted))) >= PART_FLOOR:
            return True
        whole = [passage_text(c.chunk) for c in prompt.passages[: len(items)]]
        read = [logit(p) for p in self.scorer(query, whole)]
        holding = [i for i, value in enumerate(read) if value >= 0.0]
        if not holding:
            return False
        passage = max(holding, key=lambda i: read[i])
        best = next((u for u, _ in scored if u.passage == passage), None)
        if best is None:
            return False
        quote = quote_from(items[passage], best, max_words=MORE_WORDS)
        chosen += [u for u in quote if all(u.text != other.text for other in chosen)]
        return True

    def _quote(
        self,
        scored: list[tuple[Unit, float]],
        said: str,
        items: dict[int, list[Unit]],
        max_words: int,
        question: Question,
        prompt: Prompt,
    ) -> list[Unit]:
        """The quote that answers best (`best_quote`), with what reads about as relevant."""
        return best_quote(
            scored, said, items, max_words, question, prompt.passages,
            scorer=self.scorer, margin=self.margin, max_units=self.max_units,
        )  # fmt: skip

    def render(self, selection: Selection, passages: Sequence[Candidate] = ()) -> str:
        """Each quote with its marker after its prose (before a code block it introduces);
        sentences of one paragraph run on, list items and code blocks stand on their own
        lines. A passage's marker is its number among `passages`, or the first number of a
        passage of the same section (two chunks of one section are one source)."""
        paragraphs: list[str] = []
        for group in selection.groups:
            marker = f"[{citation_number(group[0].passage, passages)}]"
            entry = entry_name(passages[group[0].passage].chunk, group[0]) if passages else ""
            if entry and group[0].kind != "term" and entry not in " ".join(u.text for u in group):
                # A definition quoted without its signature (the chunk began after it), or a
                # setting's section ("Default: Expire after 1 day."), is named by the entry it
                # documents.
                group = [replace(group[0], text=f"`{entry}`: {group[0].text}"), *group[1:]]
            run: list[Unit] = []
            for unit in group:
                if unit.kind == "code":
                    if run:
                        paragraphs.append(paragraph_text(run, marker))
                        run = []
                    paragraphs.append(unit.code or unit.text)
                    continue
                if run and unit.block != run[-1].block and run[-1].kind != "term":
                    paragraphs.append(paragraph_text(run, ""))
                    run = []
                run.append(unit)
                if unit.code:
                    paragraphs += [paragraph_text(run, marker), unit.code]
                    run = []
            if run:
                paragraphs.append(paragraph_text(run, marker))
        paragraphs += [f"*Not found in the documents: {part}*" for part in selection.missing]
        return "\n\n".join(p for p in paragraphs if p)

    def arrange(self, prompt: Prompt) -> Prompt:
        """The prompt with its passages in the order the answer quotes them, the others after:
        the answer's markers then count from [1] in the order the sources appear."""
        quoted = dict.fromkeys(g[0].passage for g in self.select(prompt).groups)
        order = [*quoted, *(i for i in range(len(prompt.passages)) if i not in quoted)]
        return replace(prompt, passages=tuple(prompt.passages[i] for i in order))

    def stream(self, prompt: Prompt) -> Iterator[str]:
        text = self.render(self.select(prompt), prompt.passages)
        for match in _WORD.finditer(text):
            yield match.group(0)
