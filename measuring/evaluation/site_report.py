"""The crawl and extraction part of an `evaluate --site` report, as text."""

from __future__ import annotations

from collections import Counter
from typing import Any


def format_site(report: dict[str, Any]) -> str:
    lines = [f"site {report['site']}"]
    for number, sync in enumerate(report["syncs"], start=1):
        kind = "crawl + index" if number == 1 and sync["added"] else "re-sync"
        lines.append(
            f"{kind:<14}{sync['seconds']:>8.1f} s   pages {sync['pages']}, added "
            f"{sync['added']}, changed {sync['changed']}, unchanged {sync['unchanged']}, "
            f"removed {sync['removed']}, failed {sync['failed']}; {sync['chunks']} chunks"
            + (f", {sync['chunks_per_second']} chunks/s" if sync["chunks_embedded"] else "")
        )
    first = report["syncs"][0]
    skipped = Counter(s["reason"] for s in first.get("skipped", []))
    skipped.update(_reason(e["error"]) for e in first["errors"])
    for reason, count in skipped.most_common():
        lines.append(f"not indexed   {count:>8}   {reason}")
    extraction = report["extraction"]
    for key in ("anchored", "anchors_valid", "headings_kept", "code_blocks_kept", "text_kept"):
        value = extraction.get(key)
        lines.append(f"{key:<18}{'-' if value is None else f'{value:.3f}':>6}")
    for page in extraction["worst_pages"][:5]:
        details = "; ".join(f"{k}: {v}" for k, v in page.items() if k != "url")
        lines.append(f"  lost on {page['url']}: {details}"[:300])
    return "\n".join(lines) + "\n"


def _reason(error: str) -> str:
    return error.split(";")[0].split(":")[0]
