"""DRF's JSON parser, through the intake: every REST door reads its body the same way."""

from __future__ import annotations

from typing import Any

from rest_framework.parsers import JSONParser

from assistant.ask import intake


class IntakeJSONParser(JSONParser):
    """Size and depth limits, UTF-8, a JSON object (see assistant/ask/intake.parse_json)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        return intake.parse_json(stream.read(intake.MAX_BODY_BYTES + 1) if stream else b"")
