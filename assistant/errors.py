"""The error every door's intake raises (assistant/ask/intake.py); each transport translates it
into its own shape. Part of the project shell and free of DRF, so any app may raise or catch it
and DRF's settings can load the intake's parser without an import cycle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class IntakeError(Exception):
    """A request that cannot go on. `status` is the HTTP status a web door answers with;
    `fields` names the fields at fault, with a message each; `retry_after`, the seconds after
    which to ask again (a web door's `Retry-After`, a frame's `retry_after`)."""

    def __init__(
        self,
        code: str,
        message: str,
        status: int = 400,
        fields: Mapping[str, list[str]] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.fields = dict(fields or {})
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.fields:
            error["fields"] = self.fields
        return {"error": error}

    def frame(self) -> dict[str, Any]:
        frame = {"type": "error", **self.body()["error"]}
        if self.retry_after is not None:
            frame["retry_after"] = self.retry_after
        return frame

    def headers(self) -> dict[str, str]:
        """The HTTP headers of its answer at a web door."""
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}


#: What every door says when a model, a store or the database cannot answer right now.
UNAVAILABLE = "The assistant is unavailable right now, please try again in a minute."
