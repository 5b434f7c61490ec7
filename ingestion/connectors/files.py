"""Uploaded files: Markdown, HTML, PDF and plain text, and zip archives of them. Each file
keeps its name as its title (an HTML page its <title>, when it has one). A file that cannot be
read (binary content named .md, a PDF over the size limit, a zip bomb) is reported against its
name; the other files are indexed."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import lxml.etree
import pypdf
from django.conf import settings
from pypdf.errors import PdfReadError

from ingestion.connectors.base import Failed, Fetched, Item, Total
from ingestion.connectors.jsonl import JsonlConnector
from ingestion.extraction import extract_page
from ingestion.models import Source
from ingestion.services import IncomingDocument

TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".html", ".htm"}
SUFFIXES = TEXT_SUFFIXES | {".pdf"}
ARCHIVE_SUFFIXES = {".zip"}


class UnreadableFile(Exception):
    pass


def source_folder(source: Source) -> Path:
    return Path(settings.DATA_DIR) / "uploads" / f"source-{source.pk}"


def files_connector(source: Source) -> FilesConnector | JsonlConnector:
    """Its row's connector (registry.py): uploaded files, or a JSON Lines export named in the
    config (`ingest_jsonl`, the demo, the benchmark corpora)."""
    config = source.config or {}
    if config.get("jsonl"):
        return JsonlConnector(config["jsonl"])
    return FilesConnector.for_source(source)


class FilesConnector:
    def __init__(self, folder: Path, *, max_file_bytes: int, max_archive_bytes: int) -> None:
        self.folder = folder
        self.max_file_bytes = max_file_bytes
        self.max_archive_bytes = max_archive_bytes

    @classmethod
    def for_source(cls, source: Source) -> FilesConnector:
        return cls(
            source_folder(source),
            max_file_bytes=settings.ASKDOCS_MAX_FILE_BYTES,
            max_archive_bytes=settings.ASKDOCS_MAX_ARCHIVE_BYTES,
        )

    def read(self) -> Iterator[Item]:
        files = (
            sorted(p for p in self.folder.rglob("*") if p.is_file()) if self.folder.is_dir() else []
        )
        known = len(files)
        yield Total(known)
        for path in files:
            name = path.relative_to(self.folder).as_posix()
            if path.suffix.lower() in ARCHIVE_SUFFIXES:
                documents = list(self._archive(path, name))
                # Progress counts documents: an archive counts for the files in it.
                known += len(documents) - 1
                yield Total(known)
                yield from documents
                continue
            try:
                if path.stat().st_size > self.max_file_bytes:
                    raise UnreadableFile(_too_big(self.max_file_bytes))
                yield Fetched(parse_file(name, path.read_bytes()))
            except UnreadableFile as error:
                yield Failed(name, str(error))

    def _archive(self, path: Path, name: str) -> Iterator[Item]:
        """All of an archive or none of it: a bad archive must not half-index."""
        try:
            documents = list(self._archive_documents(path, name))
        except UnreadableFile as error:
            yield Failed(name, str(error))
            return
        yield from documents

    def _archive_documents(self, path: Path, name: str) -> Iterator[Item]:
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as error:
            raise UnreadableFile(f"not a zip archive: {error}") from error
        with archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if len(members) > 2_000:
                raise UnreadableFile(f"too many files in the archive ({len(members)})")
            # Declared sizes first, then the real size while reading: a zip bomb lies.
            if sum(m.file_size for m in members) > self.max_archive_bytes:
                raise UnreadableFile(_bomb(self.max_archive_bytes))
            expanded = 0
            for member in members:
                member_name = PurePosixPath(member.filename)
                if member_name.is_absolute() or ".." in member_name.parts:
                    raise UnreadableFile(f"unsafe path in the archive: {member.filename}")
                if member_name.suffix.lower() not in SUFFIXES:
                    continue
                with archive.open(member) as stream:
                    data = stream.read(self.max_file_bytes + 1)
                if len(data) > self.max_file_bytes:
                    raise UnreadableFile(f"{member.filename}: {_too_big(self.max_file_bytes)}")
                expanded += len(data)
                if expanded > self.max_archive_bytes:
                    raise UnreadableFile(_bomb(self.max_archive_bytes))
                try:
                    yield Fetched(parse_file(f"{name}/{member.filename}", data))
                except UnreadableFile as error:
                    raise UnreadableFile(f"{member.filename}: {error}") from error


def parse_file(external_id: str, data: bytes) -> IncomingDocument:
    """The text of one file as Markdown; its title is a web page's own (its <h1> or
    <title>), else its file name."""
    title = PurePosixPath(external_id).name
    suffix = PurePosixPath(title).suffix.lower()
    if suffix == ".pdf":
        text = _pdf_text(data)
    elif suffix in TEXT_SUFFIXES:
        raw = _decode_text(data)
        if suffix in (".html", ".htm"):
            try:
                page = extract_page(raw, fallback_title=title)
            except (ValueError, lxml.etree.ParserError) as error:
                raise UnreadableFile(f"unreadable HTML: {error}") from error
            text, title = page.markdown, page.title
        else:
            text = raw
    else:
        raise UnreadableFile(f"unsupported file type {suffix or '(none)'}")
    if not text.strip():
        raise UnreadableFile("no text found in the file")
    return IncomingDocument(external_id=external_id, title=title, text=text)


def _decode_text(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise UnreadableFile("binary content, not text (wrong file extension?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"not UTF-8 text: {error.reason} at byte {error.start}") from error


def _pdf_text(data: bytes) -> str:
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise UnreadableFile("the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, OSError) as error:
        raise UnreadableFile(f"unreadable PDF: {error}") from error
    return "\n\n".join(p.strip() for p in pages if p.strip())


def _too_big(limit: int) -> str:
    return f"larger than the {limit // 1_000_000} MB limit for one file"


def _bomb(limit: int) -> str:
    return (
        f"the archive expands beyond {limit // 1_000_000} MB (zip bomb?); nothing indexed from it"
    )
