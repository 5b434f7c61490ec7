"""`evaluate --answers`: the answer the user reads, scored against the gold answers.

Each question goes on from its retrieval through the rest of the real answer path (the
answerability check and the generator, as `Pipeline.respond` runs them) and, where the query
file has `answers_all` (ClapNQ), the answer text is scored: ROUGE-L F1 against the closest gold
answer; whether a cited passage ([n]) is a gold one; its length; and an extractive oracle, the
best one to three sentences of the kept passages by ROUGE-L: the ceiling for an answerer that
quotes, so the two numbers together say how much sentence choice leaves on the table."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from statistics import mean
from typing import Any

from rouge_score import rouge_scorer

from assistant.rag.answer import is_refusal
from assistant.rag.answering import Pipeline
from assistant.rag.ports import GeneratorUnavailable, Retrieves, SectionLookup
from assistant.rag.reading.units import split_units
from assistant.rag.types import SORRY, Candidate, Chunk, Outcome, Question, Retrieval
from assistant.rag.write.citations import markers, uncited
from assistant.rag.write.grounding import copied, source_text
from assistant.wiring import answer_path
from measuring.evaluation.dataset import Query
from measuring.evaluation.index import EvalIndex
from measuring.evaluation.metrics import median_p95
from measuring.evaluation.runner import AnswerStep

ORACLE_SENTENCES = 3
_ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(prediction: str, golds: Sequence[str]) -> float:
    """ROUGE-L F1 against the closest of the gold answers."""
    return max((_ROUGE.score(gold, prediction)["rougeL"].fmeasure for gold in golds), default=0.0)


def without_markers(text: str) -> str:
    """The answer as scored: its citation markers dropped, not a marker-like `[200]` in code."""
    return " ".join(uncited(text).split())


def cited(text: str, kept: Sequence[Candidate]) -> list[Candidate]:
    """The kept passages the answer's [n] markers point at (markers out of range are ignored)."""
    numbers = dict.fromkeys(markers(text))
    return [kept[n - 1] for n in numbers if 1 <= n <= len(kept)]


_CODE_MARKS = re.compile(r"`+")
_BLANKS = re.compile(r"\s+")


def _normalised(text: str) -> str:
    """Lower case, Markdown code marks dropped, whitespace collapsed: `task_annotations`
    written as code holds the key fact task_annotations."""
    return _BLANKS.sub(" ", _CODE_MARKS.sub("", text)).strip().lower()


def holds_fact(text: str, fact: str) -> bool:
    """The fact occurs in the text, not inside a longer word (`certifi` is not in
    "certificates"; `time_limit` is in `task_soft_time_limit`): the rule of the realistic
    sets' keyfacts.py."""
    fact = _normalised(fact)
    if not fact:
        return False
    left = r"(?<![a-z0-9])" if re.match(r"[a-z0-9]", fact) else ""
    right = r"(?![a-z0-9])" if re.search(r"[a-z0-9]$", fact) else ""
    return re.search(left + re.escape(fact) + right, _normalised(text)) is not None


def key_facts_share(facts: Sequence[object], text: str) -> float:
    """The share of the key facts the text holds; an item that is a list is met by any of
    its alternatives."""
    if not facts:
        return 1.0
    met = 0
    for item in facts:
        alternatives = item if isinstance(item, list) else [item]
        met += any(holds_fact(text, str(a)) for a in alternatives)
    return met / len(facts)


#: How many of the candidates the relevance gate turned away a refused question's report keeps.
BELOW_GATE_SHOWN = 3


def unheld(text: str, passages: Sequence[Chunk]) -> list[str]:
    """The commands, identifiers, options and links `text` names (each code span and line of
    code whole, and the names within them and the prose) that none of `passages` holds (their
    text, titles and addresses), lower case: what a reader would copy from the answer and find
    nowhere in the documents. The target is none, on every question, whoever wrote it."""
    source = source_text(
        [*(c.text for c in passages), *(c.title for c in passages), *(c.url for c in passages)]
    )
    return sorted(name for name in copied(uncited(text)) if name.rstrip("/") not in source)


def refused_by(answer: Any) -> str:
    """Who refused: the relevance gate (nothing kept), the answerability check, or the
    generator itself (an LLM's sorry-sentence)."""
    if answer.verdict is not None and not answer.verdict.answerable:
        return "answerability"
    if answer.prompt is None:
        return "gate"
    return "generator"


