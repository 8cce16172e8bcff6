"""Small inline SVG charts (no plotting library, no scripts): a histogram of one metric's
per-query values and the sorted per-query differences of two systems.

Every text in a chart passes through ``escape``, so labels are data, never markup.

>>> svg = histogram([("a", [0.0, 0.5, 1.0, 1.0])], "ndcg@10 <b>")
>>> svg.startswith("<svg") and "&lt;b&gt;" in svg and "<b>" not in svg
True
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["differences", "histogram", "slice_bars"]

WIDTH, HEIGHT = 320, 150
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 46, 8, 18, 24
BAR = "#3b6ea5"
#: One colour per system in a chart that overlays them (cycled beyond eight).
PALETTE = ("#3b6ea5", "#e07b00", "#2e7d32", "#8e44ad", "#c62828", "#00838f", "#6d4c41", "#555")
WIN, LOSS, TIE = "#2e7d32", "#c62828", "#9e9e9e"


def _frame(title: str, body: list[str], *, width: int = WIDTH, height: int = HEIGHT) -> str:
    label = escape(title)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{label}">'
        f"<title>{label}</title>"
        f'<text x="{PAD_LEFT}" y="12" font-size="11" fill="#333">{label}</text>'
        + "".join(body)
        + "</svg>"
    )


def _axes(width: int, height: int, low: str, high: str, top: str, bottom: str) -> list[str]:
    x0, x1 = PAD_LEFT, width - PAD_RIGHT
    y0, y1 = height - PAD_BOTTOM, PAD_TOP
    return [
        f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#666" stroke-width="1"/>',
        f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#666" stroke-width="1"/>',
        f'<text x="{x0}" y="{y0 + 14}" font-size="10" fill="#333">{escape(low)}</text>',
        f'<text x="{x1}" y="{y0 + 14}" font-size="10" fill="#333" '
        f'text-anchor="end">{escape(high)}</text>',
        f'<text x="{x0 - 3}" y="{y1 + 8}" font-size="10" fill="#333" '
        f'text-anchor="end">{escape(top)}</text>',
        f'<text x="{x0 - 3}" y="{y0}" font-size="10" fill="#333" '
        f'text-anchor="end">{escape(bottom)}</text>',
    ]


def histogram(
    series: Sequence[tuple[str, Sequence[float]]], title: str, bins: int = 20, metric: str = ""
) -> str:
    """One histogram of every system's values (``series``: ``(system, values)``) on one
    shared axis over [min(0, low), max(1, high)]: per bin, one bar per system side by side.
    Each bar carries its system and bin (``data-system``, ``data-bin``) and the chart its
    binning (``data-low``, ``data-span``, ``data-bins``), so the page can list its queries."""
    every = [v for _, values in series for v in values]
    if not every:
        return _frame(f"{title}: no values", [])
    low, high = min(0.0, min(every)), max(1.0, max(every))
    span = (high - low) or 1.0
    counts = [[0] * bins for _ in series]
    for row, (_, values) in zip(counts, series, strict=True):
        for value in values:
            row[min(int((value - low) / span * bins), bins - 1)] += 1
    tallest = max(max(row) for row in counts)
    width = max(WIDTH, 2 * WIDTH if len(series) > 1 else WIDTH)
    plot_w, plot_h = width - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM
    body = _axes(width, HEIGHT, f"{low:g}", f"{high:g}", str(tallest), "0")
    step = plot_w / bins
    bar = max(step / len(series) - 0.5, 0.5)
    for k, ((system, _), row) in enumerate(zip(series, counts, strict=True)):
        colour = PALETTE[k % len(PALETTE)]
        for i, count in enumerate(row):
            if not count:
                continue
            h = plot_h * count / tallest
            x, y = PAD_LEFT + i * step + k * step / len(series), HEIGHT - PAD_BOTTOM - h
            lo, hi = low + span * i / bins, low + span * (i + 1) / bins
            shown = f"[{lo:.2f}, {hi:.2f}{']' if i == bins - 1 else ')'}"
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{colour}" data-system="{escape(system)}" data-bin="{i}" '
                f'data-range="{shown}"><title>{escape(system)}: {count} '
                f"{'query' if count == 1 else 'queries'} in {shown} (click: list them)"
                "</title></rect>"
            )
    keys = [
        f'<rect x="{PAD_LEFT + 4 + 120 * k}" y="{PAD_TOP}" width="8" height="8" '
        f'fill="{PALETTE[k % len(PALETTE)]}"/><text x="{PAD_LEFT + 15 + 120 * k}" '
        f'y="{PAD_TOP + 8}" font-size="10" fill="#333">{escape(system[:18])}</text>'
        for k, (system, _) in enumerate(series)
    ]
    svg = _frame(title, body + (keys if len(series) > 1 else []), width=width)
    return svg.replace(
        "<svg ",
        f'<svg data-metric="{escape(metric)}" data-low="{low!r}" data-span="{span!r}" '
        f'data-bins="{bins}" ',
        1,
    )


def differences(
    deltas: Sequence[tuple[str, float]],
    title: str,
    tolerance: float = 1e-9,
    extent: float | None = None,
    pair: tuple[str, str, str] | None = None,
) -> str:
    """Per-query differences ``(query id, b - a)`` sorted, one bar each (wins green, losses
    red; each bar names its query, ``data-q``), with the zero line; many queries are drawn
    as one filled area instead. ``extent``: the y-scale's half height (shared by every plot
    of a metric); default the largest |difference| here. ``pair``: (baseline, system,
    metric), named on the area drawn for many queries."""
    width = 640
    if not deltas:
        return _frame(f"{title}: no paired queries", [], width=width)
    ordered = sorted(deltas, key=lambda item: item[1])
    extent = extent or max(abs(ordered[0][1]), abs(ordered[-1][1])) or 1.0
    plot_w, plot_h = width - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM
    zero = PAD_TOP + plot_h / 2
    body = _axes(
        width, HEIGHT, "queries, sorted by difference", "", f"+{extent:.3g}", f"-{extent:.3g}"
    )
    body.append(
        f'<line x1="{PAD_LEFT}" y1="{zero:.1f}" x2="{width - PAD_RIGHT}" y2="{zero:.1f}" '
        f'stroke="#999" stroke-dasharray="3 3"/>'
    )
    n = len(ordered)
    step = plot_w / n
    points = []
    for i, (qid, delta) in enumerate(ordered):
        x = PAD_LEFT + (i + 0.5) * step
        y = zero - (plot_h / 2) * delta / extent
        points.append((x, y, delta, qid))
    if n <= 400:
        for x, y, delta, qid in points:
            colour = WIN if delta > tolerance else LOSS if delta < -tolerance else TIE
            top, h = min(y, zero), abs(zero - y)
            body.append(
                f'<rect x="{x - step / 2:.2f}" y="{top:.1f}" width="{max(step * 0.9, 0.5):.2f}" '
                f'height="{max(h, 0.5):.1f}" fill="{colour}" data-q="{escape(qid)}">'
                f"<title>{escape(qid)}: {delta:+.4f} (click: open it)</title></rect>"
            )
    else:  # thousands of queries: a filled area keeps the SVG small
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points[:: max(n // 600, 1)])
        # One area for thousands of queries: clicking it sorts the table by this difference.
        a, b, metric = (escape(x) for x in pair) if pair else ("", "", "")
        body.append(
            f'<polygon points="{PAD_LEFT},{zero:.1f} {line} {width - PAD_RIGHT},{zero:.1f}" '
            f'fill="{BAR}" fill-opacity="0.6" stroke="{BAR}" stroke-width="1" '
            f'data-a="{a}" data-b="{b}" data-metric="{metric}">'
            f"<title>{n} queries (click: sort the table by this difference)</title></polygon>"
        )
    return _frame(title, body, width=width)


def slice_bars(
    groups: Sequence[tuple[str, int, Sequence[tuple[str, float | None]]]], title: str
) -> str:
    """One group of bars per slice (``(slice, cases, [(system, mean)])``), one bar per
    system on a shared 0..max(1, top) axis; a system with no mean in a slice gets no bar.
    Each bar's title names the slice, the system, the mean and the cases."""
    systems = list(dict.fromkeys(name for _, _, bars in groups for name, _ in bars))
    top = max([1.0, *(v for _, _, bars in groups for _, v in bars if v is not None)])
    width = max(WIDTH, min(1200, 60 + 26 * len(groups) * max(len(systems), 1)))
    plot_w, plot_h = width - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM - 12
    body = _axes(width, HEIGHT - 12, "", "", f"{top:g}", "0")
    step = plot_w / max(len(groups), 1)
    bar = max(step / max(len(systems), 1) - 2, 1.0)
    for i, (value, cases, bars) in enumerate(groups):
        x0 = PAD_LEFT + i * step
        label = escape(value if len(value) <= 16 else value[:15] + "…")
        body.append(
            f'<text x="{x0 + step / 2:.1f}" y="{HEIGHT - 4}" font-size="9" fill="#333" '
            f'text-anchor="middle">{label} ({cases})</text>'
        )
        for name, mean in bars:
            if mean is None:
                continue
            k = systems.index(name)
            h = plot_h * mean / top
            x, y = x0 + 1 + k * (bar + 2), HEIGHT - 12 - PAD_BOTTOM - h
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{max(h, 0.5):.1f}" '
                f'fill="{PALETTE[k % len(PALETTE)]}"><title>{escape(value)}, {escape(name)}: '
                f"{mean:.4f} over {cases} {'query' if cases == 1 else 'queries'}</title></rect>"
            )
    keys = [
        f'<rect x="{PAD_LEFT + 4 + 120 * k}" y="{PAD_TOP}" width="8" height="8" '
        f'fill="{PALETTE[k % len(PALETTE)]}"/><text x="{PAD_LEFT + 15 + 120 * k}" '
        f'y="{PAD_TOP + 8}" font-size="10" fill="#333">{escape(name[:18])}</text>'
        for k, name in enumerate(systems)
    ]
    return _frame(title, body + keys, width=width)
