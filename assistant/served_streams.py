"""Streamed responses the way the server consumes them.

Django serves a streaming response's iterator as it is under WSGI; under ASGI it wants an
async iterator, and given a plain one it warns ("StreamingHttpResponse must consume
synchronous iterators...") and reads it whole into memory on a worker thread first. So a
view or middleware whose content comes from blocking code (the ORM, a file) hands it to
`served_iterator`, which keeps it as it is under WSGI and, under ASGI, pulls it a batch per
thread hop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from itertools import islice
from typing import TypeVar

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

T = TypeVar("T")

#: Items per thread hop: a CSV export's rows, a file's 8 KiB blocks.
BATCH = 200


def served_iterator(request: HttpRequest, items: Iterable[T]) -> Iterator[T] | AsyncIterator[T]:
    if isinstance(request, ASGIRequest):
        return _pulled(iter(items))
    return iter(items)


async def _pulled(items: Iterator[T]) -> AsyncIterator[T]:
    def batch() -> list[T]:
        return list(islice(items, BATCH))

    # Thread-sensitive: every batch runs on the request's own sync thread, where the ORM
    # cursor (or the file) was opened.
    while chunk := await sync_to_async(batch, thread_sensitive=True)():
        for item in chunk:
            yield item


def serve_streaming_for(request: HttpRequest, response: StreamingHttpResponse) -> None:
    """Turn a response made with a plain iterator into one its server consumes right."""
    if isinstance(request, ASGIRequest) and not response.is_async:
        content = response.streaming_content
        assert isinstance(content, Iterator)  # noqa: S101 - not is_async: a plain iterator
        response.streaming_content = served_iterator(request, content)
