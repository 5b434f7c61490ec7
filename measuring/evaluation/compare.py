"""Compare two `evaluate` runs question by question.

Two runs on the same questions are paired: a change that finds the gold page for six more
questions and loses it for one is a different thing from two independent shares that happen to
differ by 0.03. Only questions whose outcome changed count (an exact sign test), so a lever is
told apart from noise far sooner than by comparing the shares' confidence intervals."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import mean
from typing import Any

from measuring.evaluation.metrics import SHARES, sign_test


class ComparisonError(ValueError):
    pass


def load_run(path: Path) -> list[dict[str, Any]]:
    """The per-question outcomes of a report `evaluate --json` wrote."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ComparisonError(f"No such file: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ComparisonError(f"{path} is not a JSON report ({exc})") from None
    outcomes = report.get("per_query") if isinstance(report, dict) else None
    if not isinstance(outcomes, list) or not all(
        isinstance(o, dict) and isinstance(o.get("id"), str) for o in outcomes
    ):
        raise ComparisonError(
            f"{path} has no per-question outcomes: write it with `evaluate --json` "
            "(reports from before they were recorded cannot be compared)."
        )
    return outcomes


def compare(
    baseline: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """For each metric, over the questions both runs scored: the two shares, how many
    questions the current run won and lost against the baseline, and the sign test's p."""
    before = {o["id"]: o for o in baseline}
    shared = [o for o in current if o["id"] in before]
    if not shared:
        raise ComparisonError("The two runs have no question in common.")
    metrics: dict[str, dict[str, Any]] = {}
    for metric in SHARES:
        pairs = [
            (bool(before[o["id"]][metric]), bool(o[metric]))
            for o in shared
            if o.get(metric) is not None and before[o["id"]].get(metric) is not None
        ]
        if not pairs:
            continue
        won = sum(1 for was, now in pairs if now and not was)
        lost = sum(1 for was, now in pairs if was and not now)
        share_before = mean(float(was) for was, _ in pairs)
        share_now = mean(float(now) for _, now in pairs)
        metrics[metric] = {
            "n": len(pairs),
            "baseline": round(share_before, 4),
            "current": round(share_now, 4),
            "delta": round(share_now - share_before, 4),
            "won": won,
            "lost": lost,
            "p": sign_test(won, lost),
        }
    return {"shared_questions": len(shared), "metrics": metrics}


def format_comparison(comparison: Mapping[str, Any]) -> str:
    lines = [
        f"against the baseline, {comparison['shared_questions']} questions in common "
        "(won / lost: questions whose outcome changed; p: exact sign test)",
        f"{'metric':<14}{'baseline':>9}{'now':>8}{'delta':>8}{'won':>6}{'lost':>6}{'p':>8}",
    ]
    for metric, row in comparison["metrics"].items():
        lines.append(
            f"{metric:<14}{row['baseline']:>9.3f}{row['current']:>8.3f}{row['delta']:>+8.3f}"
            f"{row['won']:>6}{row['lost']:>6}{row['p']:>8.3f}"
        )
    return "\n".join(lines)
