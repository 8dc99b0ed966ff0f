"""Small inline SVG charts (no JavaScript, no external files): horizontal and vertical grouped
bars, and histograms on top of them. Every bar carries a <title> with its exact value, which
browsers show on hover."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

FONT = 12
CHAR_W = 6.8  # average glyph width at FONT px, for layout only
PALETTE = (
    "#2e7d32",
    "#c62828",
    "#ef6c00",
    "#6a1b9a",
    "#1565c0",
    "#00838f",
    "#ad1457",
    "#5d4037",
    "#9e9d24",
    "#455a64",
)


@dataclass
class Series:
    name: str
    values: Sequence[float]
    color: str
    colors: Sequence[str] | None = None
    """Per-bar colours (vertical bars), overriding ``color``."""

    def color_at(self, index: int) -> str:
        return self.colors[index] if self.colors else self.color


def _fmt(value: float) -> str:
    if value == int(value):
        return f"{int(value)}"
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"


def _counts(series: Sequence[Series]) -> bool:
    return all(float(v).is_integer() for s in series for v in s.values)


def nice_step(span: float, ticks: int = 4) -> float:
    """A round step (1, 2, 2.5, 5 x 10^k) that cuts ``span`` into about ``ticks`` parts."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _open(width: float, height: float, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label="{escape(title)}" font-family="system-ui, sans-serif" font-size="{FONT}">',
        f"<title>{escape(title)}</title>",
    ]


def _legend(series: Sequence[Series], x: float, y: float) -> list[str]:
    parts, offset = [], x
    for item in series:
        parts.append(
            f'<rect x="{offset:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{item.color}"/>'
        )
        parts.append(f'<text x="{offset + 14:.1f}" y="{y:.1f}">{escape(item.name)}</text>')
        offset += 24 + CHAR_W * len(item.name)
    return parts


def hbars(
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    title: str,
    max_value: float | None = None,
    value_format: Callable[[float], str] = _fmt,
    width: float = 760,
) -> str:
    """Horizontal grouped bars: one row per label, one bar per series."""
    label_chars = min(48, max((len(label) for label in labels), default=4))
    left = 12 + CHAR_W * label_chars
    bar_h, gap = 14, 10
    group_h = bar_h * len(series) + gap
    top = 28 if len(series) > 1 else 10
    height = top + group_h * len(labels) + 26
    plot_w = width - left - 70
    top_value = max_value or max((v for s in series for v in s.values), default=0) or 1
    parts = _open(width, height, title)
    if len(series) > 1:
        parts += _legend(series, left, 16)
    step = nice_step(top_value)
    if _counts(series) and max_value is None:
        step = max(1.0, step)
    tick = 0.0
    axis_y = top + group_h * len(labels)
    while tick <= top_value + 1e-9:
        x = left + plot_w * tick / top_value
        parts.append(
            f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{axis_y:.1f}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{axis_y + 14:.1f}" text-anchor="middle" fill="#555">'
            f"{escape(value_format(tick))}</text>"
        )
        tick += step
    for row, label in enumerate(labels):
        y0 = top + row * group_h
        parts.append(
            f'<text x="{left - 6:.1f}" y="{y0 + group_h / 2 - gap / 2 + 4:.1f}" '
            f'text-anchor="end"><title>{escape(label)}</title>'
            f"{escape(_clip(label, 48))}</text>"
        )
        for index, item in enumerate(series):
            value = item.values[row]
            w = max(0.0, plot_w * min(value, top_value) / top_value)
            y = y0 + index * bar_h
            parts.append(
                f'<rect x="{left:.1f}" y="{y:.1f}" width="{w:.1f}" height="{bar_h - 2}" '
                f'fill="{item.color}"><title>{escape(label)} — {escape(item.name)}: '
                f"{escape(value_format(value))}</title></rect>"
            )
            parts.append(
                f'<text x="{left + w + 4:.1f}" y="{y + bar_h - 4:.1f}" fill="#333">'
                f"{escape(value_format(value))}</text>"
            )
    parts.append("</svg>")
    return "\n".join(parts)


