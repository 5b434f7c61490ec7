"""A project's indexed documents as `llms.txt` and `llms-full.txt` (the llms.txt proposal,
llmstxt.org): an H1 title, a one-line summary in a blockquote, an H2 section per source with a
`- [title](url): description` line per document; the full file with each document's Markdown.

Documents are not stored whole, only as chunks; a document's Markdown is put back together
from its chunks in order: their heading paths give the headings, and the sentence a chunk
repeats from the one before it (chunking's overlap) is dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.core.cache import cache
from django.utils.text import slugify

from assistant.models import Project
from ingestion.models import Chunk, Document, Source

#: How long a built file is kept; any write to the project's index makes a new key at once.
CACHE_SECONDS = 24 * 3600
MIN_DESCRIPTION_CHARS = 40
MAX_DESCRIPTION_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_MARKUP = re.compile(r"[*_`#>|]|\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True, slots=True)
class Page:
    title: str
    url: str
    markdown: str

    @property
    def description(self) -> str:
        """The first sentence of the text, without Markdown (and the next ones while it is
        too short to say much: "Click Forgot password?"), cut at a word."""
        for line in self.markdown.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                plain = " ".join(_MARKUP.sub(r"\1", line).split())
                sentences = _SENTENCE_END.split(plain)
                text = sentences.pop(0)
                while sentences and len(text) < MIN_DESCRIPTION_CHARS:
                    text += " " + sentences.pop(0)
                if len(text) <= MAX_DESCRIPTION_CHARS:
                    return text
                return text[:MAX_DESCRIPTION_CHARS].rsplit(" ", 1)[0] + "…"
        return ""


@dataclass(frozen=True, slots=True)
class Section:
    name: str
    pages: list[Page]


def published_project(ref: str) -> Project | None:
    """The project behind /p/<ref>/: its public key or the slug of its name; only projects
    that switched llms.txt on."""
    published = Project.objects.filter(llms_txt_enabled=True).order_by("pk")
    by_key = published.filter(public_key=ref).first()
    if by_key is not None:
        return by_key
    return next((p for p in published if slugify(p.name) == ref), None)


def project_slug(project: Project) -> str:
    return slugify(project.name) or project.public_key


def sections_of(project: Project) -> list[Section]:
    """Each source of the project (by name) with its documents (by title)."""
    chunks = (
        Chunk.objects.filter(document__source__project=project)
        .order_by("document_id", "ordinal")
        .values_list("document_id", "heading_path", "text")
    )
    by_document: dict[int, list[tuple[str, str]]] = {}
    for document_id, heading_path, text in chunks:
        by_document.setdefault(document_id, []).append((heading_path, text))
    documents = Document.objects.filter(source__project=project).order_by("title", "pk")
    sections = []
    for source in Source.objects.filter(project=project).order_by("name", "pk"):
        pages = [
            Page(doc.title, doc.url, document_markdown(by_document.get(doc.pk, [])))
            for doc in documents
            if doc.source_id == source.pk
        ]
        if pages:
            sections.append(Section(source.name, pages))
    return sections


def document_markdown(chunks: Iterable[tuple[str, str]]) -> str:
    """A document's Markdown from its chunks (heading path, text) in order. A heading's level
    is its depth under the document's title (H1), so `##` for the outermost."""
    blocks: list[str] = []
    previous_path: list[str] = []
    previous_text = ""
    for heading_path, text in chunks:
        path = heading_path.split(" > ") if heading_path else []
        if path != previous_path:
            blocks += _headings(previous_path, path)
            body = text
        else:
            body = _without_overlap(previous_text, text)
        if body:
            blocks.append(body)
        previous_path, previous_text = path, text
    return "\n\n".join(blocks)


def _headings(previous: list[str], path: list[str]) -> Iterator[str]:
    shared = 0
    while shared < min(len(previous), len(path)) and previous[shared] == path[shared]:
        shared += 1
    # Back out to an outer section: its heading again, so the text is not read as the inner.
    start = min(shared, len(path) - 1) if path else 0
    for depth in range(start, len(path)):
        yield f"{'#' * min(depth + 2, 6)} {path[depth]}"


def _without_overlap(previous: str, text: str) -> str:
    """Chunking starts a piece with the last sentence of the one before, as its own
    paragraph: drop it when the previous piece ends with it."""
    first, separator, rest = text.partition("\n\n")
    return rest if separator and previous.endswith(first) else text


def _cached(kind: str, project: Project, full_url: str, build: Callable[[], str]) -> str:
    """Built once per index version: every write to a project's chunks raises its sources'
    index_version (ingestion/index.py), and a rename changes the names in the key, so a
    cached file is never stale. llms-full.txt of 5,000 documents is ~9 MB: read from the
    chunk table on every request, it was an easy way to load the database."""
    sources = list(
        Source.objects.filter(project=project)
        .order_by("pk")
        .values_list("pk", "name", "index_version")
    )
    state = [kind, project.pk, project.public_key, project.name, full_url, sources]
    key = "llms:" + hashlib.sha256(json.dumps(state).encode()).hexdigest()
    text = cache.get(key)
    if not isinstance(text, str):
        text = build()
        cache.set(key, text, CACHE_SECONDS)
    return text


def llms_txt(project: Project, *, full_url: str) -> str:
    return _cached("index", project, full_url, lambda: _llms_txt(project, full_url=full_url))


def llms_full_txt(project: Project, *, full_url: str) -> str:
    return _cached("full", project, full_url, lambda: _llms_full_txt(project, full_url=full_url))


def _llms_txt(project: Project, *, full_url: str) -> str:
    sections = sections_of(project)
    lines = [f"# {_one_line(project.name)}", "", _summary(project, sections, full_url)]
    for section in sections:
        lines += ["", f"## {_one_line(section.name)}", ""]
        for page in section.pages:
            # A page without an address of its own is read in the full file.
            link = f"- [{_link_text(page.title)}]({page.url or full_url})"
            lines.append(f"{link}: {page.description}" if page.description else link)
    return "\n".join(lines) + "\n"


def _llms_full_txt(project: Project, *, full_url: str) -> str:
    sections = sections_of(project)
    parts = [f"# {_one_line(project.name)}\n\n{_summary(project, sections, full_url)}"]
    for section in sections:
        for page in section.pages:
            source = f"Source: {page.url}\n\n" if page.url else ""
            parts.append(f"# {_one_line(page.title)}\n\n{source}{page.markdown}".rstrip())
    return "\n\n".join(parts) + "\n"


def _summary(project: Project, sections: list[Section], full_url: str) -> str:
    documents = sum(len(section.pages) for section in sections)
    return (
        f"> The documentation of {_one_line(project.name)} that its Ask AI assistant answers "
        f"from: {documents} document{'s' * (documents != 1)} in {len(sections)} "
        f"source{'s' * (len(sections) != 1)}. Every document's full text: {full_url}"
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _link_text(title: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", _one_line(title))
