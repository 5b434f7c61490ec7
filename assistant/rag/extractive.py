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

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from assistant.rag.ports import Reranker
from assistant.rag.question_parts import question_parts
from assistant.rag.quote_text import (
    Selection,
    citation_number,
    entry_name,
    in_document_order,
    paragraph_text,
)
from assistant.rag.retrieval import passage_text
from assistant.rag.section_quotes import WINDOW_CANDIDATES, WINDOW_MARGIN, quote_from, section_items
from assistant.rag.types import Candidate, Prompt, Question
from assistant.rag.units import MAX_PASSAGES, Unit, units_of

_WORD = re.compile(r"\S+\s*")
#: A word that points back to what an earlier part of the question named.
_POINTER = re.compile(r"\b(?:it|its|that|this|them|they|those|these|one)\b", re.IGNORECASE)
#: A Markdown code span (`timeout`), not a typographic quote (``like this'').
_CODE_SPAN = re.compile(r"(?<!`)`[^`\s][^`]*(?<!\s)`(?!`)")
#: A part of a many-part question whose best sentence scores below this (in logits: p = 0.12)
#: is said to be missing rather than answered with a sentence about something else.
PART_FLOOR = -2.0

#: Quotes of other sections an answer from structured documentation may add to its first
#: (`ExtractiveGenerator._more`), how far below the first they may read (logits), and their
#: length in words. Chosen on the realistic Celery and Requests dev sets by key facts held:
#: none 0.35 / 0.425; two within 3 logits 0.50 / 0.525 (ROUGE-L 0.368 -> 0.410, 0.549 ->
#: 0.555); only quotes showing code the first lacks 0.475 / 0.525.
MORE_QUOTES = 2
MORE_MARGIN = 3.0
MORE_WORDS = 60

#: (query, sentences) -> similarity of each sentence to the query, in input order.
SentenceScorer = Callable[[str, Sequence[str]], list[float]]


def in_context(units: Sequence[Unit], passages: Sequence[Candidate]) -> list[str]:
    """What the cross-encoder reads of each unit: its passage's title path, then the unit. A
    sentence alone often leaves out its subject ("Large ones may take up to an hour." under
    *Exporting your data > How long an export takes*)."""
    titles = [c.chunk.title for c in passages]
    return [f"{titles[u.passage]}\n{u.text}" if titles[u.passage] else u.text for u in units]


