"""Writes for files sources: store an uploaded file where the files connector reads it."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from django.conf import settings

from ingestion.connectors.files import ARCHIVE_SUFFIXES, SUFFIXES, source_folder
from ingestion.models import Source


class UploadRejected(ValueError):
    pass


def upload_checked(*, name: str, size: int) -> str:
    """The name an uploaded file is stored under, or UploadRejected saying why it cannot be."""
    safe = re.sub(r"[^\w.\- ]", "_", PurePosixPath(name.replace("\\", "/")).name).strip(". ")
    suffix = PurePosixPath(safe).suffix.lower()
    if not safe or suffix not in SUFFIXES | ARCHIVE_SUFFIXES:
        allowed = ", ".join(sorted(SUFFIXES | ARCHIVE_SUFFIXES))
        raise UploadRejected(f"{name!r}: unsupported file type; use one of {allowed}.")
    limit = (
        settings.ASKDOCS_MAX_ARCHIVE_BYTES
        if suffix in ARCHIVE_SUFFIXES
        else settings.ASKDOCS_MAX_FILE_BYTES
    )
    if size > limit:
        raise UploadRejected(f"{name!r} is larger than the {limit // 1_000_000} MB limit.")
    return safe


def source_file_add(*, source: Source, name: str, data: bytes) -> str:
    """Save (or replace) one uploaded file; returns the stored name. Content is checked when
    the source syncs, so every problem with a file shows up on the run against its name."""
    if source.kind != Source.Kind.FILES:
        raise UploadRejected("Files can only be added to a files source.")
    safe = upload_checked(name=name, size=len(data))
    folder = source_folder(source)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / safe).write_bytes(data)
    return safe


def source_files(*, source: Source) -> list[str]:
    folder = source_folder(source)
    if not folder.is_dir():
        return []
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def source_file_remove(*, source: Source, name: str) -> bool:
    path = source_folder(source) / PurePosixPath(name).name
    if path.is_file():
        path.unlink()
        return True
    return False
