"""Writes for ingestion: turn documents' text into chunks, vectors and rows, re-embedding
only what changed, in batches (one embedding call and one vector store write per batch).

Order of writes, so that an interruption at any point is repaired by running again:
1. vectors are upserted under ids derived from content (same text -> same id, so a re-run
   writes the same vectors instead of new ones);
2. one database transaction then writes the chunk rows and each document's content hash
   (the hash is what says "this document is done");
3. vectors of chunks that no longer exist are deleted last. A crash before that leaves
   vectors without rows, which retrieval skips and `check_index` removes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from assistant.links import http_url
from assistant.rag.chunking.pieces import Piece, chunk_markdown
from assistant.rag.chunking.sections import title_path
from assistant.rag.reading.scoring import passage_text
from assistant.rag.types import Chunk as PassageChunk
from assistant.wiring import runtime
from ingestion.index import index_written
from ingestion.injection import instructions_to_an_assistant
from ingestion.models import Chunk, Document, Source


@dataclass(frozen=True, slots=True)
class IncomingDocument:
    """A document as a connector read it."""

    external_id: str
    title: str
    text: str
    url: str = ""
    #: How to ask the origin next time whether it changed (the website connector's ETag,
    #: Last-Modified, outgoing links and extraction version); stored with the document.
    fetch_state: dict[str, Any] | None = None
    #: ingestion/page_kinds.py: "" (a guide), "reference", "changelog".
    kind: str = ""


@dataclass(frozen=True, slots=True)
class DocumentResult:
    document: Document
    status: str  # "added" | "changed" | "unchanged"
    embedded: int
    removed: int


def content_hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _vector_id(source: Source, external_id: str, piece_hash: str, duplicate: int) -> str:
    return content_hash(str(source.pk), external_id, piece_hash, str(duplicate))[:32]


def _chunk_url(url: str, anchor: str) -> str:
    if not url or not anchor or "#" in url:
        return url
    return f"{url}#{anchor}"


def document_upsert(
    *, source: Source, external_id: str, title: str, text: str, url: str = ""
) -> DocumentResult:
    """Store one document of a source; embed only the chunks whose text is new."""
    incoming = IncomingDocument(external_id=external_id, title=title, text=text, url=url)
    return documents_upsert(source=source, documents=[incoming])[0]


def documents_upsert(
    *, source: Source, documents: Sequence[IncomingDocument]
) -> list[DocumentResult]:
    """Store a batch of documents of one source; results in input order. A link that is not
    http(s) refuses the batch (UnsafeUrl) before anything is written."""
    for each in documents:
        http_url(each.url)
    by_id = {d.external_id: d for d in documents}  # the last copy of a repeated id wins
    known = {
        d.external_id: d
        for d in Document.objects.filter(source=source, external_id__in=list(by_id))
    }
    results: dict[str, DocumentResult] = {}
    todo: list[tuple[IncomingDocument, Document, str, str]] = []
    for incoming in by_id.values():
        # The kind joins the hash only when there is one: documents read before kinds existed
        # keep their hash, and a page whose kind changes is stored again.
        doc_hash = content_hash(
            incoming.title, incoming.url, incoming.text, *([incoming.kind] if incoming.kind else [])
        )
        document = known.get(incoming.external_id)
        if document is not None and document.content_hash == doc_hash:
            if incoming.fetch_state is not None and incoming.fetch_state != document.fetch_state:
                Document.objects.filter(pk=document.pk).update(fetch_state=incoming.fetch_state)
            results[incoming.external_id] = DocumentResult(document, "unchanged", 0, 0)
            continue
        status = "added" if document is None else "changed"
        if document is None:
            # An empty hash marks the document as unfinished until step 2 commits.
            document = Document.objects.create(
                source=source,
                external_id=incoming.external_id,
                title=incoming.title[:500],
                url=incoming.url[:1000],
                content_hash="",
            )
        todo.append((incoming, document, doc_hash, status))
    if todo:
        results.update(_write(source, todo))
    return [results[d.external_id] for d in documents]


def _write(
    source: Source, todo: list[tuple[IncomingDocument, Document, str, str]]
) -> dict[str, DocumentResult]:
    embedder = runtime.embedder()
    count = getattr(embedder, "count_tokens", None) or _approximate_tokens
    existing_rows: dict[int, dict[str, Chunk]] = {doc.pk: {} for _, doc, _, _ in todo}
    for row in Chunk.objects.filter(document__in=[doc for _, doc, _, _ in todo]):
        existing_rows[row.document_id][row.vector_id] = row

    plans = []
    new_ids: list[str] = []
    new_texts: list[str] = []
    new_meta: list[dict[str, str | int | float | bool]] = []
    for incoming, document, doc_hash, status in todo:
        pieces = chunk_markdown(
            incoming.text,
            count_tokens=count,
            max_tokens=settings.ASKDOCS_CHUNK_TOKENS,
            title=incoming.title,
        )
        wanted = _with_vector_ids(source, incoming, pieces)
        existing = existing_rows[document.pk]
        for vid, piece in wanted:
            if vid in existing:
                continue
            new_ids.append(vid)
            new_texts.append(
                passage_text(
                    PassageChunk(
                        id=vid,
                        text=piece.text,
                        title=title_path(incoming.title, piece.heading_path),
                    )
                )
            )
            new_meta.append(
                {
                    "project_id": source.project_id,
                    "source_id": source.pk,
                    "document_id": document.pk,
                }
            )
        stale = [vid for vid in existing if vid not in dict(wanted)]
        plans.append((incoming, document, doc_hash, status, wanted, stale))

    store = runtime.chunk_store()
    if new_ids:
        store.upsert(new_ids, embedder.embed_documents(new_texts), new_meta)

    results: dict[str, DocumentResult] = {}
    all_stale: list[str] = []
    with transaction.atomic():
        for incoming, document, doc_hash, status, wanted, stale in plans:
            existing = existing_rows[document.pk]
            Chunk.objects.filter(document=document, vector_id__in=stale).delete()
            _save_rows(incoming, document, doc_hash, wanted, existing)
            embedded = sum(1 for vid, _ in wanted if vid not in existing)
            results[incoming.external_id] = DocumentResult(document, status, embedded, len(stale))
            all_stale += stale
    if all_stale:
        store.delete(all_stale)
    index_written(project_id=source.project_id)
    return results


def _save_rows(
    incoming: IncomingDocument,
    document: Document,
    doc_hash: str,
    wanted: list[tuple[str, Piece]],
    existing: dict[str, Chunk],
) -> None:
    """Step 2 for one document, inside the caller's transaction: its new chunk rows, the kept
    ones moved to their new place, and the document row (its hash last: it was unfinished)."""
    fresh: list[Chunk] = []
    for ordinal, (vid, piece) in enumerate(wanted):
        url = _chunk_url(incoming.url, piece.anchor)[:1000]
        kept = existing.get(vid)
        if kept is not None:
            if kept.ordinal != ordinal or kept.url != url:
                Chunk.objects.filter(pk=kept.pk).update(ordinal=ordinal, url=url)
            continue
        fresh.append(
            Chunk(
                document=document,
                vector_id=vid,
                ordinal=ordinal,
                text=piece.text,
                heading_path=piece.heading_path[:1000],
                url=url,
                content_hash=piece.content_hash,
                token_count=piece.token_count,
            )
        )
    Chunk.objects.bulk_create(fresh)
    excerpts = instructions_to_an_assistant(incoming.text)
    Document.objects.filter(pk=document.pk).update(
        title=incoming.title[:500], url=incoming.url[:1000], content_hash=doc_hash,
        fetch_state=incoming.fetch_state, kind=incoming.kind,
        suspected_injection=bool(excerpts), injection_excerpts=excerpts,
    )  # fmt: skip
    document.title, document.url = incoming.title[:500], incoming.url[:1000]
    document.content_hash, document.kind = doc_hash, incoming.kind
    document.suspected_injection, document.injection_excerpts = bool(excerpts), excerpts


def document_delete(*, document: Document) -> int:
    """Remove a document that disappeared from its source, rows first, then vectors."""
    vector_ids = list(document.chunks.values_list("vector_id", flat=True))
    project_id = document.source.project_id
    document.delete()
    if vector_ids:
        runtime.chunk_store().delete(vector_ids)
    index_written(project_id=project_id)
    return len(vector_ids)


def _with_vector_ids(
    source: Source, incoming: IncomingDocument, pieces: Sequence[Piece]
) -> list[tuple[str, Piece]]:
    seen: dict[str, int] = {}
    result = []
    for piece in pieces:
        # The title is embedded with the text, so a new title is a new vector.
        identity = content_hash(incoming.title, piece.content_hash)
        duplicate = seen.get(identity, 0)
        seen[identity] = duplicate + 1
        result.append((_vector_id(source, incoming.external_id, identity, duplicate), piece))
    return result


def _approximate_tokens(text: str) -> int:
    """For embedders without a local tokenizer (Ollama): words are a safe over-estimate / 0.75."""
    return int(len(text.split()) / 0.75) + 1
