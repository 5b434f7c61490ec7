"""The sections `bench` runs only when named: the local model, load, an OpenAI-compatible
server (on the demo index), the scale-out stack overloaded, answers beside a crawl."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, OutputWrapper

from assistant.rag.retrieve.retriever import Retriever
from assistant.wiring import answer_path, runtime
from measuring.benchmark import local
from measuring.benchmark.options import answer_settings
from measuring.benchmark.workdir import throwaway_folder
from measuring.eval_index import open_eval_index


def measure_local_model(
    levels: list[int], options: dict[str, Any], stderr: OutputWrapper
) -> dict[str, Any]:
    from django.test.utils import override_settings

    from assistant.rag.ports import GeneratorUnavailable

    retriever = _demo_retriever(stderr)
    stderr.write("The local model on demo questions ...")
    # Every question is read anew (no earlier prompt's state kept in RAM), as the first
    # visitor to ask it would wait; the rules at the start of each prompt stay cached.
    with override_settings(ASKDOCS_LOCAL_PROMPT_CACHE_MIB=0):
        runtime.reset()
        pipeline = answer_path.pipeline(retriever=retriever, generator_choice="local")
        try:
            return local.measure_local(
                pipeline=pipeline, settings=answer_settings(options), levels=levels,
                runs=options["runs"], progress=lambda line: stderr.write(f"  {line}"),
            )  # fmt: skip
        except GeneratorUnavailable as exc:
            raise CommandError(f"The local model cannot answer: {exc}") from exc
        finally:
            runtime.reset()


def _demo_retriever(stderr: OutputWrapper) -> Retriever:
    from assistant.demo import demo_export

    index, embedder = open_eval_index(demo_export(), stderr=stderr)
    return Retriever(
        embedder=embedder, store=index.store, reranker=runtime.reranker(), chunks=index.lookup
    )


def measure_generators_under_load(
    levels: list[int], options: dict[str, Any], stderr: OutputWrapper
) -> dict[str, Any]:
    from measuring.benchmark.load import measure_load

    retriever = _demo_retriever(stderr)
    names = [n.strip() for n in options["load_generators"].split(",") if n.strip()]
    if not names or set(names) - {"extractive", "local", "ollama"}:
        raise CommandError("--load-generators takes some of extractive, local, ollama.")
    stderr.write("Each generator idle and beside two CPU-bound processes ...")
    runtime.reset()
    try:
        return measure_load(
            pipelines={
                name: answer_path.pipeline(retriever=retriever, generator_choice=name)
                for name in names
            },
            settings=answer_settings(options), levels=levels, runs=options["runs"],
            progress=lambda line: stderr.write(f"  {line}"),
        )  # fmt: skip
    finally:
        runtime.reset()


def measure_openai_server(
    levels: list[int], options: dict[str, Any], stderr: OutputWrapper
) -> dict[str, Any]:
    from measuring.benchmark.endpoint import measure_endpoint

    if not settings.ASKDOCS_OPENAI_BASE_URL:
        raise CommandError("--only openai needs ASKDOCS_OPENAI_BASE_URL (and its model, key).")
    retriever = _demo_retriever(stderr)
    stderr.write(f"{settings.ASKDOCS_OPENAI_BASE_URL} on demo questions ...")
    runtime.reset()
    try:
        return measure_endpoint(
            pipeline=answer_path.pipeline(retriever=retriever, generator_choice="openai"),
            settings=answer_settings(options), levels=levels, runs=options["runs"],
            progress=lambda line: stderr.write(f"  {line}"),
        )  # fmt: skip
    finally:
        runtime.reset()


def measure_scale_out_overload(options: dict[str, Any], stderr: OutputWrapper) -> dict[str, Any]:
    from measuring.benchmark.overload import measure_overload

    for name in ("overload_asks", "overload_webs", "overload_pool"):
        if options[name] < 1:
            raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")
    with throwaway_folder(options["workdir"], prefix="askdocs-bench-overload-") as folder:
        stderr.write(f"The scale-out stack in {folder} ...")
        try:
            return measure_overload(
                folder=folder, postgres=options["postgres"], redis=options["redis"],
                asks=options["overload_asks"], webs=options["overload_webs"],
                pool=options["overload_pool"], pool_timeout=options["overload_pool_timeout"],
                server=options["server"], progress=lambda line: stderr.write(f"  {line}"),
            )  # fmt: skip
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc


def measure_answers_beside_a_crawl(
    options: dict[str, Any], stderr: OutputWrapper
) -> dict[str, Any]:
    from measuring.benchmark.crawl import measure_crawl

    if not (options["crawl_site"] / "index.html").is_file():
        raise CommandError(f"No index.html in --crawl-site {options['crawl_site']}")
    if options["crawl_conversations"] < 1 or options["crawl_seconds"] < 10:
        raise CommandError("--crawl-conversations must be at least 1, --crawl-seconds 10.")
    with throwaway_folder(options["workdir"], prefix="askdocs-bench-crawl-") as folder:
        stderr.write(f"Answers beside a crawl of {options['crawl_site']}, in {folder} ...")
        try:
            return measure_crawl(
                folder=folder, site=options["crawl_site"],
                conversations=options["crawl_conversations"], runs=options["runs"],
                crawl_seconds=options["crawl_seconds"], server=options["server"],
                progress=lambda line: stderr.write(f"  {line}"),
            )  # fmt: skip
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc


def measure_embedded_flood(options: dict[str, Any], stderr: OutputWrapper) -> dict[str, Any]:
    from measuring.benchmark.flood import measure_flood
    from measuring.benchmark.options import flood_levels

    levels = flood_levels(options["flood_asks"])
    with throwaway_folder(options["workdir"], prefix="askdocs-bench-flood-") as folder:
        stderr.write(f"The embedded default flooded, in {folder} ...")
        try:
            return measure_flood(
                folder=folder, levels=levels, deadline=options["flood_deadline"],
                progress=lambda line: stderr.write(f"  {line}"),
            )  # fmt: skip
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
