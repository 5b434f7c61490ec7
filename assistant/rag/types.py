"""Plain data passed through the answer pipeline. No Django, no model libraries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SORRY = "I'm sorry, I couldn't find an answer to your question."

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of the conversation so far."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    topic: str = ""
    history: tuple[Turn, ...] = ()
    #: What the user told the assistant earlier that is relevant here (see rag/memory.py).
    #: Reaches the model as a conversation turn pair, never the retrieval query.
    facts: tuple[str, ...] = ()
    #: The previous question, when this one leans on it and the passages found for the two
    #: joined are the ones answered from: sentences are then judged against both together
    #: ("How do I export my data? How long does it take?").
    leans_on: str = ""
    #: The project's model's one-sentence answer in the documents' terms, when the question
    #: as asked found nothing to answer from: the second reading searches and reads it
    #: (answering.py, model_judge.py). The question stays what is judged and answered.
    draft: str = ""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage as stored: the text that is embedded and reranked, and where it came from."""

    id: str
    text: str
    title: str = ""
    url: str = ""
    source_id: int | None = None
    #: The document the passage was cut from, and its place in it: quoted passages of one
    #: document are read in its order (install before log in). "" / -1 when unknown.
    document: str = ""
    ordinal: int = -1
    #: The kind of page it was cut from: "" a guide, "reference", "changelog". A guide that
    #: answers as well is put first (retrieve/gate.py PAGE_KIND_PENALTY).
    kind: str = ""
    #: An answer the project's team wrote (a curated answer): when it passes the gate it leads.
    curated: bool = False


@dataclass(slots=True)
class Candidate:
    """A chunk found by vector or lexical search, scored by the reranker. `similarity` is the
    cosine to the query, None when only lexical search found the chunk; `relevance` is None
    when the cross-encoder did not read it (beyond `rerank_top`), and such a chunk is never
    kept."""

    chunk: Chunk
    similarity: float | None
    relevance: float | None = None
    kept: bool = False


#: What one more reranked chunk adds to a question: 8 ms on this machine's two cores, the
#: median of `manage.py bench --only stages` stage `rerank_per_chunk` (the rerank stage over the
#: chunks it read: 7.8 ms, 20 Ray questions x 3 runs, 2026-11-25; 13.7 ms while another process
#: held a core). The console's help text quotes it; see docs/answers.md.
RERANK_MS_PER_CHUNK = 8

#: The relevance gate's threshold of a new project.
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class Settings:
    """Per-project knobs of the pipeline."""

    threshold: float = DEFAULT_THRESHOLD
    num_candidates: int = 20
    max_kept: int = 5
    rerank: bool = True
    #: How many of the candidates, best first by search, the cross-encoder reads (0: all).
    #: Each costs RERANK_MS_PER_CHUNK; on the Ray dev set, reranking the top 8 of 20
    #: matched reranking all 20 at 256 tokens (page-hit@5 0.702 vs 0.696) for a fifth of it.
    rerank_top: int = 8


@dataclass(slots=True)
class Retrieval:
    """What retrieval did for one question: the query as sent, every candidate, timings."""

    query: str
    candidates: list[Candidate]
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: The texts embedded and searched (the query, and the question without its topic).
    searched: list[str] = field(default_factory=list)
    #: Which form of the query won: "question" (as asked) or "with_history" (a follow-up
    #: joined to the previous question, see retrieve.queries.follow_up_query).
    query_form: str = "question"
    #: For a follow-up that found passages both as asked and joined to the previous question
    #: (and the joined form's passages still fit the question as asked): the joined form. The
    #: answerability check judges both and the better one is answered from (answering.py).
    alternative: Retrieval | None = None
    #: The relevance the gate asked of a kept candidate (the project's threshold).
    threshold: float = DEFAULT_THRESHOLD
    #: The queries the cross-encoder read the candidates it scored against: `(topic) question`,
    #: the question without its topic, the request without the situation told before it.
    readings: list[str] = field(default_factory=list)
    #: For a question that found nothing to answer from as asked: what the second reading, in
    #: the project's model's draft, found (answering.py); its `query` is the draft.
    second_reading: Retrieval | None = None
    #: For a question of several requests that no passage passed the gate for as a whole:
    #: each part's candidates that passed the gate for it alone, best first (answering.py).
    parts_read: dict[str, list[Candidate]] = field(default_factory=dict)

    @property
    def kept(self) -> list[Candidate]:
        return [c for c in self.candidates if c.kept]

    @property
    def best_relevance(self) -> float | None:
        scores = [c.relevance for c in self.candidates if c.relevance is not None]
        return max(scores) if scores else None


@dataclass(frozen=True, slots=True)
class Waiting:
    """What a generator yields, between text deltas, while the answer has not started: a local
    model answers one question at a time, so a question may wait for the ones `ahead` of it,
    and then while the model reads the prompt (`read`: the share read, 0 to 1). Doors that
    stream show it to the visitor; the others skip it."""

    ahead: int = 0
    read: float = 0.0


@dataclass(frozen=True, slots=True)
class Cut:
    """What a generator yields when it stopped because its answer reached its length limit
    (not at an end it chose): the words after the last full sentence are an unfinished
    thought, and whoever shows the answer says that it was cut."""


@dataclass(frozen=True, slots=True)
class Written:
    """In an answer's parts: the quoted answer has been said (every text part before this),
    and the model's written answer follows (every text part after it). The quote stands until
    the written answer is complete: the model may still stall, be busy or be withheld."""


@dataclass(frozen=True, slots=True)
class Unwritten:
    """In an answer's parts: the written answer ended before it was complete, and why
    (`busy`, `unavailable`, `refused`, `ungrounded`, `cut`, `late`). The quote stands; text
    already written stays as it was (whole sentences)."""

    reason: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The last of an answer's parts, when they are read to their end: what happened, as a
    value. `generator` is whose text stands (the quoting answerer's id when a model's written
    answer did not replace the quote); `written` how a model's written answer ended
    ("complete", "omits": complete but without a name the quote gives, an `Unwritten` reason,
    "stopped" or "late" when whoever read the parts closed them; "" when no model wrote);
    `fallback` why another generator's text stands, in the words of the one that did not (for
    the log and the console, never a visitor); `withheld` the written sentences the grounding
    check kept from the visitor, each with its reason."""

    generator: str = ""
    written: str = ""
    fallback: str = ""
    withheld: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        """Why another generator's text stands, as a short code a visitor may see ("" when the
        chosen one's does): `busy`, `unavailable`, `late`, `omits`, … A model server's own
        words (its address, its error body) stay in `fallback`, for the log and the console."""
        return (self.written or "unavailable") if self.fallback else ""


#: One part of an answer as it streams.
Part = str | Waiting | Cut | Written | Unwritten | Outcome


@dataclass(frozen=True, slots=True)
class Prompt:
    """Everything a generator may use. LLMs read system + messages; the extractive
    generator reads question + passages directly."""

    system: str
    messages: tuple[Turn, ...]  # conversation so far, ending with the user's question
    question: Question
    passages: tuple[Candidate, ...]
    #: The chunks right before and after kept passages in their sections (not kept
    #: themselves): a quote may read on into the next ones, and start in the one before
    #: with what a sentence points back to (ports.SectionLookup).
    neighbours: tuple[Chunk, ...] = ()
