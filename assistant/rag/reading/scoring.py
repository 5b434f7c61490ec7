"""The cross-encoder reading text against a question: what it sees of a passage and of a
sentence, the question's form it reads them against, and the sentence scorer the quote and
the answerability check share (their sentences are scored once per question)."""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from assistant.rag.ports import Reranker
from assistant.rag.reading.units import Unit
from assistant.rag.types import Candidate, Chunk, Question

_MARKED = re.compile(r"`([^`\n]+)`")

#: (query, sentences) -> similarity of each sentence to the query, in input order.
SentenceScorer = Callable[[str, Sequence[str]], list[float]]


def passage_text(chunk: Chunk) -> str:
    """What the embedder and the reranker see of a chunk: its title path, then its text."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


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


def draft_reading(question: Question) -> str:
    """The model's draft (answering.py, the second reading) as read and searched: without its
    code marks."""
    return " ".join(question.draft.replace("`", "").split())


def draft_terms(question: Question) -> str | None:
    """The names the draft marks as code (`PRAGMA integrity_check`, `json_extract`), before
    the question as asked; None when it marks none. A cross-encoder trained on short web
    queries reads a whole sentence poorly against the entry it names ("use the JSON_EXTRACT
    function ..." reads json_extract's entry 0.05), and the name before the question well
    (0.13 to 0.97), while the question keeps a passage that only repeats the name out."""
    terms = dict.fromkeys(" ".join(t.split()) for t in _MARKED.findall(question.draft))
    terms.pop("", None)
    if not terms:
        return None
    return " ".join([*terms, " ".join(question.text.split())])


def best_reading(
    scorer: SentenceScorer, readings: Sequence[str | None], texts: Sequence[str]
) -> list[float]:
    """Each text read against every reading given (None and "" are skipped), as relevant as
    its best: a text that answers one way of asking answers the question."""
    given = [reading for reading in readings if reading]
    scores = scorer(given[0], texts)
    for reading in given[1:]:
        other = scorer(reading, texts)
        scores = [max(a, b) for a, b in zip(scores, other, strict=True)]
    return scores


def read_for(question: Question, texts: Sequence[str], scorer: SentenceScorer) -> list[float]:
    """Each text read against the question's sentence form; for a question found by the
    model's draft (answering.py, the second reading), the best of that, the draft and the
    names it marks before the question: the text that answers is in the documents' terms,
    which the reader's words did not reach ("PRAGMA integrity_check" for "check whether the
    db file is now corrupted"). Without a draft, its two readings are empty and skipped."""
    readings = [sentence_query(question), draft_reading(question), draft_terms(question)]
    return best_reading(scorer, readings, texts)


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


def lexical_scorer(query: str, sentences: Sequence[str]) -> list[float]:
    """Word overlap; used when no embedding model is at hand."""
    wanted = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 2}
    scores = []
    for sentence in sentences:
        words = set(re.findall(r"\w+", sentence.lower()))
        scores.append(len(wanted & words) / (len(wanted) or 1))
    return scores


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))
