"""The whole pipeline for one question: retrieve, gate, check that the kept passages hold an
answer, and either refuse or generate. With a model that writes, the quoted answer comes first
and the written one follows (rag/written.py), so a user whose passages were found gets them
whatever the model does."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import zip_longest
from typing import Any

from assistant.rag.answer import Answer, Fallback
from assistant.rag.judge.answerability import Answerability, Verdict
from assistant.rag.judge.model_judge import ModelJudge, worth_asking
from assistant.rag.judge.unsaid import unsaid
from assistant.rag.ports import Generator, Retrieves, SectionLookup
from assistant.rag.reading.question_parts import question_parts
from assistant.rag.reading.units import MAX_PASSAGES
from assistant.rag.retrieve.queries import previous_question
from assistant.rag.types import SORRY, Candidate, Outcome, Part, Question, Retrieval, Settings
from assistant.rag.write.injection import gives_instructions
from assistant.rag.write.prompting import build_prompt
from assistant.rag.written import quote_then_write, write_alone

#: Why a question of several requests is refused when no passage passed the gate for it as
#: a whole and the check found no part answered by the passages kept for it.
NO_PART_ANSWERED = (
    "No passage is relevant to the question as a whole, and the passages relevant to one of "
    "its parts do not answer it."
)


def _refused(retrieval: Retrieval, verdict: Verdict | None = None) -> Answer:
    """Nothing to answer from: the sorry-sentence, and no generator was asked."""
    return Answer(retrieval, None, iter([SORRY, Outcome()]), generator_id="", verdict=verdict)


def _ending(parts: Iterator[Part], outcome: Outcome) -> Iterator[Part]:
    """A generator's own parts, then what happened: it answered."""
    try:
        yield from parts
    finally:
        close = getattr(parts, "close", None)
        if close is not None:
            close()
    yield outcome


