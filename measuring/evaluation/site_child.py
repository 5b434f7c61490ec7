"""Run inside the site's own data folder by `evaluate --site` (see site.py):

    python -m measuring.evaluation.site_child '<arguments as JSON>' <report.json>

It syncs a Website source of the site through the product's sync path (timed: the first
crawl, when the folder is new, and an unchanged re-sync), measures what extraction kept of
each crawled page against the page's own HTML (evaluation/extraction.py), then asks every
question through the product's retriever and answer path (evaluation/runner.py) and scores
it against gold URLs relative to the site root.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

PROJECT = "site evaluation"
SOURCE = "site"


def main(argv: list[str]) -> None:
    import django

    django.setup()
    from django.core.management import call_command

    arguments = json.loads(argv[1])
    call_command("migrate", verbosity=0, interactive=False)
    source = _source(arguments)
    report: dict[str, Any] = {"site": arguments["base"]}
    syncs = [_sync(source)]
    if syncs[0]["added"]:  # a new index: time the unchanged re-sync too
        syncs.append(_sync(source))
    report["syncs"] = syncs
    report["extraction"] = _extraction(source, arguments["base"])
    report.update(_ask(source, arguments))
    Path(argv[2]).write_text(json.dumps(report))


def _source(arguments: dict[str, Any]) -> Any:
    from assistant.models import Project
    from ingestion.models import Source

    project, _ = Project.objects.get_or_create(name=PROJECT)
    config = {"start_url": arguments["base"] + arguments["start"],
              "max_pages": arguments["max_pages"]}  # fmt: skip
    source, _ = Source.objects.get_or_create(
        project=project, name=SOURCE, defaults={"kind": Source.Kind.WEBSITE, "config": config}
    )
    if source.config != config:  # the server's port changes from run to run
        source.config = config
        source.save(update_fields=["config"])
    return source


def _sync(source: Any) -> dict[str, Any]:
    from ingestion.models import Chunk
    from ingestion.sync import source_sync

    started = time.perf_counter()
    run = source_sync(source=source, trigger="evaluate", confirm_removals=True,
                      on_progress=_progress)  # fmt: skip
    seconds = time.perf_counter() - started
    print(file=sys.stderr)
    return {
        "status": run.status, "seconds": round(seconds, 1), "pages": run.seen,
        "added": run.added, "changed": run.changed, "unchanged": run.unchanged,
        "removed": run.removed, "failed": run.failed, "errors": run.errors,
        "skipped": [*run.changes.get("skipped", []), *run.changes.get("not found", [])],
        "skipped_count": run.skipped,
        "chunks": Chunk.objects.filter(document__source=source).count(),
        "chunks_embedded": run.chunks_embedded,
        "chunks_per_second": round(run.chunks_embedded / seconds, 1) if seconds else None,
    }  # fmt: skip


def _progress(run: Any) -> None:
    print(f"\rSyncing: {run.done}/{run.total} pages, {run.chunks_embedded} chunks embedded",
          end="", file=sys.stderr, flush=True)  # fmt: skip


def _extraction(source: Any, base: str) -> dict[str, Any]:
    import httpx

    from ingestion.models import Chunk
    from measuring.evaluation.extraction import PageChunk, extraction_report

    pages: dict[str, list[PageChunk]] = {}
    rows = Chunk.objects.filter(document__source=source).select_related("document")
    for row in rows.order_by("document_id", "ordinal"):
        pages.setdefault(row.document.url, []).append(
            PageChunk(
                url=row.url, heading_path=row.heading_path, text=row.text, title=row.document.title
            )  # fmt: skip
        )
    html: dict[str, str] = {}
    with httpx.Client(timeout=30) as client:
        for url in pages:
            response = client.get(url)
            if response.status_code == 200:
                html[url] = response.text
    return extraction_report(pages=pages, html=html)


def _ask(source: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    from assistant.rag.types import Chunk as PassageChunk
    from assistant.wiring import runtime
    from ingestion.models import Chunk
    from ingestion.selectors import (
        chunks_by_vector_id,
        passages_in_scope,
        search_scope,
        section_chunks,
    )
    from measuring.evaluation.answers import answer_step, judge_choice
    from measuring.evaluation.dataset import load_queries, spread
    from measuring.evaluation.index import EvalIndex, IndexedChunk
    from measuring.evaluation.runner import RunConfig, evaluate

    base = arguments["base"]
    chunks: dict[str, IndexedChunk] = {}
    for row in Chunk.objects.filter(document__source=source).select_related("document"):
        passage = PassageChunk(id=row.vector_id, text=row.text, title=row.title, url=row.url,
                               source_id=row.document.source_id,
                               document=str(row.document_id), ordinal=row.ordinal,
                               kind=row.document.kind)  # fmt: skip
        relative = row.url.removeprefix(base)
        chunks[row.vector_id] = IndexedChunk(
            chunk=passage, section_id=relative, page=page_of(relative)
        )
    index = EvalIndex(key=f"site:{base}", chunks=chunks, store=runtime.chunk_store(), built=False)
    scope = search_scope(project_id=source.project_id)
    # As the product searches, unless asked for the vector search alone (--retrieval vector).
    words = passages_in_scope if arguments.get("retrieval") != "vector" else None
    retriever = _Scoped(runtime.retriever(chunks=chunks_by_vector_id, passages=words), scope.where)
    queries = load_queries(Path(arguments["queries"]))
    if arguments.get("sample"):
        queries = spread(queries, arguments["sample"])
    if arguments.get("limit"):
        queries = queries[: arguments["limit"]]
    places = _Places(base)
    queries = [q if not q.gold_page else _relative_gold(q, places) for q in queries]
    # A site's questions are asked without a topic unless the set gives one (a widget's page).
    config = RunConfig(topic="given", threshold=arguments["threshold"],
                       num_candidates=arguments["candidates"],
                       rerank_top=arguments["rerank_top"])  # fmt: skip
    runtime.reranker().score("warm up", ["warm up"])

    def progress(done: int, total: int) -> None:
        print(f"\rAsking: {done}/{total}", end="", file=sys.stderr, flush=True)

    report = evaluate(
        index=index, retriever=retriever, queries=queries, config=config, progress=progress,
        answer=answer_step(
            index, retriever, generator=arguments.get("generator") or "auto",
            check_llm_answers=bool(arguments.get("check_llm_answers")),
            judge=judge_choice(arguments.get("judge")),
            sections=section_chunks,
        ) if arguments.get("answers") else None,
        reader=runtime.reranker().score,
    )  # fmt: skip
    print(file=sys.stderr)
    if arguments.get("answers"):
        from measuring.evaluation import answers

        report.update(answers.summary(report["per_query"]))
    # A chunk's section is its URL relative to the site root, page and fragment, so hit@k on
    # sections is the section hit the gold URL asks for.
    report["section_hit@5"] = report.pop("hit@5", None)
    report["section_hit@1"] = report.pop("hit@1", None)
    return report


def page_of(relative_url: str) -> str:
    """The page of a URL relative to the site root: no fragment, a folder's index page as the
    folder (as the crawler names pages)."""
    page = relative_url.split("#", 1)[0]
    for index in ("index.html", "index.htm"):
        if page == index or page.endswith("/" + index):
            return page[: -len(index)]
    return page


class _Places:
    """For each page, every id that names a section mapped to the anchor the product gives it
    (ingestion/extraction.py anchor_aliases): a gold label may use a wrapper's id or an anchor
    span before the heading where the product cites the heading's permalink."""

    def __init__(self, base: str) -> None:
        self.base, self.pages = base, dict[str, dict[str, str]]()

    def anchor(self, page: str, fragment: str) -> str:
        if page not in self.pages:
            self.pages[page] = self._aliases(page)
        return self.pages[page].get(fragment, fragment)

    def _aliases(self, page: str) -> dict[str, str]:
        import httpx

        from ingestion.extraction import anchor_aliases, decode_page, html_tree

        try:
            response = httpx.get(self.base + page, timeout=30, follow_redirects=True)
            if response.status_code != 200:
                return {}
            return anchor_aliases(
                html_tree(decode_page(response.content, response.charset_encoding))
            )
        except (httpx.HTTPError, ValueError):
            return {}


def _relative_gold(query: Any, places: _Places | None = None) -> Any:
    from dataclasses import replace

    page, _, fragment = next(iter(query.relevant_ids), "").partition("#")
    if fragment and places is not None:
        fragment = places.anchor(page, fragment)
    relevant = frozenset({f"{page_of(page)}#{fragment}" if fragment else page_of(page)})
    return replace(query, gold_page=page_of(query.gold_page),
                   relevant_ids=relevant if page else query.relevant_ids)  # fmt: skip


class _Scoped:
    """The product's retriever searching the evaluation project's sources (as the ask
    service passes the project's scope)."""

    def __init__(self, retriever: Any, where: Any) -> None:
        self.retriever, self.where = retriever, where

    def retrieve(self, question: Any, settings: Any, where: Any = None) -> Any:
        return self.retriever.retrieve(question, settings, where or self.where)


if __name__ == "__main__":
    main(sys.argv)