def kept_report(index: EvalIndex, kept: Sequence[Candidate]) -> list[dict[str, Any]]:
    """What the answer was made from, for a person reading a miss."""
    return [
        {
            "section": index.chunks[c.chunk.id].section_id if c.chunk.id in index.chunks else "",
            "title": c.chunk.title,
            "relevance": round(c.relevance or 0.0, 4),
            "text": c.chunk.text[:600],
        }
        for c in kept
    ]


def oracle(kept: Sequence[Candidate], golds: Sequence[str]) -> float:
    """Greedy: the best sentence, then whichever sentence raises ROUGE-L most, up to three,
    always read in passage order (as an extractive answer quotes them)."""
    units = [u for i, c in enumerate(kept) for u in split_units(i, c.chunk.text)]
    chosen: list[int] = []
    best = 0.0
    for _ in range(ORACLE_SENTENCES):
        gains = [
            (rouge_l(" ".join(units[j].text for j in sorted([*chosen, i])), golds), i)
            for i in range(len(units))
            if i not in chosen
        ]
        if not gains:
            break
        score, pick = max(gains)
        if score <= best:
            break
        best, chosen = score, [*chosen, pick]
    return best


def answer_outcome(
    *,
    pipeline: Pipeline,
    index: EvalIndex,
    query: Query,
    question: Question,
    retrieval: Retrieval,
    again: Callable[[Question], Retrieval] | None = None,
) -> tuple[dict[str, Any], Retrieval]:
    """The per-question outcome of the answer: `answered`/`refused` (the final text, so the
    answerability check's refusals count) and, where gold answers exist, the scores; and the
    retrieval the answer was made from."""
    answer = pipeline.respond(question, retrieval, again=again)
    retrieval = answer.retrieval
    started = time.perf_counter()
    try:
        reading = answer.read()
        text, ended = reading.text, reading.outcome
    except GeneratorUnavailable as exc:
        # A pipeline without a quote to fall back on: the generation failed, count it, go on.
        text, ended = SORRY, Outcome(answer.generator_id, "unavailable", str(exc)[:200])
    refused = is_refusal(text)
    outcome: dict[str, Any] = {"answered" if query.answerable else "refused": (
        not refused if query.answerable else refused)}  # fmt: skip
    outcome["answer_text"] = text
    outcome["generator"] = ended.generator
    kept = retrieval.kept
    outcome["kept"] = kept_report(index, kept)
    # The answer's [n] count among the passages the generator was given, in its order.
    numbered = list(answer.prompt.passages) if answer.prompt is not None else kept
    facts = query.extra.get("key_facts")
    if query.answerable and isinstance(facts, list) and facts:
        share = 0.0 if refused else key_facts_share(facts, text)
        outcome["key_facts_share"] = round(share, 4)
        outcome["key_facts_hit"] = share == 1.0
    if refused:
        outcome["refused_by"] = refused_by(answer)
        if not kept:
            # Refused at the gate: the best few candidates it turned away, to read why.
            scored = [c for c in retrieval.candidates if c.relevance is not None]
            scored.sort(key=lambda c: -(c.relevance or 0.0))
            outcome["below_gate"] = kept_report(index, scored[:BELOW_GATE_SHOWN])
        if answer.verdict is not None and answer.verdict.reason:
            outcome["refusal_reason"] = answer.verdict.reason
    else:
        outcome["cited"] = [
            index.chunks[c.chunk.id].section_id if c.chunk.id in index.chunks else c.chunk.url
            for c in cited(text, numbered)
        ]
    if ended.fallback:
        outcome["fallback"] = ended.fallback
    if ended.written:
        # How a model's written answer ended ("complete", or why the quote stood instead).
        outcome["written"] = ended.written
    if ended.withheld:
        outcome["withheld"] = list(ended.withheld)
    if answer.prompt is not None:
        outcome["generate_ms"] = round((time.perf_counter() - started) * 1000, 1)
    verdict = getattr(answer, "verdict", None)
    if verdict is not None:
        outcome["answerability"] = verdict.score
        if verdict.features:
            outcome["answerability_features"] = verdict.features
        outcome["answerability_ms"] = verdict.ms
        if "judge_ms" in retrieval.timings_ms:  # the model was asked for a second opinion
            outcome["judged_by"] = verdict.judged_by or "no answer in time"
            outcome["judge_ms"] = retrieval.timings_ms["judge_ms"]
    if "draft_ms" in retrieval.timings_ms:  # read a second time, in the model's draft
        outcome["draft_ms"] = retrieval.timings_ms["draft_ms"]
        second = retrieval if retrieval.query_form == "drafted" else retrieval.second_reading
        if second is not None:
            outcome["draft"] = second.query
            if refused:
                outcome["second_reading"] = kept_report(index, second.kept)
                if "judge_ms" in retrieval.timings_ms and verdict is None:
                    # A gate refusal whose draft's passages the model did not say yes to:
                    # it said no, or nothing in time.
                    outcome["second_reading_judge_ms"] = retrieval.timings_ms["judge_ms"]
                if not second.kept:
                    # What the draft found, under the gate: to read why nothing passed.
                    scored = [c for c in second.candidates if c.relevance is not None]
                    scored.sort(key=lambda c: -(c.relevance or 0.0))
                    outcome["second_reading_below_gate"] = kept_report(
                        index, scored[:BELOW_GATE_SHOWN]
                    )
    if refused:
        return outcome, retrieval
    # What the answer was made from: its passages, and the rest of their sections (a quote
    # reads on into the chunk before or after a kept one).
    given = {c.chunk.id: c.chunk for c in [*kept, *numbered]}
    given |= {c.id: c for c in index.section_chunks(list(given))}
    outcome["unheld"] = unheld(text, list(given.values()))
    plain = without_markers(text)
    outcome["answer_words"] = len(plain.split())
    golds = [str(g) for g in query.extra.get("answers_all") or []]  # type: ignore[attr-defined]
    if query.answerable and golds:
        outcome["answer_rougeL"] = round(rouge_l(plain, golds), 4)
        outcome["oracle_rougeL"] = round(oracle(kept, golds), 4)
        sections = {index.chunks[c.chunk.id].section_id for c in cited(text, numbered)}
        outcome["answer_cites_gold"] = bool(sections & query.relevant_ids)
    return outcome, retrieval


