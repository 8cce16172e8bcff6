"""Leaderboards: one metric over datasets × systems, BEIR-style, and a bar chart.

Rows are systems, columns the datasets plus the average over them (a system missing a
dataset gets no average, as in BEIR's tables, where only complete rows are averaged). The
best score per column is bold in markdown and LaTeX.

>>> board = leaderboard({"bm25": {"scifact": 0.665, "nfcorpus": 0.325},
...                      "dense": {"scifact": 0.645, "nfcorpus": 0.316}}, metric="ndcg@10")
>>> print(board.to_markdown())
| ndcg@10 | nfcorpus | scifact | Avg. |
|---|---|---|---|
| bm25 | **0.3250** | **0.6650** | **0.4950** |
| dense | 0.3160 | 0.6450 | 0.4805 |
<BLANKLINE>
>>> print(board.to_csv(), end="")
system,nfcorpus,scifact,average
bm25,0.325,0.665,0.495
dense,0.316,0.645,0.4805
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heta_eval.extras import require
from heta_eval.io.tables import Cell, CellValue, Table, markdown_text
from heta_eval.io.write import whole_file

__all__ = ["Leaderboard", "leaderboard"]


@dataclass
class Leaderboard:
    """Scores ``{system: {dataset: value}}`` of one ``metric``, ready to render."""

    metric: str
    systems: list[str]
    datasets: list[str]
    scores: dict[str, dict[str, float]]

    def average(self, system: str) -> float | None:
        """Mean over all datasets, or None when the system lacks one of them."""
        values = [self.scores[system].get(dataset) for dataset in self.datasets]
        if not values or any(value is None for value in values):
            return None
        return sum(values) / len(values)  # type: ignore[arg-type]

    def _columns(self) -> list[tuple[str, dict[str, float | None]]]:
        columns: list[tuple[str, dict[str, float | None]]] = [
            (dataset, {s: self.scores[s].get(dataset) for s in self.systems})
            for dataset in self.datasets
        ]
        columns.append(("Avg.", {s: self.average(s) for s in self.systems}))
        return columns

    def table(self) -> Table:
        """The table markdown, LaTeX and HTML show: four decimals, ``–`` for a missing
        score, the best of each column in bold."""
        rows: list[list[CellValue]] = [[system] for system in self.systems]
        for _, values in self._columns():
            present = [v for v in values.values() if v is not None]
            best = max(present) if present else None
            for row, system in zip(rows, self.systems, strict=True):
                value = values[system]
                text = "–" if value is None else f"{value:.4f}"
                row.append(Cell(text, bold=value is not None and value == best))
        header = [self.metric, *self.datasets, "Avg."]
        return Table(header, rows, align="l" + "r" * (len(header) - 1))

    def to_markdown(self) -> str:
        """A markdown table; the best score of each column in bold."""
        table = self.table()
        return Table(table.header, table.rows).markdown()  # columns unaligned, as always

    def to_latex(self) -> str:
        """A booktabs ``table`` (needs ``\\usepackage{booktabs}``); best per column in bold."""
        return self.table().latex()

    def to_html(self) -> str:
        """An HTML ``<table>``; best per column in bold."""
        return self.table().html()

    def to_csv(self) -> str:
        """CSV with full-precision numbers; empty cells for missing scores; names a
        spreadsheet would run as a formula start with ``'``."""
        rows: list[list[CellValue]] = []
        for system in self.systems:
            values = [self.scores[system].get(dataset) for dataset in self.datasets]
            values.append(self.average(system))
            rows.append([system, *(None if v is None else round(v, 10) for v in values)])
        return Table(["system", *self.datasets, "average"], rows).csv()

    def render(self, format: str) -> str:
        """The table as ``markdown``, ``latex``, ``csv`` or ``html``."""
        renderers = {
            "markdown": self.to_markdown,
            "latex": self.to_latex,
            "csv": self.to_csv,
            "html": self.to_html,
        }
        if format not in renderers:
            raise ValueError(f"unknown format {format!r}; choose from {', '.join(renderers)}")
        return renderers[format]()

    def plot(self, path: str | os.PathLike[str], *, title: str | None = None) -> Path:
        """Write :meth:`figure` as a PNG, whole (:func:`~heta_eval.io.write.whole_file`)."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        figure = self.figure(title=title)
        with whole_file(out) as temporary:
            figure.savefig(temporary, format="png")
        return out

    def figure(self, *, title: str | None = None) -> Any:
        """A matplotlib Figure of the bar chart: per dataset (and the average), one bar per
        system.

        The legend sits outside the axes (right), so it never covers a bar; reference
        systems (named ``"... (ref.)"``) are drawn as hatched outlines, measured ones solid.
        Uses matplotlib's Agg canvas directly, so no GUI backend and no global pyplot state.
        """
        rcParams = require("matplotlib").rcParams  # the 'compare' extra
        FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
        Figure = require("matplotlib.figure").Figure

        columns = self._columns()
        groups = len(columns)
        width = 0.8 / max(len(self.systems), 1)
        figure = Figure(figsize=(max(6.0, 1.2 * groups + 2) + 2.5, 4.5), dpi=120)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        palette = rcParams["axes.prop_cycle"].by_key()["color"]
        for i, system in enumerate(self.systems):
            xs = [g + (i - (len(self.systems) - 1) / 2) * width for g in range(groups)]
            ys = [values[system] for _, values in columns]
            heights = [0.0 if y is None else y for y in ys]
            color = palette[i % len(palette)]
            style: dict = {"color": color}
            if system.endswith(REFERENCE_SUFFIX):  # published, not measured: outlined, hatched
                style = {"facecolor": "none", "edgecolor": color, "hatch": "///", "linewidth": 1}
            bars = axes.bar(xs, heights, width=width, label=_plain(system), **style)
            for bar, y in zip(bars, ys, strict=True):
                if y is not None:
                    axes.annotate(
                        f"{y:.3f}",
                        (bar.get_x() + bar.get_width() / 2, y),
                        ha="center",
                        va="bottom",
                        fontsize=7,
                        rotation=90,
                        xytext=(0, 2),
                        textcoords="offset points",
                    )
        axes.set_xticks(
            range(groups), [_plain(name) for name, _ in columns], rotation=30, ha="right"
        )
        axes.set_ylabel(_plain(self.metric))
        top = max([v for _, values in columns for v in values.values() if v is not None] or [1])
        axes.set_ylim(0, min(1.05, top * 1.2) if top <= 1 else top * 1.2)
        axes.set_title(_plain(title or f"{self.metric} per dataset"))
        axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        axes.grid(axis="y", alpha=0.3)
        figure.tight_layout()
        return figure


def _plain(text: str) -> str:
    """A name as a chart shows it: on one line, its characters visible
    (:func:`heta_eval.io.tables.markdown_text`) and its ``$`` escaped, so matplotlib reads
    no mathtext in it (an unbalanced ``$\\frac`` would stop the plot)."""
    return markdown_text(text).replace("\t", " ").replace("$", r"\$")


#: How the CLI names a published reference system among the measured ones.
REFERENCE_SUFFIX = " (ref.)"


def leaderboard(scores: Mapping[str, Mapping[str, float | None]], metric: str) -> Leaderboard:
    """A :class:`Leaderboard` from ``{system: {dataset: score}}`` (datasets sorted by name).

    Systems keep their input order; NaN and None scores count as missing.
    """
    clean: dict[str, dict[str, float]] = {}
    for system, values in scores.items():
        clean[system] = {
            dataset: float(value)
            for dataset, value in values.items()
            if value is not None and not math.isnan(float(value))
        }
    datasets = sorted({dataset for values in clean.values() for dataset in values})
    return Leaderboard(metric, list(clean), datasets, clean)
