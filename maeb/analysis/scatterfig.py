"""The scatter plots of maeb.analysis.figures: score against parameters, embedding dimension and
embedding seconds, log x axis. The score is each model's mean over the tasks every plotted model
completed (none is judged on tasks another lacks), with the mean of those tasks' intervals as its bar;
each point is labelled where its label overlaps no other label, no marker and no tick
(maeb.analysis.figlayout.place_labels), and a label without such a place is named under the figure."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from . import figlayout as lay
from .cards import Card
from .leaderboard import Board
from .plotstyle import GREY, Figure, pyplot
from .plotstyle import name as _name


def _shared(board: Board, models: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The models a score axis can compare, the tasks all of them completed, and the models left out for it: while
    the shared tasks are under a quarter of the board's (and 3), the model with the fewest tasks leaves (a mean over
    two tasks says little, and no model is judged on tasks another lacks)."""
    rows = {r.model: r for r in board.rows}
    models, dropped = list(models), list[str]()
    need = min(len(board.tasks), max(3, len(board.tasks) / 4))
    while True:
        common = [t.name for t in board.tasks if all(rows[m].tasks.get(t.name) is not None for m in models)]
        if len(common) >= need or len(models) <= 2:
            return (models, common, dropped) if common else ([], [], dropped + models)
        worst = min(reversed(models), key=lambda m: sum(v is not None for v in rows[m].tasks.values()))
        models.remove(worst)
        dropped.append(worst)


def _mean_interval(board: Board, model: str, tasks: list[str]) -> tuple[float, float] | None:
    """The mean of the cells' interval ends over `tasks` (a task without an interval counts at its score); None
    when no cell has one."""
    u, row = board.uncertainty, next(r for r in board.rows if r.model == model)
    if u is None:
        return None
    cells = [u.cells.get((model, t)) for t in tasks]
    if all(c is None for c in cells):
        return None
    lows = [c.low if c else row.tasks[t] for c, t in zip(cells, tasks)]
    highs = [c.high if c else row.tasks[t] for c, t in zip(cells, tasks)]
    return float(np.mean(lows)), float(np.mean(highs))  # type: ignore[arg-type]


def _compact(v: float) -> str:
    """A tick number as a reader says it: 96, 1.5k, 20M, 7B."""
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if v >= size:
            return f"{v / size:g}{unit}"
    return f"{v:g}"


