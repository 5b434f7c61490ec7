"""A small per-process thread pool for model runs.

onnxruntime releases the GIL while it runs, so several single-threaded runs of one session side
by side use several cores. On two cores, two such runs beat one run on two threads by about
1.6x: the matrices of one short input are too small to split well inside a run.

A caller of lower CPU priority (the sync lane's thread: assistant/wiring/background.py) gets
a pool of its own, whose threads run at its priority: a crawl's embeddings, hundreds of runs
queued at once, never stand in front of an answer's two, and never run at the answers'
priority. With one shared pool, an answer's query waited for every run of the sync's batch
(`bench --only crawl`)."""

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
        self._pools: dict[int, ThreadPoolExecutor] = {}  # by the callers' niceness
        self._pid = 0

    def map(self, function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """`function` over `items`, in order; inline when there is nothing to share out."""
        work = list(items)
        if self.count == 1 or len(work) < 2:
            return map(function, work)
        return self._executor(niceness()).map(function, work)

    def _executor(self, nice: int) -> ThreadPoolExecutor:
        # A pool inherited through fork (Celery's prefork workers) has no threads behind it.
        pool = self._pools.get(nice) if self._pid == os.getpid() else None
        if pool is None:
            with self._lock:
                if self._pid != os.getpid():
                    self._pools, self._pid = {}, os.getpid()
                pool = self._pools.get(nice)
                if pool is None:
                    pool = ThreadPoolExecutor(
                        self.count, thread_name_prefix=f"{self.name}-nice{nice}",
                        initializer=_run_at, initargs=(nice,),
                    )  # fmt: skip
                    self._pools[nice] = pool
        return pool


def niceness() -> int:
    """The calling thread's niceness (Linux gives each thread its own); 0 where unknown."""
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except (AttributeError, OSError):
        return 0


def _run_at(nice: int) -> None:
    # A new thread starts at its creator's niceness; say it anyway (a pool's threads are
    # created by whichever caller finds it short of threads, always one of this niceness).
    try:
        if niceness() != nice:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass
