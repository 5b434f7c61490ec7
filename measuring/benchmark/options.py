"""`bench`'s command line: its sections, its options and their checks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from assistant.ask.intake import settings_for
from assistant.models import Project
from assistant.rag.types import Settings
from measuring.benchmark.server import SERVERS

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
    "flood",
    "masking",
)
# `local` and `load` need the model file, `openai` a server, `overload` PostgreSQL and Redis,
# `crawl` a site to crawl for minutes, `flood` the machine's cores for a minute, `masking`
# reads the tests' labelled set: only when named.
DEFAULT_SECTIONS = SECTIONS[:-7]
RAY = Path(settings.BASE_DIR).parent / "shared" / "eval" / "ray_docs_qa"


def parse_levels(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--concurrency takes numbers like 1,4,16, not {text!r}") from None
    if not levels or any(n < 1 or n > 256 for n in levels):
        raise CommandError("--concurrency levels must be between 1 and 256.")
    return levels


def add_arguments(parser: CommandParser) -> None:
    _add_workload_arguments(parser)
    _add_section_arguments(parser)
    parser.add_argument(
        "--ingest-docs", type=int, help="index only N documents into the throwaway project"
    )
    parser.add_argument("--server", choices=SERVERS, default="daphne")
    parser.add_argument(
        "--workdir", type=Path, help="keep the throwaway data folder here (reused next time)"
    )
    parser.add_argument("--json", type=Path, help="write the report as JSON to this file")


def _add_workload_arguments(parser: CommandParser) -> None:
    """What is measured: the data, the questions, the runs, the sections, retrieval."""
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
        "but local, load, openai, overload, crawl and flood)",
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


def _add_section_arguments(parser: CommandParser) -> None:
    """Each section's own knobs."""
    parser.add_argument("--scale-chunks", type=int, default=100_000)
    parser.add_argument("--concurrency", default="1,4,16", help="simultaneous conversations")
    parser.add_argument(
        "--local-concurrency",
        default="1,2,4",
        help="local, openai: questions asked at once",
    )
    parser.add_argument("--load-concurrency", default="1,4", help="load: visitors asking at once")
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
        "--flood-asks", default="200,500", help="flood: asks at once, level by level"
    )
    parser.add_argument(
        "--flood-deadline", type=float, default=20.0,
        help="flood: ASKDOCS_ANSWER_DEADLINE_SECONDS of the server",
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


def chosen_sections(options: dict[str, Any]) -> list[str]:
    """The sections `--only` names, once every option is checked; a bad one stops the command."""
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
    parse_levels(options["concurrency"])
    parse_levels(options["local_concurrency"])
    flood_levels(options["flood_asks"])
    if not 1 <= options["flood_deadline"] <= 600:
        raise CommandError("--flood-deadline takes 1 to 600 seconds.")
    if options["json"] and not options["json"].resolve().parent.is_dir():
        raise CommandError(f"No folder for --json: {options['json'].resolve().parent}")
    for path in (options["corpus"], options["queries"]):
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
    return chosen


def flood_levels(text: str) -> list[int]:
    """`--flood-asks`: asks at once, level by level (more than --concurrency allows)."""
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError("--flood-asks takes numbers like 200,500.") from None
    if not levels or any(n < 1 or n > 5000 for n in levels):
        raise CommandError("--flood-asks levels must be between 1 and 5000.")
    return levels


def answer_settings(options: dict[str, Any]) -> Settings:
    """What a new project answers with, with --candidates applied."""
    defaults = settings_for(Project())
    if options["candidates"]:
        return replace(defaults, num_candidates=options["candidates"])
    return defaults
