"""The bench report: the targets it is checked against, and a table for people."""

from __future__ import annotations

from typing import Any

from measuring.benchmark import crawl, endpoint, flood, load, masking, overload
from measuring.benchmark import local as local_model

# (name, where in the report, "max" or "min", target)
TARGETS: tuple[tuple[str, tuple[str, ...], str, float], ...] = (
    ("retrieve to verdict median ms", ("stages", "latency_ms", "retrieve_to_verdict", "median"),
     "max", 250),
    ("first token median ms", ("stages", "latency_ms", "first_token", "median"), "max", 300),
    ("retrieve+rerank+gate p95 ms", ("stages", "latency_ms", "retrieve_rerank_gate", "p95"),
     "max", 500),
    ("pipeline / raw floor", ("stages", "ratio_to_floor", "retrieve_rerank_gate"), "max", 1.15),
    ("repeated question median ms", ("cache", "repeat_ms", "median"), "max", 10),
    ("search p95 ms at scale", ("scale", "search_ms", "p95"), "max", 10),
    ("recall@10 at scale", ("scale", "recall@10"), "min", 0.95),
    ("ingestion chunks/s", ("ingest", "chunks_per_s"), "min", 25),
    ("unchanged re-sync s", ("ingest", "resync_s"), "max", 30),
    ("help centre recall@20 next to it", ("recall", "help centre", "recall@20"), "min", 0.98),
    ("help centre chunks finding themselves", ("recall", "help centre", "self_first"), "min", 1.0),
    ("local model first token median s", ("local", "single", "first_token_s", "median"),
     "max", 8),
    ("local model whole answer median s", ("local", "single", "answer_s", "median"), "max", 20),
)  # fmt: skip


