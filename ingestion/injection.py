"""Documents flagged as suspected prompt injection when they are indexed: the rules (text that
addresses a reader-model and asks it to act, orders about its answer, requests for secrets)
live in the pipeline core (assistant/rag/write/injection.py), which also keeps such text out of
what a local model reads."""

from __future__ import annotations

from assistant.rag.write.injection import MAX_EXCERPTS, instructions_to_an_assistant

__all__ = ["MAX_EXCERPTS", "instructions_to_an_assistant"]
