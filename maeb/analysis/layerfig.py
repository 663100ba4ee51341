"""Score by layer: the figure of a layer sweep (`maeb run --layers`), one panel per task and, with
several tasks, a first panel of their mean; one line per model (and per other setting its
experiment folder names), the hidden layer on the x axis.

A sweep's layers are experiment rows of the board ("model [hidden_layer_4]", maeb.run.layers), so
the figure reads the board's per-task means and needs no file of its own. A layer a task lacks is
a gap in its line, never a zero."""

from __future__ import annotations

import re

from . import figlayout as lay
from .leaderboard import Board
from .plotstyle import LINES, MARKERS, Figure, fit_legend, note_above, pyplot
from .plotstyle import label as _label
from .plotstyle import name as _name

_ROW = re.compile(r"^(?P<model>.+) \[(?P<setting>[^\]]*)\]$")
_LAYER = re.compile(r"^hidden_layer_(?P<layer>\d+)$")
MEAN_PANEL = "mean over tasks"


def layer_of(row: str) -> tuple[str, int] | None:
    """(the run's label without its layer, the layer) of a board row from a layer sweep, else None:
    "m [hidden_layer_4]" -> ("m", 4); "m [dtype_bfloat16__hidden_layer_4]" -> ("m [dtype_bfloat16]", 4)."""
    match = _ROW.match(row)
    if match is None:
        return None
    parts = match["setting"].split("__")
    layers = [m for m in map(_LAYER.match, parts) if m]
    if len(layers) != 1:
        return None
    rest = [p for p in parts if not _LAYER.match(p)]
    return match["model"] + (f" [{'__'.join(rest)}]" if rest else ""), int(layers[0]["layer"])


def sweeps(board: Board) -> dict[str, dict[str, dict[int, float]]]:
    """task -> run label -> layer -> the task's mean main score, for every sweep on the board; with
    several tasks, MEAN_PANEL first: the mean over the tasks where a layer has them all."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    for task in sorted(board.partial):
        for row, score in board.partial[task].items():
            found = layer_of(row)
            if found is not None:
                out.setdefault(task, {}).setdefault(found[0], {})[found[1]] = float(score)
    if len(out) > 1:
        labels = {label for runs in out.values() for label in runs}
        mean: dict[str, dict[int, float]] = {}
        for label in sorted(labels):
            layers = set.intersection(*(set(runs.get(label, {})) for runs in out.values()))
            if layers:
                mean[label] = {k: sum(runs[label][k] for runs in out.values()) / len(out) for k in sorted(layers)}
        out = {MEAN_PANEL: mean, **out} if mean else out
    return out


def layer_curves(board: Board, width: float = lay.PAGE) -> Figure | None:
    """Score by hidden layer for each sweep on the board at `width` inches, panels in rows that fit it and the
    legend below (None when there is none)."""
    panels = sweeps(board)
    if not panels:
        return None
    plt = pyplot()
    runs_all = sorted({k for runs in panels.values() for k in runs})
    kept, note = fit_legend(len(panels), width, runs_all)
    panels = {title: {k: v for k, v in runs.items() if k in kept} for title, runs in panels.items()}
    styles = {label: i for i, label in enumerate(kept)}
    fig, axes, legend_cols = lay.panels(plt, len(panels), width, [_name(k) for k in styles])
    note_above(fig, note)
    handles: dict[str, object] = {}
    for ax, (title, runs) in zip(axes, panels.items()):
        for label, scores in runs.items():
            i, layers = styles[label], sorted(scores)
            (line,) = ax.plot(
                layers,
                [100 * scores[k] for k in layers],
                LINES[i % len(LINES)],
                marker=MARKERS[i % len(MARKERS)],
                color="black",
                ms=3.5,
                lw=0.8,
            )
            handles.setdefault(label, line)
        ax.set_title(_label(title, 30), fontsize=lay.FONT)
        ax.set_xlabel("hidden layer (0: input to the first)", fontsize=lay.FONT)
        ax.set_ylabel("score (%)", fontsize=lay.FONT)
        ax.xaxis.get_major_locator().set_params(integer=True)
    fig.legend(
        handles.values(),
        [_name(k) for k in handles],
        loc="outside lower center",
        ncols=legend_cols,
        fontsize=lay.SMALL,
        frameon=False,
    )
    caption = "Score by hidden layer of each layer sweep (python -m maeb run --layers)."
    figure = Figure("score_by_layer", caption + (f" The first {len(kept)} runs; the rest named over it." if note else ""), fig)
    if note:
        figure.notes.append(f"score_by_layer: the first {len(kept)} of {len(runs_all)} runs (the rest named over it)")
    return figure