def summary(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means over the answered questions that have each score."""
    report: dict[str, Any] = {}
    for key in ("answer_rougeL", "oracle_rougeL", "answer_cites_gold", "answer_words"):
        values = [float(o[key]) for o in outcomes if key in o]
        report[key] = round(mean(values), 4) if values else None
    report["n_answers_scored"] = sum(1 for o in outcomes if "answer_rougeL" in o)
    report["generate_ms"] = median_p95([o["generate_ms"] for o in outcomes
                                        if "generate_ms" in o])  # fmt: skip
    report["fell_back"] = sum(1 for o in outcomes if o.get("fallback"))
    report["written_failed"] = sum(
        1 for o in outcomes if o.get("written") not in (None, "complete", "refused", "omits")
    )
    # Complete, but without a name the quote gave: shown beside the quote, not instead of it.
    report["written_omits"] = sum(1 for o in outcomes if o.get("written") == "omits")
    report["written_sentences_withheld"] = sum(len(o.get("withheld", ())) for o in outcomes)
    # Names a reader would copy that no passage the answer was made from holds (target 0).
    report["answers_naming_unheld"] = sum(1 for o in outcomes if o.get("unheld"))
    report["unheld_names"] = sum(len(o.get("unheld", ())) for o in outcomes)
    report["answerability_ms"] = median_p95([o["answerability_ms"] for o in outcomes
                                             if "answerability_ms" in o])  # fmt: skip
    return report


def judge_choice(option: str | None) -> str:
    """`evaluate --judge`: "" for the generator's own model (as a project), else the model
    named; `none` as the quoting answerer, which never judges."""
    if not option:
        return ""
    return "extractive" if option == "none" else option


def answer_step(
    index: EvalIndex,
    retriever: Retrieves,
    *,
    generator: str = "auto",
    check_llm_answers: bool = False,
    sections: SectionLookup | None = None,
    judge: str = "",
) -> AnswerStep:
    """The rest of the answer path as the product builds it (assistant/runtime.py), on the
    evaluation's own retriever, with the generator a project would choose."""

    pipeline = answer_path.pipeline(
        retriever=retriever,
        generator_choice=generator,
        check_llm_answers=check_llm_answers,
        sections=sections,
        judge_choice=judge,
    )
    return lambda query, question, retrieval, again: answer_outcome(
        pipeline=pipeline, index=index, query=query, question=question, retrieval=retrieval,
        again=again,
    )  # fmt: skip
