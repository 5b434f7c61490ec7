"""`bench --only masking`: what masking personal data adds to a question's path, per message of
the labelled set (tests/data/pii_messages.jsonl), for a question of the longest allowed length,
and for texts built to make the rules backtrack. Pure Python, no database."""

from __future__ import annotations

import json
import statistics
import timeit
from pathlib import Path
from typing import Any

from django.conf import settings

from assistant.personal_data.masking import mask

LABELLED = Path(settings.BASE_DIR) / "tests" / "data" / "pii_messages.jsonl"
#: Texts made to trip nested repeats in the rules (long runs of what the patterns repeat).
ADVERSARIAL = ("a" * 1990 + "@", "1 " * 995, "+" + "1-" * 995, "key " + "x" * 1990, "." * 2000)


def _per_call_ms(text: str, *, number: int = 20, repeat: int = 5) -> float:
    runs = timeit.repeat(lambda: mask(text), number=number, repeat=repeat)
    return min(runs) / number * 1000


def measure_masking() -> dict[str, Any]:
    texts = [json.loads(line)["text"] for line in LABELLED.read_text().splitlines() if line]
    per_message = sorted(_per_call_ms(text) for text in texts)
    longest = " ".join(texts)[: settings.ASKDOCS_MAX_QUESTION_CHARS]
    return {
        "messages": len(texts),
        "per_message_ms": {
            "median": round(statistics.median(per_message), 4),
            "p95": round(per_message[int(0.95 * (len(per_message) - 1))], 4),
            "max": round(per_message[-1], 4),
        },
        "longest_question_ms": round(_per_call_ms(longest), 3),
        "adversarial_max_ms": round(max(_per_call_ms(t, number=5) for t in ADVERSARIAL), 3),
    }


def table(report: dict[str, Any]) -> list[str]:
    each = report["per_message_ms"]
    return [
        "",
        f"Masking personal data ({report['messages']} labelled messages; best of 5 runs each)",
        f"  per message: median {each['median']:.3f} ms, p95 {each['p95']:.3f} ms, "
        f"max {each['max']:.3f} ms",
        f"  a question of the longest allowed length: {report['longest_question_ms']:.3f} ms",
        f"  texts built to make the rules backtrack: at most {report['adversarial_max_ms']:.3f} ms",
    ]
