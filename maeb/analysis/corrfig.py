"""The task-by-task correlation matrix as a figure (maeb.analysis.figures): Spearman's rho between every
two tasks over the models that completed both (the selector's task_correlations), the tasks grouped
by task type and, within a type, ordered by average-linkage clustering on 1 - rho, so tasks that rank
models alike sit together. A CSV beside the figure gives every cell's rho and the number of models
behind it (a rho over 3 models and one over 60 look the same in a colour)."""

from __future__ import annotations

import csv
import io

import numpy as np

from .figlayout import FONT, GREY, MAX_HEIGHT, SMALL, text_width
from .leaderboard import Board

NUMBERS_FROM = 0.27  # inches: a cell this wide holds "-0.35" at SMALL points


def _cluster(rho: np.ndarray) -> list[int]:
    """The order of the leaves of an average-linkage tree on 1 - rho (a pair without a rho counts as 0)."""
    n = len(rho)
    if n < 3:
        return list(range(n))
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    dist = 1 - np.nan_to_num(rho, nan=0.0)
    dist = np.clip((dist + dist.T) / 2, 0, 2)
    np.fill_diagonal(dist, 0)
    return [int(i) for i in leaves_list(linkage(squareform(dist, checks=False), "average", optimal_ordering=True))]


def order(board: Board, rho: np.ndarray) -> list[int]:
    """The tasks' indices grouped by type (the board's sorted types), clustered within each type."""
    out: list[int] = []
    for t in board.types:
        idx = [i for i, task in enumerate(board.tasks) if task.type == t]
        out += [idx[k] for k in _cluster(rho[np.ix_(idx, idx)])]
    return out


def counts(board: Board) -> np.ndarray:
    """Per pair of tasks, the number of models with a score on both."""
    have = np.array([[r.tasks.get(t.name) is not None for t in board.tasks] for r in board.rows], dtype=int)
    return have.T @ have


def to_csv(board: Board, rho: np.ndarray, n: np.ndarray, idx: list[int]) -> str:
    """Every cell of the drawn matrix, in its order: the two tasks, their types, rho (empty: n/a) and the models."""
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["task_a", "type_a", "task_b", "type_b", "rho", "models"])
    for i in idx:
        for j in idx:
            a, b = board.tasks[i], board.tasks[j]
            out.writerow([a.name, a.type, b.name, b.type, "" if np.isnan(rho[i, j]) else f"{rho[i, j]:.4f}", int(n[i, j])])
    return buf.getvalue()


def correlation(board: Board, width: float):
    """The matrix at `width` inches (None under 2 tasks). Each task is named on both axes when a cell is a
    line of SMALL text high; smaller cells name only the type blocks (the CSV names every task in order)."""
    from .plotstyle import Figure, pyplot
    from .selection import Matrix, task_correlations

    plt = pyplot()
    tasks = [t.name for t in board.tasks]
    if len(tasks) < 2:
        return None
    values = np.array([[np.nan if r.tasks.get(t) is None else r.tasks[t] for t in tasks] for r in board.rows], dtype=float)
    rho = task_correlations(Matrix([r.model for r in board.rows], tasks, values, {}))
    n_models = counts(board)
    idx = order(board, rho)
    m = len(tasks)
    label_in = max(text_width(t) for t in tasks) / 72 + 0.12
    bar_in = 0.75  # the colour bar and its label
    cell = min((width - label_in - bar_in) / m, (MAX_HEIGHT - label_in - 0.25) / m, 0.32)
    per_task = cell * 72 >= SMALL * 1.2  # room for one name per row
    if not per_task:
        label_in = max(text_width(t) for t in board.types) / 72 + 0.12
        cell = min((width - label_in - bar_in) / m, (MAX_HEIGHT - label_in - 0.25) / m)
    side = cell * m
    fig, ax = plt.subplots(figsize=(width, min(MAX_HEIGHT, side + label_in + 0.3)), layout="constrained")
    ax.grid(False)
    shown = rho[np.ix_(idx, idx)]
    # n/a cells are masked: the hatched background shows through them (one patch, however many cells)
    ax.add_patch(plt.Rectangle((-0.5, -0.5), m, m, fill=False, hatch="///", ec="#bbbbbb", lw=0, zorder=0))
    image = ax.imshow(np.ma.masked_invalid(shown), cmap="cividis", vmin=-1, vmax=1, zorder=1)
    types = [board.tasks[i].type for i in idx]
    bounds = [k for k in range(1, m) if types[k] != types[k - 1]]
    for k in bounds:  # the type blocks, outlined
        ax.axhline(k - 0.5, color="white", lw=1.2, zorder=2)
        ax.axvline(k - 0.5, color="white", lw=1.2, zorder=2)
    if per_task:
        ax.set_xticks(range(m), [tasks[i] for i in idx], rotation=90, fontsize=SMALL)
        ax.set_yticks(range(m), [tasks[i] for i in idx], fontsize=SMALL)
    else:
        starts = [0, *bounds]
        ends = [*bounds, m]
        centres = [(a + b - 1) / 2 for a, b in zip(starts, ends)]
        fits = [(b - a) * cell * 72 >= SMALL * 1.2 for a, b in zip(starts, ends)]  # a block too thin stays unnamed
        names = [types[a] if ok else "" for a, ok in zip(starts, fits)]
        ax.set_xticks(centres, names, rotation=90, fontsize=SMALL)
        ax.set_yticks(centres, names, fontsize=SMALL)
    if cell >= NUMBERS_FROM:  # numbers readable in grayscale where the cells hold them
        for a in range(m):
            for b in range(m):
                v = shown[a, b]
                text = "n/a" if np.isnan(v) else f"{v:.2f}"
                colour = GREY if np.isnan(v) else "white" if v < -0.3 else "black"
                ax.text(b, a, text, ha="center", va="center", fontsize=SMALL, color=colour)
    bar = fig.colorbar(image, ax=ax, shrink=0.6)
    bar.set_label("Spearman's rho over models", fontsize=FONT)
    bar.ax.tick_params(labelsize=SMALL)
    least = int(n_models[np.triu_indices(m, 1)].min()) if m > 1 else 0
    caption = (
        "Task-by-task Spearman correlation over models, tasks grouped by type (white lines) and clustered within "
        "each type (average linkage on 1 - rho); hatched, n/a: under 3 models have both"
        f"{'' if per_task else '; axes name the types, the CSV each task in order'}; "
        f"task_correlation.csv: each cell's rho and the models behind it (here {least} to {int(n_models.max())})."
    )
    return Figure("task_correlation", caption, fig, extras={"task_correlation.csv": to_csv(board, rho, n_models, idx)})
