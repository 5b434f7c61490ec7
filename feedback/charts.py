"""Geometry for small server-side SVG charts. Templates draw the shapes (autoescaped labels);
this module only does the arithmetic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 640
HEIGHT = 180
#: Room for the gridlines' labels ("100%", "1,500") at the axis font size.
PAD_LEFT = 56
PAD_BOTTOM = 24
PAD_TOP = 10
#: A bar of 0 is drawn this tall (a day at 0% is a result, not a gap in the data).
ZERO_HEIGHT = 2.0


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value_text: str
    show_label: bool
    zero: bool = False

    @property
    def center(self) -> float:
        return round(self.x + self.width / 2, 2)


@dataclass(frozen=True, slots=True)
class BarChart:
    bars: list[Bar]
    width: int
    height: int
    baseline: float
    gridlines: list[tuple[float, str]]  # (y, text)
    label_y: float
    empty: bool
    plot_left: float = PAD_LEFT
    axis_x: float = PAD_LEFT - 6


def bar_chart(
    points: Sequence[tuple[str, float]],
    *,
    top: float | None = None,
    percent: bool = False,
    max_labels: int = 12,
) -> BarChart:
    """Bars for (label, value) pairs. `top` fixes the scale (1.0 for shares); labels are
    thinned to at most `max_labels`."""
    plot_w = WIDTH - PAD_LEFT - 8
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    baseline = HEIGHT - PAD_BOTTOM
    peak = top if top is not None else max((v for _, v in points), default=0) or 1
    slot = plot_w / max(len(points), 1)
    every = max(1, -(-len(points) // max_labels))
    bars = []
    for i, (label, value) in enumerate(points):
        zero = value <= 0
        height = ZERO_HEIGHT if zero else max(plot_h * min(value / peak, 1), ZERO_HEIGHT)
        width = min(slot * 0.76, 48)
        text = f"{value:.0%}" if percent else (f"{value:,.0f}" if value >= 10 else f"{value:.2g}")
        bars.append(
            Bar(
                x=round(PAD_LEFT + i * slot + (slot - width) / 2, 2),
                y=round(baseline - height, 2),
                width=round(width, 2),
                height=round(height, 2),
                label=label,
                value_text=text,
                show_label=i % every == 0,
                zero=zero,
            )
        )
    gridlines = []
    for fraction in (0.0, 0.5, 1.0):
        value = peak * fraction
        text = f"{value:.0%}" if percent else f"{value:,.4g}"
        gridlines.append((round(baseline - plot_h * fraction, 2), text))
    return BarChart(
        bars=bars, width=WIDTH, height=HEIGHT, baseline=baseline, gridlines=gridlines,
        label_y=HEIGHT - 6, empty=not points,
    )  # fmt: skip
