"""Fit the answerability model on dev questions and write assistant/rag/judge/answerability.json."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assistant.rag.judge.answerability import FEATURES, MODEL_FILE, Answerability, Model
from assistant.rag.reading.scoring import CrossEncoderScorer
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Question, Settings
from assistant.wiring import runtime
from measuring.eval_index import open_eval_index
from measuring.evaluation.answerability_fit import (
    Example,
    cross_validate,
    fit_model,
)
from measuring.evaluation.dataset import (
    DatasetError,
    known_areas,
    load_queries,
    topic_for,
)


class Command(BaseCommand):
    help = (
        "Fit the answerability check on dev question sets (gold labels: answerable or not), "
        "report k-fold cross-validation, and write the model next to the check."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--data", nargs=2, action="append", metavar=("CORPUS", "QUERIES"), type=Path,
            help="A corpus and its dev queries (repeat for several datasets)",
        )  # fmt: skip
        parser.add_argument(
            "--report", nargs=2, action="append", metavar=("NAME", "REPORT"), type=str,
            help="An `evaluate --answers --json` report (a website's, say): its questions the "
            "gate let through, with the features the check computed, as dataset NAME (repeat)",
        )  # fmt: skip
        parser.add_argument("--features", type=Path, help="Cache of the computed features")
        parser.add_argument(
            "--keep-share", type=float, default=0.95,
            help="Share of the gated answerable questions the threshold answers",
        )  # fmt: skip
        parser.add_argument("--folds", type=int, default=5)
        parser.add_argument("--out", type=Path, default=MODEL_FILE)

    def handle(self, *args: object, **options) -> None:
        cache: Path | None = options["features"]
        if cache is not None and cache.is_file():
            examples = [Example(**row) for row in json.loads(cache.read_text())]
        else:
            if not options["data"] and not options["report"]:
                raise CommandError(
                    "Give --data CORPUS QUERIES or --report NAME REPORT (or a --features cache)."
                )
            examples = [
                e
                for corpus, queries in options["data"] or []
                for e in self._examples(corpus, queries)
            ]
            if cache is not None:
                cache.write_text(json.dumps([asdict(e) for e in examples]))
        for name, report_path in options["report"] or []:
            examples += self._reported(name, Path(report_path))
        if not examples:
            raise CommandError("No question passed the gate: nothing to fit.")
        keep = options["keep_share"]
        report = cross_validate(examples, k=options["folds"], keep_share=keep)
        coefficients, intercept, cut = fit_model(examples, keep_share=keep)
        model = {
            "features": list(FEATURES),
            "coefficients": {k: round(v, 4) for k, v in coefficients.items()},
            "intercept": round(intercept, 4),
            "threshold": round(cut, 4),
            "fitted_on": sorted({e.dataset for e in examples}),
            "n": len(examples),
            "keep_share": keep,
            "cross_validation": report,
        }
        options["out"].write_text(json.dumps(model, indent=2) + "\n")
        self.stdout.write(json.dumps(model, indent=2))

    def _reported(self, name: str, path: Path) -> list[Example]:
        """The examples an evaluate report holds: each question the gate let through, with the
        features the check computed on its kept passages."""
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))["per_query"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"--report {path}: not an evaluate --json report ({exc})") from exc
        examples = [
            Example(str(row["id"]), name, {f: float(row["answerability_features"][f])
                                           for f in FEATURES}, bool(row["answerable"]))
            for row in rows
            if isinstance(row.get("answerability_features"), dict)
        ]  # fmt: skip
        if not examples:
            raise CommandError(
                f"--report {path}: no question has answerability features (run evaluate with "
                "--answers, the quoting answerer or --check-llm-answers)."
            )
        return examples

    def _examples(self, corpus: Path, queries_path: Path) -> list[Example]:
        for path in (corpus, queries_path):
            if not path.is_file():
                raise CommandError(f"No such file: {path}")
        try:
            queries = load_queries(queries_path)
        except DatasetError as exc:
            raise CommandError(str(exc)) from exc
        index, embedder = open_eval_index(corpus, stderr=self.stderr)
        retriever = Retriever(embedder=embedder, store=index.store, reranker=runtime.reranker(),
                              chunks=index.lookup)  # fmt: skip
        check = Answerability(
            scorer=CrossEncoderScorer(runtime.reranker()),
            model=Model(dict.fromkeys(FEATURES, 0.0), 0.0, 0.5),  # features only
        )
        gate = Settings()  # the product's defaults: threshold, candidates, reranked, kept
        areas = known_areas(queries)
        dataset = queries_path.parent.name
        examples = []
        for number, query in enumerate(queries, start=1):
            question = Question(query.question, topic_for(query, areas, "auto"))
            kept = retriever.retrieve(question, gate).kept
            if kept:  # the gate refused the others: the check never sees them
                features, _ = check.features(question, kept)
                examples.append(Example(query.id, dataset, features, query.answerable))
            if number % 50 == 0:
                self.stderr.write(f"{dataset}: {number}/{len(queries)}")
        return examples
