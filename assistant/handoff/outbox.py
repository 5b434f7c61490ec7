"""The outbox: where mail goes when no mail server is configured (DATA_DIR/outbox/).

Django's file backend names a file by the second and the backend object's id, and appends to
it: two handoffs written in one second can share a file, and then erasing or expiring one
person's mail deletes another's. Here each message is a file of its own.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path

from django.core.mail.backends import filebased


class OutboxBackend(filebased.EmailBackend):
    """Django's file backend, one file per message."""

    _current: str | None = None

    def _get_filename(self) -> str:
        if self._current is None:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            self._current = str(Path(self.file_path) / f"{stamp}-{uuid.uuid4().hex[:12]}.log")
        return self._current

    def write_message(self, message) -> None:  # noqa: ANN001 - Django's EmailMessage
        """A connection that sends several messages opens a new file for each."""
        if self.stream is not None and self.stream.tell():
            self.close()
            self._current = None
            self.open()
        super().write_message(message)