def _get(report: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = report
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def check_targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    checks = {}
    for name, path, kind, target in TARGETS:
        value = _get(report, path)
        ok = None if value is None else (value <= target if kind == "max" else value >= target)
        checks[name] = {"value": value, "target": target, "kind": kind, "ok": ok}
    return checks


def _stats(stats: dict[str, float] | None) -> str:
    if not stats:
        return f"{'-':>10}{'-':>10}"
    return f"{stats['median']:>10.1f}{stats['p95']:>10.1f}"


def table(report: dict[str, Any]) -> str:
    config = report["config"]
    lines = [f"corpus {config['corpus']} ({config['documents']} documents), "
             f"{config['questions']} questions, {config['runs']} runs, "
             f"{config['cpus']} CPUs, load {config['load_average']}"]  # fmt: skip
    if report.get("stages"):
        lines += _stages_table(report["stages"], chunks=config.get("chunks"))
    if report.get("scale"):
        lines += _scale_table(report["scale"])
    if report.get("cache"):
        lines += _cache_table(report["cache"])
    if report.get("concurrency"):
        lines += _concurrency_table(report["concurrency"], server=config["server"])
    if report.get("idle"):
        lines.append(_idle_line(report["idle"]))
    if report.get("ingest"):
        lines += _ingest_table(report["ingest"])
    if report.get("recall"):
        lines += _recall_table(report["recall"])
    # The sections measured by a module of their own, each drawing its table.
    for key, section_table in (
        ("local", local_model.table),
        ("load", load.table),
        ("openai", endpoint.table),
        ("overload", overload.table),
        ("crawl", crawl.table),
        ("flood", flood.table),
        ("masking", masking.table),
    ):
        if report.get(key):
            lines += section_table(report[key])
    lines += _targets_table(report["targets"])
    return "\n".join(lines)


def _stages_table(stages: dict[str, Any], *, chunks: Any) -> list[str]:
    lines = ["", f"Stage latency ({stages['questions']} questions x {stages['runs']} runs, "
                 f"{chunks} chunks; median / p95 of per-run values)",
             f"{'stage':<24}{'median':>10}{'p95':>10}{'floor':>12}{'ratio':>8}"]  # fmt: skip
    for stage, stats in stages["latency_ms"].items():
        floor = (stages["floor_ms"].get(stage) or {}).get("median")
        ratio = stages["ratio_to_floor"].get(stage)
        lines.append(
            f"{stage:<24}{_stats(stats)}"
            f"{'' if floor is None else f'{floor:>12.1f}'}"
            f"{'' if ratio is None else f'{ratio:>8.2f}'}"
        )
    return lines


def _scale_table(scale: dict[str, Any]) -> list[str]:
    return ["", f"Vector search at {scale['chunks']} chunks ({scale['real_chunks']} real, "
                f"{scale['filler_chunks']} filler; k={scale['k']}; built in "
                f"{scale['build_s']} s)",
            f"filler: {scale['filler_method']}",
            f"nearest-neighbour similarity: real {scale['real_to_real_nn_similarity']}, "
            f"filler {scale['filler_to_real_nn_similarity']}",
            f"{'':<24}{'median':>10}{'p95':>10}{'recall@10':>12}",
            f"{'per-project collection':<24}{_stats(scale['search_ms'])}"
            f"{scale['recall@10']:>12.3f}",
            f"{'shared, project filter':<24}{_stats(scale['shared_filtered_search_ms'])}"
            f"{scale['shared_filtered_recall@10']:>12.3f}"]  # fmt: skip


def _cache_table(cache: dict[str, Any]) -> list[str]:
    return ["", f"Repeated question ({cache['questions']} questions; time to sources = "
                "retrieve + rerank + gate + prompt through services.ask_stream)",
            f"{'':<24}{'median':>10}{'p95':>10}",
            f"{'first ask':<24}{_stats(cache['first_ms'])}",
            f"{'repeat':<24}{_stats(cache['repeat_ms'])}",
            f"{'first, whole answer':<24}{_stats(cache['first_whole_answer_ms'])}",
            f"{'repeat, whole answer':<24}{_stats(cache['repeat_whole_answer_ms'])}",
            f"repeat/first {cache['repeat_to_first']}, cache hit rate {cache['hit_rate']}, "
            f"after a re-sync {cache['hit_rate_after_sync']}"]  # fmt: skip


def _concurrency_table(levels: dict[str, Any], *, server: Any) -> list[str]:
    lines = ["", f"Simultaneous WebSocket conversations ({server})",
             f"{'N':<6}{'ttft med':>10}{'ttft p95':>10}{'whole med':>11}{'tok/s med':>11}"
             f"{'refused':>9}"]  # fmt: skip
    for n, level in levels.items():
        rate = (level["tokens_per_s"] or {}).get("median")
        lines.append(
            f"{n:<6}{_stats(level['first_token_ms'])}"
            f"{level['whole_answer_ms']['median']:>11.1f}"
            f"{'-' if rate is None else f'{rate:.1f}':>11}{level['refused']:>9}"
        )
    return lines


def _idle_line(idle: dict[str, Any]) -> str:
    return (
        f"{idle['sockets']} idle sockets: server RSS {idle['rss_before_kb']} "
        f"-> {idle['rss_after_kb']} kB, {idle['kb_per_socket']} kB a socket"
    )


def _ingest_table(ingest: dict[str, Any]) -> list[str]:
    return ["", f"Ingestion: {ingest['documents']} documents, {ingest['chunks']} chunks in "
                f"{ingest['seconds']} s = {ingest['chunks_per_s']} chunks/s; unchanged "
                f"re-sync {ingest['resync_s']} s ({ingest['resync_unchanged']} unchanged, "
                f"{ingest['resync_embedded']} chunks embedded)"]  # fmt: skip


def _recall_table(recall: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "Each source searched through the product's store (its own chunks' vectors)",
        f"{'source':<34}{'chunks':>8}{'sampled':>9}{'self first':>12}{'recall@20':>11}",
    ]
    for name, figures in recall.items():
        lines.append(f"{name[:33]:<34}{figures['chunks']:>8}{figures['sampled']:>9}"
                     f"{figures['self_first']:>12}{figures['recall@20']:>11}")  # fmt: skip
    return lines


def _targets_table(targets: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["", "Targets"]
    for name, check in targets.items():
        verdict = {True: "ok", False: "MISSED", None: "-"}[check["ok"]]
        sign = "<=" if check["kind"] == "max" else ">="
        lines.append(f"{name:<34}{check['value']!s:>12} {sign} {check['target']:<8}{verdict}")
    return lines