def _log_ticks(ax, xs: list[float]) -> None:
    """Tick labels on a log axis in plain numbers (20M, not 2x10^7): every tick where the points span under a
    decade (else the axis showed one number), 1, 2 and 5 of each decade up to three decades, the decades only
    beyond (2x10^6, 3x10^6 ... run into each other)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    decades = np.log10(max(xs) / min(xs))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _compact(v)))
    if decades >= 3:
        ax.xaxis.set_minor_formatter(NullFormatter())
        return
    ax.tick_params(axis="x", which="both", length=3)  # labelled minor ticks on the major ticks' line
    keep = {1, 2, 5} if decades >= 1 else set(range(1, 10))
    ax.xaxis.set_minor_formatter(
        FuncFormatter(lambda v, _: _compact(v) if round(v / 10 ** np.floor(np.log10(v))) in keep else "")
    )


def _scatter_figure(width: float, points: list[tuple], xlabel: str, ylabel: str, above: list[tuple[str, list[str]]]):
    """Points (x, y %, interval % or None, label, hollow) on a log x axis at `width`, each labelled where no label
    overlaps another or the ticks; `above`: (why, names) of the models not shown, named over the axes (a few lines
    each at most); labels without room are named under the figure."""
    note = "\n".join(lay.name_list(why + ": ", names, width - 0.05, 8) for why, names in above if names)
    plt = pyplot()
    height = min(lay.MAX_HEIGHT - 1.2, max(2.4, 0.66 * width)) + lay.note_height(note)
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    for x, y, span, _, hollow in points:
        err = None if span is None else [[y - min(span[0], y)], [max(span[1], y) - y]]
        ax.errorbar(x, y, yerr=err, fmt="o", color="black", mfc="white" if hollow else "black", ms=3.5, capsize=1.2, lw=0.6)
    ax.set_xscale("log")
    xs = [p[0] for p in points]
    pad = 10 ** (0.05 * max(np.log10(max(xs) / min(xs)), 0.5))  # the outer markers clear of the spines
    ax.set_xlim(min(xs) / pad, max(xs) * pad)
    tops = [p[2][1] if p[2] else p[1] for p in points]
    bottoms = [p[2][0] if p[2] else p[1] for p in points]
    pad = max(0.08 * (max(tops) - min(bottoms)), 2.0)  # points in %: the top and bottom markers clear of the spines
    ax.set_ylim(min(bottoms) - pad, max(tops) + pad)
    _log_ticks(ax, xs)
    ax.set_xlabel(xlabel, fontsize=lay.FONT)
    ax.set_ylabel(lay.wrap(ylabel, height - 0.9, lay.FONT), fontsize=lay.FONT)
    if note:  # over the whole figure (an axes title starts at the spine and ran off the right edge)
        fig.suptitle(note, x=0.01, ha="left", fontsize=lay.SMALL, color=GREY)
    bars = [(x, span[0], span[1]) for x, _, span, _, _ in points if span]
    unplaced = lay.place_labels(ax, [(x, y, label) for x, y, _, label, _ in points], marker_pt=3.5, bars=bars)
    if unplaced:
        lay.grow_below(fig, lay.wrap(f"no room for the labels of: {', '.join(unplaced)}", width - 0.15))
    return fig


def scatter(
    board: Board, cards: dict[str, Card], attr: str, what: str, width: float = lay.PAGE, top: int | None = None
) -> Figure | None:
    """Score against a card's number (n_parameters or embed_dim), log scale. The score is the mean over the tasks
    every plotted model completed (no model is judged on tasks another lacks), with the mean of those tasks'
    intervals; models that would leave too few shared tasks, models without the number and those past --top are
    named above the axes. None when no model has it."""
    rows = board.rows[:top] if top else board.rows
    known = [r.model for r in rows if (getattr(cards[r.model], attr) or 0) > 0]
    models, common, dropped = _shared(board, known)
    if not models:
        return None
    points = []
    for m in models:
        mean = 100 * float(np.mean([next(r for r in rows if r.model == m).tasks[t] for t in common]))
        span = _mean_interval(board, m, common)
        label = _name(m.split("/")[-1], lay.name_chars(width, 0.4))
        points.append(
            (getattr(cards[m], attr), mean, None if span is None else (100 * span[0], 100 * span[1]), label, cards[m].baseline)
        )
    above = [
        (f"not shown, no {what.lower()} recorded (or 0)", [_name(r.model) for r in rows if r.model not in known]),
        ("not shown, too few tasks in common with the others", [_name(m) for m in dropped]),
        (f"not shown, past the first {len(rows)}", [_name(r.model) for r in board.rows[len(rows) :]]),
    ]
    ylabel = f"mean score over the {len(common)} tasks all plotted models completed (%)"
    fig = _scatter_figure(width, points, f"{what} (log scale)", ylabel, above)
    bars = (
        "bars: the mean of those tasks' intervals (a task without one counts at its score)"
        if any(p[2] for p in points)
        else "no intervals computed"
    )
    caption = (
        f"Score against {what.lower()}: each model's mean over the {len(common)} tasks every plotted model completed; {bars}."
    )
    return Figure(f"score_vs_{attr}", caption, fig)


def _field(record, name: str):
    """A record's field, whether compute.score_and_seconds gives mappings or dataclasses."""
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def score_vs_compute(board: Board, results: Iterable[Path], width: float = lay.PAGE, top: int | None = None) -> Figure | None:
    """Mean score against embedding seconds (log scale), per model, over the tasks every plotted model has both
    for (maeb.analysis.compute.score_and_seconds): a model is never charged for tasks another skipped. Models
    without recorded seconds are named above the axes. None when no model has them."""
    try:
        from .compute import score_and_seconds  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None  # a maeb without per-task seconds in its results
    seconds: dict[str, dict[str, float]] = {}
    for rec in score_and_seconds(list(results)):
        spent = _field(rec, "embed_seconds")
        if spent is not None and spent > 0:
            seconds.setdefault(str(_field(rec, "model")), {})[str(_field(rec, "task"))] = float(spent)
    rows = {r.model: r for r in (board.rows[:top] if top else board.rows)}
    known = [m for m in rows if seconds.get(m)]
    common = [t.name for t in board.tasks if all(t.name in seconds[m] and rows[m].tasks.get(t.name) is not None for m in known)]
    if not known or not common:
        return None
    points = []
    for m in known:
        x = sum(seconds[m][t] for t in common)
        y = 100 * float(np.mean([rows[m].tasks[t] for t in common]))
        span = _mean_interval(board, m, common)
        points.append(
            (
                x,
                y,
                None if span is None else (100 * span[0], 100 * span[1]),
                _name(m.split("/")[-1], lay.name_chars(width, 0.4)),
                False,
            )
        )
    above = [
        ("not shown, no embedding seconds recorded", [_name(m) for m in rows if m not in known]),
        (f"not shown, past the first {len(rows)}", [_name(r.model) for r in board.rows[len(rows) :]]),
    ]
    xlabel = f"embedding seconds over the {len(common)} tasks (log scale)"
    fig = _scatter_figure(width, points, xlabel, f"mean score over the same {len(common)} tasks (%)", above)
    caption = "Score against compute: mean score and embedding seconds over the tasks every plotted model has both for."
    return Figure("score_vs_compute", caption, fig)
