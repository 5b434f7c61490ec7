"""A small per-process thread pool for model runs.

onnxruntime releases the GIL while it runs, so several single-threaded runs of one session side
by side use several cores. On two cores, two such runs beat one run on two threads by about
1.6x: the matrices of one short input are too small to split well inside a run."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Workers:
    def __init__(self, count: int, name: str) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")
        self.count = count
        self.name = name
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0

    def map(self, function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """`function` over `items`, in order; inline when there is nothing to share out."""
        work = list(items)
        if self.count == 1 or len(work) < 2:
            return map(function, work)
        return self._executor().map(function, work)

    def _executor(self) -> ThreadPoolExecutor:
        # A pool inherited through fork (Celery's prefork workers) has no threads behind it.
        if self._pool is None or self._pid != os.getpid():
            with self._lock:
                if self._pool is None or self._pid != os.getpid():
                    self._pool = ThreadPoolExecutor(self.count, thread_name_prefix=self.name)
                    self._pid = os.getpid()
        return self._pool