def vbars(
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    title: str,
    value_format: Callable[[float], str] = _fmt,
    height: float = 240,
) -> str:
    """Vertical grouped bars over ``categories`` (also what :func:`histogram` draws)."""
    bar_w = 18 if len(series) > 1 else 26
    group_w = bar_w * len(series) + 16
    rotate = any(CHAR_W * len(c) > group_w - 4 for c in categories)
    bottom = 14 + (
        CHAR_W * min(28, max((len(c) for c in categories), default=1)) * 0.7 if rotate else 16
    )
    left, top = 48, 28 if len(series) > 1 else 12
    width = max(320, left + group_w * len(categories) + 20)
    plot_h = height - top - bottom
    top_value = max((v for s in series for v in s.values), default=0) or 1
    step = nice_step(top_value)
    if _counts(series):
        step = max(1.0, step)
    top_value = math.ceil(top_value / step) * step
    parts = _open(width, height, title)
    if len(series) > 1:
        parts += _legend(series, left, 16)
    tick = 0.0
    while tick <= top_value + 1e-9:
        y = top + plot_h * (1 - tick / top_value)
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#555">'
            f"{escape(value_format(tick))}</text>"
        )
        tick += step
    base = top + plot_h
    for col, category in enumerate(categories):
        x0 = left + 8 + col * group_w
        for index, item in enumerate(series):
            value = item.values[col]
            h = plot_h * value / top_value
            x = x0 + index * bar_w
            parts.append(
                f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bar_w - 2}" height="{h:.1f}" '
                f'fill="{item.color_at(col)}"><title>{escape(category)} — {escape(item.name)}: '
                f"{escape(value_format(value))}</title></rect>"
            )
            if value:
                parts.append(
                    f'<text x="{x + (bar_w - 2) / 2:.1f}" y="{base - h - 3:.1f}" '
                    f'text-anchor="middle" font-size="10" fill="#333">'
                    f"{escape(value_format(value))}</text>"
                )
        cx = x0 + (group_w - 16) / 2
        label = escape(_clip(category, 28))
        if rotate:
            parts.append(
                f'<text x="{cx:.1f}" y="{base + 12:.1f}" text-anchor="end" '
                f'transform="rotate(-35 {cx:.1f} {base + 12:.1f})">'
                f"<title>{escape(category)}</title>{label}</text>"
            )
        else:
            parts.append(
                f'<text x="{cx:.1f}" y="{base + 14:.1f}" text-anchor="middle">{label}</text>'
            )
    parts.append(
        f'<line x1="{left}" y1="{base:.1f}" x2="{width - 10:.1f}" y2="{base:.1f}" stroke="#888"/>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def bin_edges(low: float, high: float, bins: int) -> list[float]:
    return [low + (high - low) * i / bins for i in range(bins + 1)]


def histogram_counts(values: Sequence[float], edges: Sequence[float]) -> list[int]:
    """Counts per bin; the last bin is closed on the right, values outside are clamped."""
    counts = [0] * (len(edges) - 1)
    low, high = edges[0], edges[-1]
    for value in values:
        if high == low:
            counts[0] += 1
            continue
        position = (min(max(value, low), high) - low) / (high - low) * len(counts)
        counts[min(int(position), len(counts) - 1)] += 1
    return counts


def histogram(
    groups: Sequence[tuple[str, Sequence[float], str]],
    *,
    title: str,
    low: float,
    high: float,
    bins: int = 10,
    edge_format: Callable[[float], str] = _fmt,
) -> str:
    """A histogram of one or more groups of values (name, values, color) over [low, high]."""
    edges = bin_edges(low, high, bins)
    labels = [f"{edge_format(edges[i])}–{edge_format(edges[i + 1])}" for i in range(bins)]
    series = [
        Series(name, histogram_counts(values, edges), color) for name, values, color in groups
    ]
    return vbars(labels, series, title=title)
