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
beside a crawl of `--crawl-site` served on 127.0.0.1, round by round: the latency ratio).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.ask.intake import settings_for
from assistant.measuring.benchmark import concurrency, local, report, scale, stages
from assistant.measuring.benchmark.floor import RawFloor
from assistant.measuring.benchmark.server import SERVERS, AsgiServer
from assistant.measuring.benchmark.workdir import BENCH_ORIGIN, run_child
from assistant.measuring.eval_index import open_eval_index
from assistant.measuring.evaluation.dataset import (
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
from assistant.models import Project
from assistant.rag.retrieve.queries import retrieval_query
from assistant.rag.retrieve.retriever import Retriever
from assistant.rag.types import Question, Settings
from assistant.wiring import runtime
from assistant.wiring.adapters.chroma_naming import HnswParams

SECTIONS = (
    "stages",
    "scale",
    "cache",
    "concurrency",
    "ingest",
    "recall",
    "local",
    "load",
    "openai",
    "overload",
    "crawl",
)
# `local` and `load` need the model file, `openai` a server, `overload` PostgreSQL and Redis,
# `crawl` a site to crawl for minutes: only when named.
DEFAULT_SECTIONS = SECTIONS[:-5]
RAY = Path(settings.BASE_DIR).parent / "shared" / "eval" / "ray_docs_qa"
SCHEMA = 2  # 2: scale's search_ms is the per-project (unfiltered) search


def _levels(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--concurrency takes numbers like 1,4,16, not {text!r}") from None
    if not levels or any(n < 1 or n > 256 for n in levels):
        raise CommandError("--concurrency levels must be between 1 and 256.")
    return levels


class Command(BaseCommand):
    help = (
        "Benchmark the answer pipeline: stage latency against the bare libraries, vector search "
        "at scale, repeated questions, simultaneous WebSocket conversations, ingestion."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=RAY / "corpus.jsonl")
        parser.add_argument("--queries", type=Path, default=RAY / "queries_dev.jsonl")
        parser.add_argument(
            "--limit-docs", type=int, metavar="N",
            help="bench on N documents of the corpus: those holding the answers of the chosen "
            "questions first, then the others in file order (default: the whole corpus)",
        )  # fmt: skip
        parser.add_argument("--questions", type=int, default=50, help="first N of the queries")
        parser.add_argument("--runs", type=int, default=3, help="runs; medians are over them")
        parser.add_argument(
            "--only",
            default=",".join(DEFAULT_SECTIONS),
            metavar="SECTIONS",
            help=f"comma-separated sections to run, of: {', '.join(SECTIONS)} (default: all "
            "but local, load, openai, overload and crawl)",
        )
        parser.add_argument(
            "--candidates", type=int, help="candidates a question (default: a new project's)"
        )
        parser.add_argument(
            "--retrieval", choices=["hybrid", "vector"],
            default="hybrid" if settings.ASKDOCS_LEXICAL_SEARCH else "vector",
            help="hybrid (as the product, unless ASKDOCS_LEXICAL_SEARCH is off): the best of BM25 "
            "and the vector search fused join those the cross-encoder reads; vector: alone",
        )  # fmt: skip
        parser.add_argument("--scale-chunks", type=int, default=100_000)
        parser.add_argument("--concurrency", default="1,4,16", help="simultaneous conversations")
        parser.add_argument(
            "--local-concurrency",
            default="1,2,4",
            help="local, openai: questions asked at once",
        )
        parser.add_argument(
            "--load-concurrency", default="1,4", help="load: visitors asking at once"
        )
        parser.add_argument(
            "--load-generators", default="extractive,local",
            help="load: the generators to measure (extractive, local, ollama)",
        )  # fmt: skip
        parser.add_argument("--idle-sockets", type=int, default=500)
        parser.add_argument("--overload-asks", type=int, default=200, help="overload: asks at once")
        parser.add_argument("--overload-webs", type=int, default=2, help="overload: web processes")
        parser.add_argument(
            "--overload-pool", type=int, default=10, help="overload: DATABASE_POOL_SIZE each"
        )
        parser.add_argument(
            "--overload-pool-timeout", type=float, default=30.0,
            help="overload: DATABASE_POOL_TIMEOUT, seconds",
        )  # fmt: skip
        parser.add_argument(
            "--crawl-site", type=Path, default=Path("/usr/share/doc/python-celery-doc/html"),
            help="crawl: a folder of HTML pages to serve and crawl (index.html first)",
        )  # fmt: skip
        parser.add_argument(
            "--crawl-conversations", type=int, default=16, help="crawl: conversations at once"
        )
        parser.add_argument(
            "--crawl-seconds", type=float, default=120.0,
            help="crawl: each round's crawl stops after this long (its run_seconds)",
        )  # fmt: skip
        parser.add_argument(
            "--postgres", default="postgres://postgres@127.0.0.1:5432",
            help="overload: a PostgreSQL server where a throwaway database may be created",
        )  # fmt: skip
        parser.add_argument(
            "--redis", default="redis://127.0.0.1:6379/14",
            help="overload: a Redis database (its keys under a throwaway prefix)",
        )  # fmt: skip
        parser.add_argument(
            "--ingest-docs", type=int, help="index only N documents into the throwaway project"
        )
        parser.add_argument("--server", choices=SERVERS, default="daphne")
        parser.add_argument(
            "--workdir", type=Path, help="keep the throwaway data folder here (reused next time)"
        )
        parser.add_argument("--json", type=Path, help="write the report as JSON to this file")

    def handle(self, *args: Any, **options: Any) -> None:
        chosen = [s.strip() for s in options["only"].split(",") if s.strip()]
        unknown = sorted(set(chosen) - set(SECTIONS))
        if unknown or not chosen:
            raise CommandError(f"--only takes some of {', '.join(SECTIONS)}; not {unknown}.")
        for name in ("questions", "runs", "scale_chunks"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")
        if options["idle_sockets"] < 0:
            raise CommandError("--idle-sockets cannot be negative.")
        for name in ("limit_docs", "ingest_docs", "candidates"):
            if options[name] is not None and options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")
        levels = _levels(options["concurrency"])
        local_levels = _levels(options["local_concurrency"])
        if options["json"] and not options["json"].resolve().parent.is_dir():
            raise CommandError(f"No folder for --json: {options['json'].resolve().parent}")
        for path in (options["corpus"], options["queries"]):
            if not path.is_file():
                raise CommandError(f"No such file: {path}")
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
            result["local"] = self._local(local_levels, options)
        if "load" in chosen:
            result["load"] = self._load(_levels(options["load_concurrency"]), options)
        if "openai" in chosen:
            result["openai"] = self._openai(local_levels, options)
        if "overload" in chosen:
            result["overload"] = self._overload(options)
        if "crawl" in chosen:
            result["crawl"] = self._crawl(options)
        result["targets"] = report.check_targets(result)
        if options["json"]:
            options["json"].write_text(json.dumps(result, indent=2) + "\n")
        self.stdout.write(report.table(result))

    def _local(self, levels: list[int], options: dict[str, Any]) -> dict[str, Any]:
        from django.test.utils import override_settings

        from assistant.demo import demo_export
        from assistant.rag.ports import GeneratorUnavailable

        index, embedder = open_eval_index(demo_export(), stderr=self.stderr)
        retriever = Retriever(
            embedder=embedder, store=index.store, reranker=runtime.reranker(), chunks=index.lookup
        )
        self.stderr.write("The local model on demo questions ...")
        # Every question is read anew (no earlier prompt's state kept in RAM), as the first
        # visitor to ask it would wait; the rules at the start of each prompt stay cached.
        with override_settings(ASKDOCS_LOCAL_PROMPT_CACHE_MIB=0):
            runtime.reset()
            pipeline = runtime.pipeline(retriever=retriever, generator_choice="local")
            try:
                return local.measure_local(
                    pipeline=pipeline, settings=self._settings(options), levels=levels,
                    runs=options["runs"], progress=lambda line: self.stderr.write(f"  {line}"),
                )  # fmt: skip
            except GeneratorUnavailable as exc:
                raise CommandError(f"The local model cannot answer: {exc}") from exc
            finally:
                runtime.reset()

    def _demo_retriever(self) -> Retriever:
        from assistant.demo import demo_export

        index, embedder = open_eval_index(demo_export(), stderr=self.stderr)
        return Retriever(
            embedder=embedder, store=index.store, reranker=runtime.reranker(), chunks=index.lookup
        )

    def _load(self, levels: list[int], options: dict[str, Any]) -> dict[str, Any]:
        from assistant.measuring.benchmark.load import measure_load

        retriever = self._demo_retriever()
        names = [n.strip() for n in options["load_generators"].split(",") if n.strip()]
        if not names or set(names) - {"extractive", "local", "ollama"}:
            raise CommandError("--load-generators takes some of extractive, local, ollama.")
        self.stderr.write("Each generator idle and beside two CPU-bound processes ...")
        runtime.reset()
        try:
            return measure_load(
                pipelines={
                    name: runtime.pipeline(retriever=retriever, generator_choice=name)
                    for name in names
                },
                settings=self._settings(options), levels=levels, runs=options["runs"],
                progress=lambda line: self.stderr.write(f"  {line}"),
            )  # fmt: skip
        finally:
            runtime.reset()

    def _openai(self, levels: list[int], options: dict[str, Any]) -> dict[str, Any]:
        from assistant.measuring.benchmark.endpoint import measure_endpoint

        if not settings.ASKDOCS_OPENAI_BASE_URL:
            raise CommandError("--only openai needs ASKDOCS_OPENAI_BASE_URL (and its model, key).")
        retriever = self._demo_retriever()
        self.stderr.write(f"{settings.ASKDOCS_OPENAI_BASE_URL} on demo questions ...")
        runtime.reset()
        try:
            return measure_endpoint(
                pipeline=runtime.pipeline(retriever=retriever, generator_choice="openai"),
                settings=self._settings(options), levels=levels, runs=options["runs"],
                progress=lambda line: self.stderr.write(f"  {line}"),
            )  # fmt: skip
        finally:
            runtime.reset()

    def _overload(self, options: dict[str, Any]) -> dict[str, Any]:
        from assistant.measuring.benchmark.overload import measure_overload

        for name in ("overload_asks", "overload_webs", "overload_pool"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")
        keep = options["workdir"]
        folder = keep or Path(tempfile.mkdtemp(prefix="askdocs-bench-overload-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.stderr.write(f"The scale-out stack in {folder} ...")
        try:
            return measure_overload(
                folder=folder, postgres=options["postgres"], redis=options["redis"],
                asks=options["overload_asks"], webs=options["overload_webs"],
                pool=options["overload_pool"], pool_timeout=options["overload_pool_timeout"],
                server=options["server"], progress=lambda line: self.stderr.write(f"  {line}"),
            )  # fmt: skip
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)

    def _crawl(self, options: dict[str, Any]) -> dict[str, Any]:
        from assistant.measuring.benchmark.crawl import measure_crawl

        if not (options["crawl_site"] / "index.html").is_file():
            raise CommandError(f"No index.html in --crawl-site {options['crawl_site']}")
        if options["crawl_conversations"] < 1 or options["crawl_seconds"] < 10:
            raise CommandError("--crawl-conversations must be at least 1, --crawl-seconds 10.")
        keep = options["workdir"]
        folder = keep or Path(tempfile.mkdtemp(prefix="askdocs-bench-crawl-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.stderr.write(f"Answers beside a crawl of {options['crawl_site']}, in {folder} ...")
        try:
            return measure_crawl(
                folder=folder, site=options["crawl_site"],
                conversations=options["crawl_conversations"], runs=options["runs"],
                crawl_seconds=options["crawl_seconds"], server=options["server"],
                progress=lambda line: self.stderr.write(f"  {line}"),
            )  # fmt: skip
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)

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

    def _settings(self, options: dict[str, Any]) -> Settings:
        """What a new project answers with, with --candidates applied."""
        defaults = settings_for(Project())
        if options["candidates"]:
            return replace(defaults, num_candidates=options["candidates"])
        return defaults

    def _config(self, corpus: Path, options: dict[str, Any]) -> dict[str, Any]:
        embedder, reranker = runtime.embedder(), runtime.reranker()
        defaults = self._settings(options)
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
        settings_ = self._settings(options)
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
                pipeline_for=lambda timed: runtime.pipeline(
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
        keep = options["workdir"]
        folder = keep or Path(tempfile.mkdtemp(prefix="askdocs-bench-"))
        folder.mkdir(parents=True, exist_ok=True)
        asked = [(q.text, q.topic) for q in questions]
        try:
            self.stderr.write(f"Indexing {corpus.name} into a throwaway project in {folder} ...")
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
                self.stderr.write(f"Serving it with {options['server']} ...")
                with AsgiServer(folder, kind=options["server"]) as server:
                    url = concurrency.socket_url(server.ws_url, child["project_key"])
                    result["concurrency"] = concurrency.measure_concurrency(
                        url=url, origin=BENCH_ORIGIN, questions=asked, levels=levels,
                        runs=options["runs"], progress=lambda line: self.stderr.write(f"  {line}"),
                    )  # fmt: skip
                    if options["idle_sockets"]:
                        result["idle"] = concurrency.measure_idle(
                            url=url, origin=BENCH_ORIGIN, count=options["idle_sockets"],
                            rss_kb=server.rss_kb,
                        )  # fmt: skip
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)
