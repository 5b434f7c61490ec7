"""Measure the pipeline where the product's performance targets are set (see `--help`).

    python manage.py bench                                   # everything, Ray dev data
    python manage.py bench --limit-docs 300 --questions 20 --only stages,cache
    python manage.py bench --json bench.json

Sections: `stages` (latency per stage against the bare libraries), `scale` (vector search at
100,000 chunks against exact search), `cache` (a repeated question), `concurrency` (simultaneous
WebSocket conversations and idle sockets on the real ASGI server), `ingest` (chunks per second
and an unchanged re-sync). `cache`, `concurrency` and `ingest` run in a throwaway data folder.
`local` (the local model on demo questions: first token, whole answer, tokens a second, RAM, at
1, 2 and 4 questions at once) runs only when named, as it needs `manage.py fetch_model` first;
so does `load` (first grounded words and whole answers of each generator, idle and beside two
CPU-bound processes the bench starts and stops, 1 and 4 visitors at once);
so does `openai` (the same questions through the server ASKDOCS_OPENAI_* names);
so does `overload` (the scale-out stack on a throwaway PostgreSQL database and Redis prefix:
`--overload-asks` asks at once on `--overload-webs` daphne processes with pools of
`--overload-pool`; how many answered, 503s and their Retry-After, the `askdocs.overload` log);
so does `crawl` (`--crawl-conversations` demo conversations at once with no sync running and
beside a crawl of `--crawl-site` served on 127.0.0.1, round by round: the latency ratio);
so does `flood` (the embedded default, one daphne, asked `--flood-asks` questions at once from
as many addresses: answered, 503 with Retry-After, connections reset, the slowest answer);
so does `masking` (what masking personal data adds per message of the labelled set, for the
longest question, and for texts built to make its rules backtrack).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.rag.retrieve.queries import retrieval_query
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Question
from assistant.wiring import answer_path, runtime
from assistant.wiring.adapters.chroma_naming import HnswParams
from measuring.benchmark import concurrency, masking, report, scale, sections, stages
from measuring.benchmark import options as bench_options
from measuring.benchmark.floor import RawFloor
from measuring.benchmark.options import SECTIONS, answer_settings, parse_levels
from measuring.benchmark.server import AsgiServer
from measuring.benchmark.workdir import BENCH_ORIGIN, run_child, throwaway_folder
from measuring.eval_index import open_eval_index
from measuring.evaluation.dataset import (
    DatasetError,
    Query,
    corpus_slice,
    file_digest,
    known_areas,
    load_corpus,
    load_queries,
    topic_for,
    write_corpus,
)

SCHEMA = 2  # 2: scale's search_ms is the per-project (unfiltered) search


class Command(BaseCommand):
    help = (
        "Benchmark the answer pipeline: stage latency against the bare libraries, vector search "
        "at scale, repeated questions, simultaneous WebSocket conversations, ingestion."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        bench_options.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        chosen = bench_options.chosen_sections(options)
        levels = parse_levels(options["concurrency"])
        local_levels = parse_levels(options["local_concurrency"])
        try:
            queries = load_queries(options["queries"])[: options["questions"]]
            corpus = self._corpus(options["corpus"], queries, options["limit_docs"])
        except DatasetError as exc:
            raise CommandError(str(exc)) from exc
        if not queries:
            raise CommandError(f"No questions in {options['queries']}.")
        areas = known_areas(queries)
        questions = [Question(q.question, topic_for(q, areas, "auto")) for q in queries]

        result: dict[str, Any] = {"schema": SCHEMA, "config": self._config(corpus, options)}
        result["config"]["questions"] = len(questions)
        result.update({section: None for section in (*SECTIONS, "idle")})
        if "stages" in chosen or "scale" in chosen:
            self._in_eval_index(corpus, questions, chosen, options, result)
        if {"cache", "concurrency", "ingest", "recall"} & set(chosen):
            served = self._corpus(corpus, queries, options["ingest_docs"])
            self._in_workdir(served, questions, chosen, levels, options, result)
        if "local" in chosen:
            result["local"] = sections.measure_local_model(local_levels, options, self.stderr)
        if "load" in chosen:
            load_levels = parse_levels(options["load_concurrency"])
            result["load"] = sections.measure_generators_under_load(
                load_levels, options, self.stderr
            )
        if "openai" in chosen:
            result["openai"] = sections.measure_openai_server(local_levels, options, self.stderr)
        if "overload" in chosen:
            result["overload"] = sections.measure_scale_out_overload(options, self.stderr)
        if "crawl" in chosen:
            result["crawl"] = sections.measure_answers_beside_a_crawl(options, self.stderr)
        if "flood" in chosen:
            result["flood"] = sections.measure_embedded_flood(options, self.stderr)
        if "masking" in chosen:
            result["masking"] = masking.measure_masking()
        result["targets"] = report.check_targets(result)
        if options["json"]:
            options["json"].write_text(json.dumps(result, indent=2) + "\n")
        self.stdout.write(report.table(result))

    def _corpus(self, path: Path, queries: list[Query], limit: int | None) -> Path:
        if not limit:
            return path
        folder = Path(settings.DATA_DIR) / "eval" / "slices"
        folder.mkdir(parents=True, exist_ok=True)
        key = "|".join([file_digest(path), str(limit), *(q.id for q in queries)])
        sliced = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}-{limit}.jsonl"
        if not sliced.is_file():
            write_corpus(sliced, corpus_slice(load_corpus(path), queries, limit))
        return sliced

    def _config(self, corpus: Path, options: dict[str, Any]) -> dict[str, Any]:
        embedder, reranker = runtime.embedder(), runtime.reranker()
        defaults = answer_settings(options)
        return {
            "corpus": str(corpus),
            "documents": sum(1 for line in corpus.open(encoding="utf-8") if line.strip()),
            "queries": str(options["queries"]),
            "runs": options["runs"],
            "embedder": embedder.id,
            "reranker": reranker.id,
            "rerank_tokens": settings.ASKDOCS_RERANK_MAX_TOKENS,
            "chunk_tokens": settings.ASKDOCS_CHUNK_TOKENS,
            "num_candidates": defaults.num_candidates,
            "threshold": defaults.threshold,
            "model_threads": settings.ASKDOCS_MODEL_THREADS,
            "retrieval": options["retrieval"],
            "server": options["server"],
            "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }

    def _in_eval_index(
        self,
        corpus: Path,
        questions: list[Question],
        chosen: list[str],
        options: dict[str, Any],
        result: dict[str, Any],
    ) -> None:
        index, embedder = open_eval_index(corpus, stderr=self.stderr)
        result["config"]["chunks"] = len(index.chunks)
        settings_ = answer_settings(options)
        reranker = runtime.reranker()
        lexical = getattr(index, "lexical", None)
        retriever = Retriever(
            embedder=embedder, store=index.store, reranker=reranker, chunks=index.lookup,
            lexical=lexical() if lexical and options["retrieval"] == "hybrid" else None,
        )  # fmt: skip
        if "stages" in chosen:
            self.stderr.write("Timing stages ...")
            result["stages"] = stages.measure_stages(
                retriever=retriever,
                pipeline_for=lambda timed: answer_path.pipeline(
                    retriever=timed, generator_choice="auto"
                ),
                floor=RawFloor.build(embedder=embedder, store=index.store, reranker=reranker),
                questions=questions, settings=settings_, runs=options["runs"],
            )  # fmt: skip
        if "scale" in chosen:
            self.stderr.write(f"Vector search at {options['scale_chunks']} chunks ...")
            import numpy as np

            vectors = np.asarray(
                [embedder.embed_query(retrieval_query(q)) for q in questions], dtype=np.float32
            )
            result["scale"] = scale.measure_scale(
                real=scale.stored_vectors(index.store), queries=vectors,
                target=options["scale_chunks"], k=retriever.search_depth(settings_),
                runs=options["runs"], embedder_id=embedder.id,
                hnsw=getattr(runtime.chunk_store(), "hnsw", None) or HnswParams(),
                progress=lambda line: self.stderr.write(f"  {line}"),
            )  # fmt: skip

    def _in_workdir(
        self,
        corpus: Path,
        questions: list[Question],
        chosen: list[str],
        levels: list[int],
        options: dict[str, Any],
        result: dict[str, Any],
    ) -> None:
        asked = [(q.text, q.topic) for q in questions]
        with throwaway_folder(options["workdir"], prefix="askdocs-bench-") as folder:
            try:
                self.stderr.write(
                    f"Indexing {corpus.name} into a throwaway project in {folder} ..."
                )
                child = run_child(
                    folder,
                    {"corpus": str(corpus.resolve()), "origin": BENCH_ORIGIN, "questions": asked,
                     "runs": options["runs"], "cache": "cache" in chosen,
                     "recall": "recall" in chosen, "candidates": options["candidates"]},
                    timeout=24 * 3600,
                )  # fmt: skip
                result["ingest"] = child["ingest"]
                result["cache"] = child.get("cache")
                result["recall"] = child.get("recall")
                if "concurrency" in chosen:
                    self._served(folder, child["project_key"], asked, levels, options, result)
            except RuntimeError as exc:
                raise CommandError(str(exc)) from exc

    def _served(
        self,
        folder: Path,
        project_key: str,
        asked: list[tuple[str, str]],
        levels: list[int],
        options: dict[str, Any],
        result: dict[str, Any],
    ) -> None:
        """Simultaneous conversations and idle sockets on the real ASGI server."""
        self.stderr.write(f"Serving it with {options['server']} ...")
        with AsgiServer(folder, kind=options["server"]) as server:
            url = concurrency.socket_url(server.ws_url, project_key)
            result["concurrency"] = concurrency.measure_concurrency(
                url=url, origin=BENCH_ORIGIN, questions=asked, levels=levels,
                runs=options["runs"], progress=lambda line: self.stderr.write(f"  {line}"),
            )  # fmt: skip
            if options["idle_sockets"]:
                result["idle"] = concurrency.measure_idle(
                    url=url, origin=BENCH_ORIGIN, count=options["idle_sockets"],
                    rss_kb=server.rss_kb,
                )  # fmt: skip
