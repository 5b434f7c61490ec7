"""How many right passages the relevance gate loses, and the trade-off of reading each
candidate a second way (evaluation/paraphrase.py)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Settings
from assistant.wiring import runtime
from measuring.eval_index import open_eval_index
from measuring.evaluation.dataset import DatasetError, load_queries
from measuring.evaluation.paraphrase import curve, probe


class Command(BaseCommand):
    help = (
        "Replay the relevance gate with second readings of each candidate (the question "
        "without its topic, its key words, the heading path): answerable questions passing, "
        "out-of-scope ones refused, and answerable ones lost although a gold passage was read."
    )

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True, type=Path)
        parser.add_argument("--queries", required=True, type=Path, action="append")
        parser.add_argument("--rows", type=Path, help="Keep the probed candidates (JSON)")
        parser.add_argument("--from-rows", type=Path, help="Replay rows an earlier run kept")
        parser.add_argument("--json", type=Path, help="Write the curves as JSON")

    def handle(self, *args: object, **options) -> None:
        if options["from_rows"]:
            rows = json.loads(options["from_rows"].read_text())
        else:
            rows = self._probe(options)
        if options["rows"]:
            options["rows"].write_text(json.dumps(rows) + "\n")
        curves = curve(rows)
        if options["json"]:
            options["json"].write_text(json.dumps(curves, indent=2) + "\n")
        for name, points in curves.items():
            self.stdout.write(f"\n{name}")
            keys = [k for k in points[0] if k != "t"]
            self.stdout.write("t      " + "  ".join(f"{k:>22}" for k in keys))
            for point in points:
                values = "  ".join(
                    f"{'-' if point[k] is None else format(point[k], '.3f'):>22}" for k in keys
                )
                self.stdout.write(f"{point['t']:<6} {values}")

    def _probe(self, options: dict) -> list[dict]:
        for path in (options["corpus"], *options["queries"]):
            if not path.is_file():
                raise CommandError(f"No such file: {path}")
        try:
            queries = [q for path in options["queries"] for q in load_queries(path)]
        except DatasetError as exc:
            raise CommandError(str(exc)) from exc
        index, embedder = open_eval_index(options["corpus"], stderr=self.stderr)
        reranker = runtime.reranker()  # the product's, as the server builds it
        retriever = Retriever(
            embedder=embedder, store=index.store, reranker=reranker, chunks=index.lookup
        )
        bar = tqdm(desc="Probing", total=len(queries), file=self.stderr._out, disable=None)
        rows = probe(
            index=index, retriever=retriever, reranker=reranker, queries=queries,
            settings=Settings(), progress=lambda: bar.update(1),
        )  # fmt: skip
        bar.close()
        return rows