class Pipeline:
    def __init__(
        self,
        *,
        retriever: Retrieves,
        generator: Generator,
        answerability: Answerability | None = None,
        fallback: Fallback | None = None,
        max_passages: int = 0,
        sections: SectionLookup | None = None,
        instructions: str = "",
        origins: tuple[str, ...] = (),
        judge: ModelJudge | None = None,
    ) -> None:
        self.retriever = retriever
        self.generator = generator
        self.answerability = answerability
        self.fallback = fallback
        #: How many kept passages, best first, the prompt carries (0: all). A model that
        #: reads its prompt slowly answers sooner from fewer (see README "Written answers").
        self.max_passages = max_passages
        #: Reads around a kept passage in its section, so a quote can go on past its chunk.
        self.sections = sections
        #: The project's own notes for a writing model (tone, product name), after the rules.
        self.instructions = instructions
        #: Sites a written answer may link to besides its passages' (the host's own pages).
        self.origins = origins
        #: The project's model, asked before a refusal the check is unsure of (model_judge.py).
        self.judge = judge

    def answer(
        self, question: Question, settings: Settings, where: Mapping[str, Any] | None = None
    ) -> Answer:
        def again(asked: Question) -> Retrieval:
            return self.retriever.retrieve(asked, settings, where)

        return self.respond(question, again(question), again=again)

    def respond(
        self,
        question: Question,
        retrieval: Retrieval,
        *,
        again: Callable[[Question], Retrieval] | None = None,
    ) -> Answer:
        """Everything after retrieval (the evaluation runner calls it with its own); `again`
        retrieves for the question read a second time, before a refusal."""
        if retrieval.query_form == "with_history":
            question = replace(question, leans_on=previous_question(question))
        kept = retrieval.kept
        verdict = None
        # One deadline for whatever the model is asked before a refusal stands.
        until = self.judge.until() if self.judge is not None else None
        by_parts = False
        if not kept:
            retrieval = self._parts_at_the_gate(question, retrieval)
            kept = retrieval.kept
            by_parts = bool(kept)
        if not kept:
            drafted = self._second_reading(question, retrieval, again, until)
            if drafted is None:
                # Nothing relevant: say so plainly and never ask a generator to improvise.
                return _refused(retrieval)
            question, retrieval, verdict = drafted
            kept = retrieval.kept
        elif self.answerability is not None:
            verdict = self.answerability.judge(question, kept, retrieval.candidates)
            retrieval.timings_ms["answerability_ms"] = verdict.ms
            if by_parts and verdict.answerable:
                # The passages passed the gate for a part, not for the question as asked: it
                # is answered only where a part is, on the passages that part kept.
                verdict = replace(verdict, answerable=False, reason=NO_PART_ANSWERED)
            if retrieval.alternative is not None:
                question, retrieval, verdict = self._better_form(question, retrieval, verdict)
                kept = retrieval.kept
            if not verdict.answerable:
                verdict = self._a_part_answered(question, kept, verdict, retrieval)
                retrieval.timings_ms["answerability_ms"] = verdict.ms
            verdict = self._second_opinion(
                question, kept, verdict, self.answerability, retrieval, until
            )
            drafted = None
            if not verdict.answerable and not verdict.missing:
                drafted = self._second_reading(question, retrieval, again, until)
            if drafted is not None:
                question, retrieval, verdict = drafted
                kept = retrieval.kept
            elif not verdict.answerable:
                # On topic, but no sentence answers: refusing beats quoting a near miss.
                return _refused(retrieval, verdict)
        fallback = self.fallback
        writes = fallback is not None and fallback.generator.id != self.generator.id
        if fallback is not None and writes:
            if verdict is None:
                verdict = fallback.answerability.judge(question, kept, retrieval.candidates)
                verdict = self._second_opinion(
                    question, kept, verdict, fallback.answerability, retrieval, until
                )
            if verdict.missing:
                # The question names what the documents do not say ("deploy to Netlify" on a
                # site that never mentions it): a model left to write alone answers it from
                # what it knows, in the passages' words. The quote would be refused; so is it.
                return _refused(retrieval, verdict)
        passages = kept[: self.max_passages or None]
        if writes:
            # Text that gives orders to an assistant is data nobody should obey: a model would.
            passages = [c for c in passages if not gives_instructions(c.chunk.text)]
            if not passages:
                return _refused(retrieval, verdict)
        prompt = build_prompt(question, passages, instructions=self.instructions)
        if self.sections is not None:
            neighbours = self.sections([c.chunk for c in prompt.passages])
            prompt = replace(prompt, neighbours=tuple(neighbours))
        arrange = getattr(self.generator, "arrange", None)
        if arrange is not None:
            # A quoting generator puts the passages in the order it cites them (from [1]).
            prompt = arrange(prompt)
        writer = self.generator.id
        parts = self.generator.stream(prompt)
        if not writes:
            ended = _ending(parts, Outcome(writer))
            return Answer(retrieval, prompt, ended, writer, verdict=verdict)
        assert fallback is not None and verdict is not None
        respond = quote_then_write if verdict.answerable else write_alone
        written = respond(writer, prompt, parts, fallback, origins=self.origins)
        return Answer(
            retrieval, prompt, written, writer, verdict=verdict,
            quote_first=verdict.answerable, quoter_id=fallback.generator.id,
        )  # fmt: skip

    def _second_opinion(
        self,
        question: Question,
        kept: Sequence[Candidate],
        verdict: Verdict,
        check: Answerability,
        retrieval: Retrieval,
        until: float | None = None,
    ) -> Verdict:
        """A refusal the check is unsure of, put to the project's model where it has one: it
        stands unless the model says the passages answer (model_judge.py)."""
        judge = self.judge
        if judge is None or not worth_asking(verdict, check.model.threshold):
            return verdict
        started = time.perf_counter()
        said = judge.answers(question, kept, until)
        retrieval.timings_ms["judge_ms"] = round((time.perf_counter() - started) * 1000, 2)
        if said is None:
            return verdict
        if said:
            return replace(verdict, answerable=True, reason="", judged_by=judge.id)
        return replace(verdict, judged_by=judge.id)

    def _second_reading(
        self,
        question: Question,
        retrieval: Retrieval,
        again: Callable[[Question], Retrieval] | None,
        until: float | None = None,
    ) -> tuple[Question, Retrieval, Verdict] | None:
        """Nothing to answer from as asked, in the reader's words. Where the project has a
        model, it drafts the answer in one sentence, in the terms the documents would use
        ("PRAGMA user_version" for "keep my own schema version number"); the draft is searched
        and read (Retriever._drafted), and what passes the same gate is answered from only when
        it names nothing the documents lack and the model, reading it, says it answers the
        question as asked. None: the refusal stands."""
        judge = self.judge
        if judge is None or again is None or question.draft:
            return None
        timings = retrieval.timings_ms
        started = time.perf_counter()
        draft = judge.drafts(question, until)
        timings["draft_ms"] = round((time.perf_counter() - started) * 1000, 2)
        if not draft:
            return None
        drafted = replace(question, draft=draft)
        found = again(drafted)
        retrieval.second_reading = found
        timings.update({f"drafted_{k}": v for k, v in found.timings_ms.items()})
        kept = found.kept
        before = {c.chunk.id for c in retrieval.kept}
        # What both readings found is the whole search: a name the question copies from the
        # asker's code ("a second SELECT", "LIKE '%word%'") is met by the words it was asked
        # in, not always by the draft's, and is no product the documents lack.
        searched = [*retrieval.candidates, *found.candidates]
        if all(c.chunk.id in before for c in kept) or unsaid(question.text, kept, searched):
            # Nothing new passed (the question as asked already kept these, and they did not
            # answer it), or the question names what the documents lack.
            return None
        started = time.perf_counter()
        said = judge.answers(question, kept, until)
        timings["judge_ms"] = round((time.perf_counter() - started) * 1000, 2)
        if not said:
            return None
        found.timings_ms = timings
        verdict = Verdict(True, 0.0, "", judged_by=judge.id, read_as=draft)
        return drafted, found, verdict

    def _better_form(
        self, question: Question, retrieval: Retrieval, verdict: Verdict
    ) -> tuple[Question, Retrieval, Verdict]:
        """A follow-up that points back at the previous question found passages both as asked
        and joined to it, and the joined form's passages still fit it as asked
        (retrieval.FOLLOW_UP_FLOOR keeps unrelated requests out). The joined form is what it
        means, so it is answered from whenever the check finds it answerable: "How long does
        it take?" as asked finds a delivery-times page first and none of its words in the
        export-time sentence (0.12); joined to "How do I export my data?", 0.81. Judged by
        score alone, the question as asked would mostly win: with the page topic a vague
        question finds a general passage of the right area with high relevance (Ray follow-ups:
        median 0.994 as asked, 0.955 joined), while the joined form finds its gold section
        more often (34 of 77 in the top five, against 26)."""
        joined = retrieval.alternative
        assert joined is not None and self.answerability is not None
        leaning = replace(question, leans_on=previous_question(question))
        other = self.answerability.judge(leaning, joined.kept, joined.candidates)
        spent = round(verdict.ms + other.ms, 2)
        joined.timings_ms = {**retrieval.timings_ms, "answerability_ms": spent}
        retrieval.timings_ms["answerability_ms"] = spent
        if other.answerable:
            return leaning, joined, other
        return question, retrieval, verdict

    def _parts_at_the_gate(self, question: Question, retrieval: Retrieval) -> Retrieval:
        """A question of several requests that no passage passes the gate for as a whole: each
        part read against the candidates the cross-encoder read, and what passes the gate for
        a part kept (with the part's relevance); `respond` then answers only where the check
        finds a part answered on its own passages ("What does the Team plan cost and how do I
        delete my account?" reads the plans passage 0.35 as a whole on an Intel Xeon, and each
        part reads its own passage over 0.99). The retrieval as it was when no part keeps a
        passage, or the question is one request, or a follow-up (not split)."""
        check = self.answerability
        if check is None or question.leans_on:
            return retrieval
        parts = question_parts(question.text)
        read = [c for c in retrieval.candidates if c.relevance is not None]
        if len(parts) < 2 or not read:
            return retrieval
        started = time.perf_counter()
        passed = [
            check.gate_part(replace(question, text=part), read, threshold=retrieval.threshold)
            for part in parts
        ]
        retrieval.timings_ms["parts_gate_ms"] = round((time.perf_counter() - started) * 1000, 2)
        # Each part's best passage first, then each part's second, ...: the check reads the
        # first few, and a part whose passages read lower is not crowded out.
        kept: list[Candidate] = []
        chosen: set[str] = set()
        for rank in zip_longest(*passed):
            for candidate in rank:
                if candidate is not None and candidate.chunk.id not in chosen:
                    kept.append(candidate)
                    chosen.add(candidate.chunk.id)
        kept = kept[:MAX_PASSAGES]
        if not kept:
            return retrieval
        ids = {c.chunk.id for c in kept}
        rest = [c for c in retrieval.candidates if c.chunk.id not in ids]
        return replace(
            retrieval,
            candidates=[*kept, *rest],
            parts_read=dict(zip(parts, passed, strict=True)),
        )

    def _a_part_answered(
        self, question: Question, kept: Sequence[Candidate], verdict: Verdict, retrieval: Retrieval
    ) -> Verdict:
        """A question of several requests is answered when the passages answer one of them
        (the answerer answers that part and names the others as not found): judged as one
        request, the part the documents do not cover pulls it under. Each part is judged on
        the passages that pass the gate for it alone ("How much does the Team plan cost and how
        do I cancel it?" on the demo: 0.05 as a whole; the price part reads *Plans* at 0.99 and
        is answerable, the cancel part has no passage at the gate), as read at the gate when
        the parts were read there. A follow-up is not split."""
        assert self.answerability is not None
        if verdict.missing:
            return verdict  # what the question names is not in the documents, in any part
        parts = [] if question.leans_on else question_parts(question.text)
        ids = {c.chunk.id for c in kept}
        spent = verdict.ms
        for part in parts if len(parts) > 1 else ():
            asked = replace(question, text=part)
            judged: Verdict | None
            if part in retrieval.parts_read:
                own = [c for c in retrieval.parts_read[part] if c.chunk.id in ids]
                judged = self.answerability.judge(asked, own) if own else None
            else:
                judged = self.answerability.judge_part(asked, kept, threshold=retrieval.threshold)
            if judged is None:
                continue
            spent = round(spent + judged.ms, 2)
            if judged.answerable:
                return replace(judged, ms=spent)
        return replace(verdict, ms=spent)
