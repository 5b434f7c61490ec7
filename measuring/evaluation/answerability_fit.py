"""Fitting the answerability model (assistant/rag/judge/answerability.py) on dev questions.

Every dev question whose passages pass the relevance gate is one example: its features as the
check computes them, labelled by whether the question is answerable. A logistic regression
(Newton's method, a small L2 penalty) gives calibrated probabilities; the refusal threshold is
then the highest that still answers `keep_share` of each dataset's answerable questions the
gate let through, because refusing a question the documents answer costs more than answering
one they do not. Both are judged by k-fold cross-validation first, so the figures reported are
on questions each fold's model never saw."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assistant.rag.judge.answerability import FEATURES

L2 = 0.1
#: A dataset takes part in the coefficients only with this many unanswerable examples: one with
#: (nearly) only answerable ones says nothing about what "no answer" looks like, and its base
#: rate would only drag the intercept. It still sets the threshold.
MIN_UNANSWERABLE = 10


@dataclass(frozen=True, slots=True)
class Example:
    id: str
    dataset: str
    features: dict[str, float]
    answerable: bool


def fit(examples: Sequence[Example], *, l2: float = L2) -> tuple[dict[str, float], float]:
    """Coefficients by feature name, and the intercept (the intercept is not penalised)."""
    x = np.array([[1.0, *(e.features[f] for f in FEATURES)] for e in examples])
    y = np.array([1.0 if e.answerable else 0.0 for e in examples])
    w = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty + np.eye(len(w)) * 1e-9
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return {f: float(v) for f, v in zip(FEATURES, w[1:], strict=True)}, float(w[0])


def probability(features: dict[str, float], coefficients: dict[str, float], b: float) -> float:
    z = b + sum(coefficients[f] * features[f] for f in FEATURES)
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def fit_model(
    examples: Sequence[Example], *, keep_share: float
) -> tuple[dict[str, float], float, float]:
    """Coefficients, intercept and threshold: fitted on the datasets with both labels; the
    threshold is the highest that answers `keep_share` of every dataset's answerable ones."""
    negatives: dict[str, int] = {}
    for e in examples:
        negatives[e.dataset] = negatives.get(e.dataset, 0) + (not e.answerable)
    labelled = [e for e in examples if negatives[e.dataset] >= MIN_UNANSWERABLE]
    coefficients, intercept = fit(labelled or examples)
    cut = min(
        threshold_for(
            [probability(e.features, coefficients, intercept)
             for e in examples if e.answerable and e.dataset == dataset],
            keep_share=keep_share,
        )
        for dataset in negatives
    )  # fmt: skip
    return coefficients, intercept, cut


def threshold_for(scores: Sequence[float], *, keep_share: float) -> float:
    """The highest threshold that keeps `keep_share` of these (answerable) scores."""
    ordered = sorted(scores)
    drop = int(math.floor((1.0 - keep_share) * len(ordered)))
    return ordered[drop] if ordered else 0.5


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def folds_of(examples: Sequence[Example], k: int, seed: int = 12) -> list[list[Example]]:
    """k folds, each with its share of every (dataset, label) group."""
    folds: list[list[Example]] = [[] for _ in range(k)]
    groups: dict[tuple[str, bool], list[Example]] = {}
    for e in examples:
        groups.setdefault((e.dataset, e.answerable), []).append(e)
    rng = random.Random(seed)
    offset = 0
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda e: e.id)
        rng.shuffle(members)
        for i, e in enumerate(members):
            folds[(i + offset) % k].append(e)
        offset += len(members)
    return folds


def cross_validate(examples: Sequence[Example], *, k: int = 5, keep_share: float) -> dict[str, Any]:
    """Each example scored by the model (and threshold) fitted on the other folds."""
    folds = folds_of(examples, k)
    held_out: list[tuple[Example, float, float]] = []  # example, probability, fold threshold
    for i, test in enumerate(folds):
        train = [e for j, fold in enumerate(folds) if j != i for e in fold]
        coefficients, b, cut = fit_model(train, keep_share=keep_share)
        held_out.extend((e, probability(e.features, coefficients, b), cut) for e in test)
    report: dict[str, Any] = {"k": k, "n": len(held_out)}
    for dataset in sorted({e.dataset for e in examples}):
        rows = [r for r in held_out if r[0].dataset == dataset]
        pos = [p for e, p, _ in rows if e.answerable]
        neg = [p for e, p, _ in rows if not e.answerable]
        report[dataset] = {
            "n_answerable": len(pos),
            "n_unanswerable": len(neg),
            "auc": _round(auc(pos, neg)),
            "answerable_answered": _round(_share([p >= c for e, p, c in rows if e.answerable])),
            "unanswerable_refused": _round(_share([p < c for e, p, c in rows if not e.answerable])),
        }
    losses = [-math.log(max(1e-9, p if e.answerable else 1 - p)) for e, p, _ in held_out]
    report["log_loss"] = _round(sum(losses) / len(losses)) if losses else None
    return report


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
