"""Answer within the webhook's time budget, or hand the answer over to the REST path.

The answer runs in a worker thread and the webhook waits for it, up to what is left of its
budget (SMS_INLINE_BUDGET, measured from the moment the webhook started). Then both sides meet
at a handoff: the first to arrive picks the path and the second follows it. If the answer
arrives first it goes back in the webhook response; if the webhook gives up first it
acknowledges Twilio with an empty response, and the worker thread, once the answer is ready,
queues it for the REST API. Either way exactly one of them delivers it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from functools import cache

from django.conf import settings
from django.db import connections

logger = logging.getLogger(__name__)

INLINE = "inline"
DEFERRED = "deferred"


class Handoff:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: str | None = None

    def decide(self, path: str) -> str:
        """Choose `path` unless the other side already chose; return the chosen path."""
        with self._lock:
            if self._path is None:
                self._path = path
            return self._path


@cache
def _executor() -> ThreadPoolExecutor:
    # Built on first use, never at import: a forked process must not inherit its threads.
    return ThreadPoolExecutor(
        max_workers=settings.SMS_ANSWER_THREADS, thread_name_prefix="sms-answer"
    )


def run_within(
    budget: float, *, answer: Callable[[], str], later: Callable[[], None], fallback: str
) -> str | None:
    """Run `answer()` in a worker thread. Return its text if it is ready within `budget`
    seconds; otherwise return None once the budget is spent, and `later()` runs in the worker
    thread when the answer is ready. `fallback` replies inline if `answer()` crashes."""
    handoff = Handoff()

    def job() -> str | None:
        try:
            try:
                text = answer()
            except Exception:
                logger.exception("an SMS answer crashed")
                text = fallback
            if handoff.decide(INLINE) == INLINE:
                return text
            try:
                later()
            except Exception:
                logger.exception("an SMS answer could not be queued for sending")
            return None
        finally:
            # Pool threads outlive the job: give the connection back (Django's request cycle
            # does this for request threads only).
            connections.close_all()

    future = _executor().submit(job)
    try:
        future.result(timeout=max(0.0, budget))
    except FutureTimeout:
        pass
    if handoff.decide(DEFERRED) == INLINE:
        return future.result()
    return None
