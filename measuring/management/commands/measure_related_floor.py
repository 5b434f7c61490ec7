"""Where to set the floor of "These pages may help" (assistant/rag/retrieve/related.py): each
question of a set goes through the real answer path (retrieval, gate, answerability check,
extractive answerer) and, for the refused ones, the best candidate's relevance is kept. At each
floor it reports the share of refused out-of-scope questions that would still be offered pages
(should be near 0), the share of refused answerable ones that would be (should be high), and how
often the gold page is among the offered ones (are they really the nearest pages?)."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import quantiles
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from assistant.rag.answer import is_refusal
from assistant.rag.retrieve.related import MAX_RELATED, RELATED_FLOOR, related_pages
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Question, Settings
from assistant.wiring import answer_path, runtime
from measuring.eval_index import open_eval_index
from measuring.evaluation.dataset import (
    DatasetError,
    known_areas,
    load_queries,
    topic_for,
)
from measuring.evaluation.runner import history_of

FLOORS = (0.0001, 0.001, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1)


class Command(BaseCommand):
    help = "Measure the floor of the related pages offered with a refusal."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True, type=Path)
        parser.add_argument("--queries", required=True, type=Path, nargs="+")
        parser.add_argument("--limit", type=int)
        parser.add_argument("--json", type=Path)

    def handle(self, *args: object, **options: Any) -> None:
        index, embedder = open_eval_index(options["corpus"], stderr=self.stderr)
        reranker = runtime.reranker()  # the product's, as the server builds it
        retriever = Retriever(
            embedder=embedder, store=index.store, reranker=reranker, chunks=index.lookup
        )
        pipeline = answer_path.pipeline(retriever=retriever, generator_choice="extractive")
        rows: list[dict[str, Any]] = []
        for path in options["queries"]:
            try:
                queries = load_queries(path)[: options["limit"] or None]
            except DatasetError as exc:
                raise CommandError(str(exc)) from exc
            areas = known_areas(queries)
            for query in queries:
                asked = Question(
                    query.question, topic_for(query, areas, "auto"), history=history_of(query)
                )
                retrieval = retriever.retrieve(asked, Settings())
                text = pipeline.respond(asked, retrieval).read().text
                if not is_refusal(text):
                    continue
                scores = [c.relevance for c in retrieval.candidates if c.relevance is not None]
                offered = related_pages(retrieval, floor=0.0, limit=MAX_RELATED)
                gold = query.gold_page
                rows.append({
                    "set": path.name, "id": query.id, "kind": query.kind or "single",
                    "answerable": query.answerable, "best": max(scores, default=0.0),
                    "gold_rank": next((n for n, p in enumerate(offered, 1)
                                       if gold and p.url.split("#")[0] == gold), 0),
                    "relevances": [p.relevance for p in offered],
                })  # fmt: skip
        if options["json"]:
            options["json"].write_text(json.dumps(rows, indent=1) + "\n")
        self.stdout.write(self.report(rows))

    def report(self, rows: list[dict[str, Any]]) -> str:
        lines = [f"refused questions: {len(rows)} (floor in use: {RELATED_FLOOR})"]
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            label = "answerable" if row["answerable"] else "out of scope / unanswerable"
            groups.setdefault(f"{row['set']} {row['kind']}: {label}", []).append(row)
        for name, group in sorted(groups.items()):
            best = sorted(r["best"] for r in group)
            cuts = quantiles(best, n=10, method="inclusive") if len(best) > 1 else best
            lines.append(f"\n{name}: n {len(group)}")
            lines.append("  best relevance deciles: " + " ".join(f"{c:.2g}" for c in cuts))
            for floor in FLOORS:
                offered = [r for r in group if r["best"] >= floor]
                gold = [
                    r for r in offered
                    if r["gold_rank"] and r["relevances"][r["gold_rank"] - 1] >= floor
                ]  # fmt: skip
                lines.append(
                    f"  floor {floor:<7} pages offered {len(offered) / len(group):.3f}"
                    + (f"   gold page among them {len(gold) / len(group):.3f}"
                       if group[0]["answerable"] else "")
                )  # fmt: skip
        return "\n".join(lines)