def _whole_text(quote: Sequence[Unit], passages: Sequence[Candidate]) -> str:
    """What the cross-encoder reads of a quote read whole: its passage's title path, then the
    quote's units, a line each."""
    return f"{passages[quote[0].passage].chunk.title}\n" + "\n".join(u.text for u in quote)


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
            scored = self._scored(units, texts, asked_part)
            if len(parts) > 1 and scored[0][1] < PART_FLOOR:
                # A later part that points back ("... deleted, and can I change that?") may
                # read as nothing alone: it is asked of what the part before it names, whose
                # quote answers it if anything kept does; it is not named as missing.
                if not (number and _POINTER.search(part)):
                    missing.append((asked_part, scored))
                continue
            quoted = self._quote(
                scored, said, items, self.max_words // len(parts), asked_part, prompt.passages
            )
            for unit in quoted:
                # Overlapping chunks repeat a sentence: it is quoted once.
                if all(unit.text != other.text for other in chosen):
                    chosen.append(unit)
        if not chosen:  # no part found a sentence: the question's best, as for one part
            scored = self._scored(units, texts, question)
            chosen = self._quote(scored, said, items, self.max_words, question, prompt.passages)
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
            _whole_text(g, prompt.passages) for g in in_document_order(chosen, prompt.passages)
        ]
        if quoted and max(map(_logit, self.scorer(query, quoted))) >= PART_FLOOR:
            return True
        whole = [passage_text(c.chunk) for c in prompt.passages[: len(items)]]
        read = [_logit(p) for p in self.scorer(query, whole)]
        holding = [i for i, logit in enumerate(read) if logit >= 0.0]
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
        passages: Sequence[Candidate],
    ) -> list[Unit]:
        """The quote that answers best: from each of the best few sentences, the quote
        `quote_from` makes; the cross-encoder reads each whole (its code included) and the best
        wins, the sentence's own score breaking ties. A sentence alone may score high for
        naming the question's words ("wait forever for a response" for different connect and
        read timeouts) where the quote that answers shows how ("Specify a tuple: ...")."""
        # Documentation with structure in what was kept (code, lists, API entries) is quoted
        # by section; prose (an encyclopedia's passage, a help centre's page) by its near-best
        # sentences, each with the code it leads to: ClapNQ ROUGE-L 0.608 so, 0.549 by
        # section; in prose the answering sentence may stand apart from the best-scoring one
        # ("Students get 50% off" beside "The student discount is renewed every year").
        structured = any(
            u.kind != "sentence" or _CODE_SPAN.search(u.text)
            for found in items.values()
            for u in found
        )
        if not structured:
            return self._picked(scored, said, items, max_words)
        quotes: list[tuple[list[Unit], float]] = []
        better: set[Unit] = set()  # the sentences ranked above the one being read
        for rank, (unit, score) in enumerate(scored[:WINDOW_CANDIDATES]):
            if rank and (score < scored[0][1] - WINDOW_MARGIN or (said and unit.text in said)):
                continue
            found = items.get(unit.passage, [])
            quote = quote_from(found, unit, max_words=max_words, said=said) if found else [unit]
            # A quote that holds a better sentence than the one it starts from is that
            # sentence's quote with words before it: the better sentence starts its own. A
            # chunk that is only code is read as one unit, but a quote starts with words.
            if any(u in better for u in quote[1:]) or quote[0].kind == "code":
                better.add(unit)
                continue
            if all(quote != other for other, _ in quotes):
                quotes.append((quote, score))
            better.add(unit)
        if not quotes:
            quotes = [([scored[0][0]], scored[0][1])]
        # Quotes that differ only in prose are told apart by their best sentence: read whole,
        # a quote dense with the question's words ("The student discount is renewed ...")
        # outscores the one that answers ("Students get 50% off"). Where a quote shows code, a
        # list or an API entry, reading it whole sees what the sentence alone cannot.
        shown = any(u.kind != "sentence" for q, _ in quotes for u in q)
        if len(quotes) > 1 and shown:
            texts = [_whole_text(q, passages) for q, _ in quotes]
            read = self.scorer(sentence_query(question), texts)
            # max() keeps the first of equals: the quote of the better sentence.
            quote = max(zip(quotes, read, strict=True), key=lambda pair: pair[1])[0][0]
        else:
            quote = quotes[0][0]
        quote = self._read_on(quote, scored, said, items, max_words)
        return [*quote, *self._more(quote, scored, said, items, question, passages)]

    def _read_on(
        self,
        quote: list[Unit],
        scored: list[tuple[Unit, float]],
        said: str,
        items: dict[int, list[Unit]],
        max_words: int,
    ) -> list[Unit]:
        """The quote goes on into the next paragraphs of its section while each holds a
        sentence that reads nearly as relevant as the best (within `margin` logits): an
        answer told over several paragraphs ("The implementation uses a contiguous array ...",
        then "When items are appended ...") is quoted whole, one that ends is not padded."""
        found = items.get(quote[0].passage, [])
        near = {
            u.position
            for u, score in scored
            if u.passage == quote[0].passage and score >= scored[0][1] - self.margin
        }
        at = next((i for i, u in enumerate(found) if u.position == quote[-1].position), None)
        if at is None:
            return quote
        words = sum(len(u.text.split()) for u in quote if u.kind != "code")
        blocks: dict[int, list[Unit]] = {}
        for item in found[at + 1 :]:
            if item.kind == "term":
                break
            blocks.setdefault(item.block, []).append(item)
        extended = list(quote)
        for block in blocks.values():
            if not any(u.position in near for u in block):
                break
            texts = [u for u in block if not (said and u.text in said)]
            length = sum(len(u.text.split()) for u in texts if u.kind != "code")
            if words + length > max_words:
                break
            extended += texts
            words += length
        return extended

    def _more(
        self,
        quote: list[Unit],
        scored: list[tuple[Unit, float]],
        said: str,
        items: dict[int, list[Unit]],
        question: Question,
        passages: Sequence[Candidate],
    ) -> list[Unit]:
        """Quotes of other passages that read about as relevant as the first, read whole: the
        cross-encoder's scores crowd near 1 on documentation (the guide's "prefetch multiplier
        of one" and the setting's own entry `worker_prefetch_multiplier` both read 0.99), so
        the section that answers may be the second, or the next chunk of the same section
        ("the headers the server sent back" beside "the headers we sent": `r.request.headers`).
        Each starts at its passage's best sentence and leaves out what is quoted already; at
        most `MORE_QUOTES`, one per section, each within `MORE_MARGIN` logits of the first
        quote and relevant on its own (the gate's 0.5)."""
        quoted = {u.text for u in quote}
        sections: set[str] = set()  # one more quote per section at most
        others: list[list[Unit]] = []
        for passage in sorted(items):
            url = passages[passage].chunk.url
            # Its best sentence not quoted yet: overlapping chunks share a sentence, and the
            # shared one may be the best of both; what the other chunk adds is its own.
            fresh = (u for u, _ in scored if u.passage == passage and u.text not in quoted)
            best = next((u for u in fresh if not (said and u.text in said)), None)
            if passage == quote[0].passage or url in sections or best is None:
                continue
            more = quote_from(items[passage], best, max_words=MORE_WORDS, said=said)
            more = [u for u in more if u.text not in quoted]
            if more and more[0].kind != "code":  # a quote starts with words
                sections.add(url)
                others.append(more)
        if not others:
            return []
        whole = [quote, *others]
        read = self.scorer(sentence_query(question), [_whole_text(q, passages) for q in whole])
        floor = max(0.0, _logit(read[0]) - MORE_MARGIN)
        near = [q for q, p in zip(others, read[1:], strict=True) if _logit(p) >= floor]
        return [unit for q in near[:MORE_QUOTES] for unit in q]

    def _picked(
        self,
        scored: list[tuple[Unit, float]],
        said: str,
        items: dict[int, list[Unit]],
        max_words: int,
    ) -> list[Unit]:
        """The near-best sentences (prose: the answer is in the sentences that score near the
        best, ClapNQ's kind), each with the API signature or the sentences it points back to
        before it (ClapNQ ROUGE-L 0.607 so, 0.608 without: it reads whole, at no cost) and the
        code block it leads to."""
        picked: list[Unit] = []
        for unit in self._choose(scored, said, self.max_units, max_words):
            found = items.get(unit.passage, [])
            quote = quote_from(found, unit, max_words=max_words, said=said) if found else [unit]
            start = next(
                (i for i, u in enumerate(quote) if u.position == unit.position), len(quote)
            )
            code = next((i for i, u in enumerate(quote) if u.kind == "code"), None)
            picked += quote[:start]  # its signature, or what it points back to
            picked += quote[start : code + 1] if code is not None else [unit]
        return picked

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
