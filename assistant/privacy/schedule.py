"""The embedded stand-in for Celery beat's nightly retention run: the web server started by
.bin/run (ASKDOCS_INPROCESS_SCHEDULER=1, no broker) runs it a few minutes after it starts,
then once a day (assistant/wiring/background.py's schedule)."""

from __future__ import annotations

import threading

from django.conf import settings

from assistant.privacy.tasks import privacy_retention_daily
from assistant.wiring import background

FIRST_AFTER = 600.0
_started = threading.Event()


def retention_schedule_start() -> bool:
    if not settings.CELERY_TASK_ALWAYS_EAGER or _started.is_set():
        return False
    _started.set()
    background.enqueue_later(FIRST_AFTER, privacy_retention_daily)
    return True
