"""Evaluation data: a corpus (`id, title, text`, optionally `url, page`) and queries
(`id, question, relevant_ids, answerable`, optionally `gold_page`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Section:
    id: str
    title: str
    text: str
    url: str = ""
    page: str = ""


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    question: str
    relevant_ids: frozenset[str]
    answerable: bool
    gold_page: str = ""
    extra: dict[str, object] = field(default_factory=dict, compare=False)
    #: Earlier user questions of the same conversation, oldest first (asked as the widget
    #: would send them), and what kind of conversation it is (reported by kind).
    history: tuple[str, ...] = ()
    kind: str = ""
    #: The page topic a widget sent with the question, where the set gives one (a question
    #: asked on a page and leaning on it: "How long are they valid?" on the tokens page). It
    #: stands before any topic the run would choose.
    topic: str = ""


class DatasetError(ValueError):
    pass


def read_jsonl(path: Path) -> list[dict[str, object]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise DatasetError(f"{path}:{number}: expected an object")
            rows.append(row)
    return rows


def load_corpus(path: Path) -> list[Section]:
    sections = []
    for row in read_jsonl(path):
        if "id" not in row or "text" not in row:
            raise DatasetError(f"{path}: every corpus line needs 'id' and 'text'")
        sections.append(
            Section(
                id=str(row["id"]),
                title=str(row.get("title", "")),
                text=str(row["text"]),
                url=str(row.get("url", "")),
                page=str(row.get("page", "")),
            )
        )
    return sections


def load_queries(path: Path) -> list[Query]:
    queries = []
    for row in read_jsonl(path):
        if "question" not in row or "id" not in row:
            raise DatasetError(f"{path}: every query line needs 'id' and 'question'")
        # A site's query file names its gold section by URL relative to the site root.
        relevant = row.get("relevant_ids") or ([row["gold_url"]] if row.get("gold_url") else [])
        queries.append(
            Query(
                id=str(row["id"]),
                question=str(row["question"]),
                relevant_ids=frozenset(str(r) for r in relevant),  # type: ignore[attr-defined]
                answerable=bool(row.get("answerable", bool(relevant))),
                gold_page=str(row.get("gold_page") or ""),
                history=_history(path, row),
                kind=str(row.get("kind") or ""),
                topic=" ".join(str(row.get("topic") or "").split()),
                # The gold answers (ClapNQ) and the key facts a right answer must hold (the
                # realistic site sets) that `evaluate --answers` scores against.
                extra={k: row[k] for k in ("answers_all", "key_facts") if k in row},
            )
        )
    return queries


def _history(path: Path, row: dict[str, object]) -> tuple[str, ...]:
    history = row.get("history") or []
    if not isinstance(history, list) or not all(isinstance(h, str) for h in history):
        raise DatasetError(f"{path}: 'history' must be a list of earlier questions ({row['id']})")
    return tuple(history)


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def docs_area(page: str) -> str:
    """The docs area of a page URL: https://docs.ray.io/en/master/serve/x.html -> 'serve'."""
    marker = "/en/master/"
    if marker in page:
        return page.split(marker, 1)[1].split("/", 1)[0].removesuffix(".html")
    return ""


def topic_for(query: Query, areas: list[str], mode: str) -> str:
    """`auto`: the docs area of the gold page, as a widget on that area's pages would send;
    for a question without one (out of scope), an area chosen deterministically from its id.
    `other`: an area other than the gold page's, chosen so (the widget opened on a page about
    something else than what is asked). `given`: only the topics the set gives. Whatever the
    mode but `none`, a question's own topic (Query.topic) is the one sent."""
    if mode == "none":
        return ""
    if query.topic:
        return query.topic
    if mode == "given" or not areas:
        return ""
    area = docs_area(query.gold_page)
    if area and mode == "auto":
        return area
    others = [a for a in areas if a != area] or areas
    index = int(hashlib.sha256(query.id.encode()).hexdigest(), 16) % len(others)
    return others[index]


def known_areas(queries: list[Query]) -> list[str]:
    return sorted({a for q in queries if (a := docs_area(q.gold_page))})


def corpus_slice(sections: list[Section], queries: list[Query], size: int) -> list[Section]:
    """`size` sections that hold the gold sections of `queries` (in their order, as far as they
    fit), filled up with the others in file order: a small corpus on which those questions
    can still be answered, so metrics and latencies on it mean something."""
    by_id = {s.id: s for s in sections}
    chosen: dict[str, Section] = {}
    for query in queries:
        for relevant in sorted(query.relevant_ids):
            if len(chosen) < size and relevant in by_id:
                chosen.setdefault(relevant, by_id[relevant])
    for section in sections:
        if len(chosen) >= size:
            break
        chosen.setdefault(section.id, section)
    return list(chosen.values())


def write_corpus(path: Path, sections: list[Section]) -> None:
    """Write sections as corpus JSONL (the format `load_corpus` reads), atomically."""
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for s in sections:
            row = {"id": s.id, "title": s.title, "text": s.text, "url": s.url, "page": s.page}
            handle.write(json.dumps(row) + "\n")
    tmp.replace(path)


def spread(queries: list[Query], count: int) -> list[Query]:
    """`count` queries spread evenly over the file, so a sample keeps its mix of answerable and
    unanswerable questions (files list one kind after the other)."""
    if count >= len(queries):
        return queries
    step = len(queries) / count
    return [queries[int(i * step)] for i in range(count)]
