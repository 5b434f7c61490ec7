import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from assistant.models import PIPELINE_DEFAULTS, Project
from assistant.rag.retrieve.retriever import Retriever
from assistant.wiring.adapters.flashrank_reranker import FlashrankReranker
from measuring.eval_index import open_eval_index
from measuring.evaluation import answers
from measuring.evaluation.answers import answer_step, judge_choice
from measuring.evaluation.compare import (
    ComparisonError,
    compare,
    format_comparison,
    load_run,
)
from measuring.evaluation.dataset import DatasetError, Query, load_queries, spread
from measuring.evaluation.misses import misses_markdown
from measuring.evaluation.runner import RunConfig, evaluate
from measuring.evaluation.site_report import format_site


class Command(BaseCommand):
    help = (
        "Run a question set with gold answers through the real retrieval path (topic prefix, "
        "vector search, rerank, relevance gate) and report ranking and gate metrics."
    )

    def add_arguments(self, parser):
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("--corpus", type=Path, help="A pre-split corpus (JSON Lines)")
        where.add_argument(
            "--site", metavar="DIR_OR_URL",
            help="A documentation website: a folder (served on a local port for the run) or a "
            "base URL, crawled and indexed through the Website connector and the sync path; "
            "gold URLs in the query file are relative to its root",
        )  # fmt: skip
        parser.add_argument("--queries", required=True, type=Path)
        parser.add_argument(
            "--start", default="", help="--site: the start page, relative to the root"
        )
        parser.add_argument(
            "--max-pages", type=int, default=2000, help="--site: the crawl's page limit"
        )
        parser.add_argument(
            "--fresh", action="store_true",
            help="--site: crawl and index anew instead of re-syncing the kept index",
        )  # fmt: skip
        parser.add_argument(
            "--topic", choices=["auto", "none", "other"], default="auto",
            help="The page topic sent with each question: auto, the gold page's docs area; "
            "other, another area (the widget opened on a page about something else); none",
        )  # fmt: skip
        parser.add_argument("--no-rerank", action="store_true")
        parser.add_argument("--threshold", type=float, default=PIPELINE_DEFAULTS.threshold)
        parser.add_argument(
            "--candidates", type=int, default=Project._meta.get_field("num_candidates").default,
            help="How many search results the cross-encoder scores",
        )  # fmt: skip
        parser.add_argument(
            "--rerank-top", type=int, default=Project._meta.get_field("rerank_top").default,
            help="How many candidates, best first by search, the cross-encoder reads (0: all)",
        )  # fmt: skip
        parser.add_argument(
            "--retrieval", choices=["hybrid", "vector"],
            default="hybrid" if settings.ASKDOCS_LEXICAL_SEARCH else "vector",
            help="hybrid (as the product, unless ASKDOCS_LEXICAL_SEARCH is off): the best of BM25 "
            "and the vector search fused join those the cross-encoder reads; vector: alone",
        )  # fmt: skip
        parser.add_argument(
            "--rerank-tokens", type=int, default=settings.ASKDOCS_RERANK_MAX_TOKENS,
            help="Query and passage tokens the cross-encoder reads",
        )  # fmt: skip
        parser.add_argument(
            "--answers", action="store_true",
            help="Also answer each question (answerability check, then the generator) and score "
            "the answer against `answers_all`",
        )  # fmt: skip
        parser.add_argument(
            "--generator", choices=["auto", "extractive", "ollama", "local", "openai"],
            default="auto",
            help="--answers: who writes the answer (auto: Ollama when OLLAMA_HOST is set, else "
            "the quoting extractive answerer; local: the local model; openai: the server "
            "ASKDOCS_OPENAI_BASE_URL names)",
        )  # fmt: skip
        parser.add_argument(
            "--check-llm-answers", action="store_true",
            help="--answers with an LLM: the answerability check runs before it (as the "
            "project setting), instead of the model judging for itself",
        )  # fmt: skip
        parser.add_argument(
            "--judge", choices=["local", "ollama", "openai", "none"],
            help="--answers: the model asked before a refusal the answerability check is unsure "
            "of (default: the generator's model, as in a project; none: never ask)",
        )  # fmt: skip
        parser.add_argument("--limit", type=int, help="Only the first N queries")
        parser.add_argument(
            "--sample", type=int, metavar="N",
            help="Only N queries spread evenly over the file (keeps its mix of answerable and "
            "unanswerable questions, which --limit does not)",
        )  # fmt: skip
        parser.add_argument("--json", type=Path, help="Write the report as JSON to this file")
        parser.add_argument(
            "--misses", type=Path,
            help="--answers: write each miss (refused, answered without its key facts or its "
            "gold section, or an unanswerable question answered) with what was kept and said, "
            "as Markdown",
        )  # fmt: skip
        parser.add_argument(
            "--baseline", type=Path,
            help="A report an earlier `--json` wrote: compare question by question against it",
        )  # fmt: skip

    def handle(self, *args: object, **options) -> None:
        corpus_path: Path | None = options["corpus"]
        self._check(options)
        baseline = self._baseline(options)
        queries = self._queries(options)
        if options["site"]:
            self._site(options, queries)
            return
        assert corpus_path is not None  # noqa: S101 - the argument group requires one
        report = self._run(corpus_path, queries, options)
        unpaired = None
        if baseline is not None:
            try:
                report["vs_baseline"] = compare(baseline, report["per_query"])
            except ComparisonError as exc:
                unpaired = exc  # the run itself is still written and shown
        self._write(report, queries, options)
        self.stdout.write(self._format(report))
        if unpaired is not None:
            raise CommandError(f"--baseline: {unpaired}")
        if "vs_baseline" in report:
            self.stdout.write(format_comparison(report["vs_baseline"]))

    @staticmethod
    def _check(options: dict) -> None:
        """Refuses bad arguments before anything is loaded."""
        for path in (options["corpus"], options["queries"]):
            if path is not None and not path.is_file():
                raise CommandError(f"No such file: {path}")
        if not 0.0 <= options["threshold"] <= 1.0:
            raise CommandError("--threshold must be between 0 and 1.")
        if not 1 <= options["candidates"] <= 200:
            raise CommandError("--candidates must be between 1 and 200.")
        if not 0 <= options["rerank_top"] <= 200:
            raise CommandError("--rerank-top must be between 0 and 200.")
        if not 32 <= options["rerank_tokens"] <= 512:
            raise CommandError("--rerank-tokens must be between 32 and 512.")
        for name in ("json", "misses"):
            if options[name] and not options[name].parent.is_dir():
                raise CommandError(f"--{name}: no such folder: {options[name].parent}")
        if options["misses"] and not options["answers"]:
            raise CommandError("--misses needs --answers.")

    @staticmethod
    def _baseline(options: dict) -> list[dict[str, Any]] | None:
        if not options["baseline"]:
            return None
        try:
            return load_run(options["baseline"])
        except ComparisonError as exc:
            raise CommandError(f"--baseline: {exc}") from exc

    @staticmethod
    def _queries(options: dict) -> list[Query]:
        """The questions to ask: the file's, or --sample of them, or its first --limit."""
        try:
            queries = load_queries(options["queries"])
        except DatasetError as exc:
            raise CommandError(str(exc)) from exc
        if options["sample"]:
            if options["sample"] < 1:
                raise CommandError("--sample must be at least 1.")
            queries = spread(queries, options["sample"])
        if options["limit"]:
            queries = queries[: options["limit"]]
        return queries

    def _run(self, corpus_path: Path, queries: list[Query], options: dict) -> dict:
        """Asks the questions over the corpus's index, as the product retrieves (and answers)."""
        index, embedder = open_eval_index(corpus_path, stderr=self.stderr)

        reranker = FlashrankReranker(
            cache_dir=settings.ASKDOCS_MODEL_CACHE, max_tokens=options["rerank_tokens"],
            threads=settings.ASKDOCS_MODEL_THREADS,
        )  # fmt: skip
        retriever = Retriever(
            embedder=embedder, store=index.store, reranker=reranker, chunks=index.lookup,
            lexical=index.lexical() if options["retrieval"] == "hybrid" else None,
        )  # fmt: skip
        config = RunConfig(
            topic=options["topic"], rerank=not options["no_rerank"],
            threshold=options["threshold"], num_candidates=options["candidates"],
            rerank_top=options["rerank_top"],
        )  # fmt: skip
        reranker.score("warm up", ["warm up"])  # load the model outside the timings
        asked = tqdm(desc="Asking", total=len(queries), file=self.stderr._out, disable=None)
        report = evaluate(
            index=index, retriever=retriever, queries=queries, config=config,
            progress=lambda done, total: asked.update(1),
            answer=answer_step(
                index, retriever, generator=options["generator"],
                check_llm_answers=options["check_llm_answers"],
                judge=judge_choice(options["judge"]),
            ) if options["answers"] else None,
            reader=reranker.score if not options["no_rerank"] else None,
        )  # fmt: skip
        asked.close()
        if options["answers"]:
            report.update(answers.summary(report["per_query"]))
        report["config"]["corpus"] = str(corpus_path)
        report["config"]["queries"] = str(options["queries"])
        report["config"]["embedder"] = embedder.id
        report["config"]["chunk_tokens"] = settings.ASKDOCS_CHUNK_TOKENS
        report["config"]["rerank_tokens"] = options["rerank_tokens"]
        report["config"]["retrieval"] = options["retrieval"]
        if options["answers"]:
            report["config"]["generator"] = options["generator"]
            report["config"]["check_llm_answers"] = options["check_llm_answers"]
            report["config"]["judge"] = options["judge"] or "the generator"
        return report

    @staticmethod
    def _write(report: dict, queries: list, options: dict) -> None:
        if options["json"]:
            options["json"].write_text(json.dumps(report, indent=2) + "\n")
        if options["misses"]:
            options["misses"].write_text(misses_markdown(queries, report["per_query"]))

    def _site(self, options: dict, queries: list) -> None:
        from assistant.wiring import runtime
        from measuring.evaluation.site import run_site

        if not 1 <= options["max_pages"] <= 100_000:
            raise CommandError("--max-pages must be between 1 and 100000.")
        try:
            report = run_site(
                site=options["site"], queries=options["queries"], start=options["start"],
                max_pages=options["max_pages"], embedder_id=runtime.embedder().id,
                fresh=options["fresh"],
                options={k: options[k] for k in (
                    "threshold", "candidates", "rerank_top", "answers", "limit", "sample",
                    "generator", "check_llm_answers", "judge", "retrieval")},
            )  # fmt: skip
        except (FileNotFoundError, RuntimeError) as exc:
            raise CommandError(str(exc)) from exc
        report["config"]["queries"] = str(options["queries"])
        report["config"]["retrieval"] = options["retrieval"]
        if options["answers"]:
            report["config"]["judge"] = options["judge"] or "the generator"
        self._write(report, queries, options)
        self.stdout.write(format_site(report))
        self.stdout.write(self._format(report))

    def _format(self, report: dict) -> str:
        lines = [f"{'metric':<14}{'value':>8}   95% interval"]
        answer_keys = ("answer_rougeL", "oracle_rougeL", "answer_cites_gold", "answer_words")
        for key in ("hit@1", "hit@5", "section_hit@1", "section_hit@5", "recall@5", "mrr@10",
                    "ndcg@10", "page_hit@5", "answered", "refused", "key_facts_hit", "n_answerable",
                    "n_unanswerable", *answer_keys):  # fmt: skip
            value = report.get(key)
            shown = (
                "-" if value is None else (f"{value:.3f}" if isinstance(value, float) else value)
            )
            if key not in report:
                continue
            interval = report["ci95"].get(key)
            ci = f"   {interval[0]:.3f} – {interval[1]:.3f}" if interval else ""
            lines.append(f"{key:<14}{shown:>8}{ci}")
        for group, dist in report["best_relevance"].items():
            if dist:
                values = " ".join(f"{k} {v:.3f}" for k, v in dist.items())
                lines.append(f"best relevance, {group}: {values}")
        if len(report.get("top5_kinds", {})) > 1:
            shares = " ".join(f"{k} {v:.3f}" for k, v in report["top5_kinds"].items())
            lines.append(f"top-5 sections by page kind: {shares}")
        if report.get("limits"):
            stops = ", ".join(f"{limit} {n}" for limit, n in report["limits"].items())
            lines.append(f"answerable misses stop at: {stops}")
        for kind, row in report.get("by_kind", {}).items():
            shares = " ".join(f"{k} {v:.3f}" for k, v in row.items() if k != "n" and v is not None)
            lines.append(f"kind {kind or '-':<12} n {row['n']:>4}  {shares}")
        stages = (
            report["latency_ms"]
            | (
                {"answerability": report["answerability_ms"]}
                if report.get("answerability_ms")
                else {}
            )
            | ({"generate": report["generate_ms"]} if report.get("generate_ms") else {})
        )
        if report.get("fell_back"):
            lines.append(
                "answers quoted instead of written (the generator failed, declined or left "
                f"something out): {report['fell_back']}"
            )
        if report.get("written_omits"):
            lines.append(
                "of them, written answers that left out a name the quote gives: "
                f"{report['written_omits']}"
            )
        if report.get("written_failed") or report.get("written_sentences_withheld"):
            lines.append(
                f"written answers that did not complete: {report['written_failed']}; "
                f"written sentences withheld by the grounding check: "
                f"{report['written_sentences_withheld']}"
            )
        if "unheld_names" in report:
            lines.append(
                "names (commands, identifiers, options, links) no passage of the answer holds: "
                f"{report['unheld_names']} in {report['answers_naming_unheld']} answers"
            )
        for stage, stats in stages.items():
            lines.append(f"{stage:<14} median {stats['median']:>8.1f}   p95 {stats['p95']:>8.1f}")
        return "\n".join(lines)
