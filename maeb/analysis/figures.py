"""Publication figures from a leaderboard: per task type scores with their intervals, Borda ranks with
their rank intervals (a forest plot), score against parameters and against embedding dimension, the
task-by-task Spearman correlation matrix the selector uses, robustness curves (robust.json of
`maeb robust`) and duration curves (results run with --duration-buckets) where present.

Drawn with matplotlib (the `plots` extra): it renders offline, writes PDF, SVG and PNG from one
figure, and has kept its API for two decades. Every figure is readable in grayscale (black marks,
distinct marker shapes and line styles, a colour map whose lightness rises with the value, numbers
printed on the matrix), and a missing score is written "missing" where its mark would be, never drawn
as zero. SVG keeps its text as text, so a reader can search it (and a test can check every model is
there).

Each figure is drawn at the width it is printed at (`maeb plot --width column|page|INCHES`), at most
9 in tall, its text never under 6 pt, and saved at that size (maeb.analysis.figlayout): the layout
keeps every name and marker inside it, and models that do not fit are named in a note. The scatter
plots (maeb.analysis.scatterfig) label points where no label touches another, and the correlation
matrix (maeb.analysis.corrfig) is grouped by task type with its counts in a CSV."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..core.errors import MaebError
from . import figlayout as lay
from .cards import Card
from .leaderboard import BORDA_RULES, Board
from .plotstyle import FORMATS, GREY, LINES, MARKERS, STYLE, Figure, MaxNLocator, fit_legend, note_above, pyplot  # noqa: F401 (figures.X callers)
from .plotstyle import METADATA as _METADATA
from .plotstyle import label as _label
from .plotstyle import name as _name


def _type_interval(board: Board, model: str, task_type: str) -> tuple[float, float] | None:
    """The mean of the cell intervals of a task type's tasks (None unless every task has one)."""
    u = board.uncertainty
    if u is None:
        return None
    cells = [u.cells.get((model, t.name)) for t in board.tasks if t.type == task_type]
    if not cells or any(c is None for c in cells):
        return None
    return float(np.mean([c.low for c in cells])), float(np.mean([c.high for c in cells]))  # type: ignore[union-attr]


def _missing(ax, y: float, text: str = "missing") -> None:
    """'missing' at the left edge of the axes, at height y (data units): never a mark at zero."""
    ax.text(0.02, y, text, transform=ax.get_yaxis_transform(), fontsize=lay.SMALL, color=GREY, style="italic", va="center")


def _rule(board: Board) -> str:
    """The Borda rule that ranked the board, as a caption says it."""
    return BORDA_RULES.get(board.borda, board.borda)


def _note_below(fig, note: str) -> None:
    """The note naming the models left out, under the figure, inside the layout (no name cut at the edge)."""
    if note:
        fig.supxlabel(note, x=0.01, ha="left", fontsize=lay.SMALL, color=GREY)


def _shown(board: Board, width: float, top: int | None, fixed: float, panel_rows: int = 1, per_panel: float = 0.45):
    """The rows a per-model figure shows at `width` (the first ones of the board, at most `top`), their names
    as drawn, the note naming the rest and the figure's height."""
    names = [_name(r.model, lay.name_chars(width)) for r in board.rows]
    room = lay.Room(width, fixed, panel_rows, per_panel)
    n, note = lay.fit_rows(len(board.rows), top, room, [r.model for r in board.rows])
    return board.rows[:n], names[:n], note, max(1.5, room(n, note))  # a figure of a few models still reads as one


def _cut(fig: Figure, rows: list, board: Board) -> Figure:
    if len(rows) < len(board.rows):
        fig.notes.append(f"{fig.name}: the first {len(rows)} of {len(board.rows)} models (the rest named under it)")
    return fig


def task_types(board: Board, width: float = lay.PAGE, top: int | None = None) -> Figure:
    """One panel per task type, in rows of panels that fit the width: each model's mean score with its interval
    (the mean of its tasks' bands and few-shot intervals), models in board order."""
    plt = pyplot()
    types = board.types
    label_in = max(lay.text_width(_name(r.model, lay.name_chars(width))) for r in board.rows) / 72 + 0.15
    ncols = max(1, min(len(types), int((width - label_in - 0.1) // 0.8)))
    prow = -(-len(types) // ncols)
    panel_in = (width - label_in - 0.1) / ncols
    titles = [lay.wrap(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", t), panel_in - 0.1, lay.FONT) for t in types]
    title_in = max(t.count("\n") + 1 for t in titles) * lay.FONT * 1.25 / 72
    rows, names, note, height = _shown(board, width, top, fixed=0.25, panel_rows=prow, per_panel=title_in + 0.4)
    wanted = min(len(board.rows), top or len(board.rows))
    if len(rows) < wanted:  # a panel per type repeats every model: past a few types the panels hold too few
        return type_matrix(board, width, top, fits=len(rows))
    fig, axes = plt.subplots(prow, ncols, sharey=True, squeeze=False, figsize=(width, height), layout="constrained")
    ys = np.arange(len(rows))[::-1]
    for k, ax in enumerate(axes.flat):
        if k >= len(types):
            ax.set_visible(False)
            continue
        t = types[k]
        for y, r in zip(ys, rows):
            v = r.types.get(t)
            if v is None:
                _missing(ax, y)
                continue
            span = _type_interval(board, r.model, t)
            err = None if span is None else [[100 * (v - min(span[0], v))], [100 * (max(span[1], v) - v)]]
            marker = "s" if r.model.endswith("]") else "o"
            ax.errorbar(100 * v, y, xerr=err, fmt=marker, color="black", ms=3.5, capsize=1.5, lw=0.8)
        ax.set_title(titles[k], fontsize=lay.FONT)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=3))
        ax.margins(x=0.12)  # a marker at the end of the range stays inside the panel
        if k // ncols == prow - 1 or k + ncols >= len(types):
            ax.set_xlabel("score (%)", fontsize=lay.FONT)
        if k % ncols:
            ax.tick_params(labelleft=False)
    axes[0][0].set_yticks(ys, names)
    axes[0][0].set_ylim(-0.7, len(rows) - 0.3)
    _note_below(fig, note)
    how = "bars: mean of the tasks' intervals (stability bands, few-shot draws)" if board.uncertainty else "no intervals computed"
    shown = (
        "" if len(rows) == len(board.rows) else f"; the first {len(rows)} of {len(board.rows)} models, the rest named under it"
    )
    return _cut(Figure("task_types", f"Mean score per task type; {how}{shown}.", fig), rows, board)


def _matrix_names(models: list[str], room_pt: float) -> list[str]:
    """The names as the matrix draws them: whole where the longest fits `room_pt` at SMALL points (the name a
    reader looks up on the board), else without their organisation ('microsoft/wavlm-base' -> 'wavlm-base')
    where that leaves them apart, else whole (clipped after): a matrix row has little room, and the
    organisation rarely tells two rows apart."""
    if max((lay.text_width(m) for m in models), default=0.0) <= room_pt:
        return list(models)
    bare = [m.split("/", 1)[-1] for m in models]
    return bare if len(set(bare)) == len(set(models)) else list(models)


def type_matrix(board: Board, width: float = lay.PAGE, top: int | None = None, fits: int = 0) -> Figure:
    """Each model's mean score per task type as a matrix of rounded numbers (%, shaded by score), drawn where the
    panels with intervals hold fewer models than asked: a model takes one 6 pt line, not one per panel row. Models
    are rows where a name of 12 characters still fits beside the type columns, else columns (rotated names, the
    types as rows); those that do not fit are named in a note under it. fits: the models the panels held."""
    plt = pyplot()
    types = board.types
    total = len(board.rows)
    values = 100 * np.array([[np.nan if r.types.get(t) is None else r.types[t] for t in types] for r in board.rows], dtype=float)
    texts = [[("\u2013" if np.isnan(v) else f"{v:.0f}") for v in row] for row in values]
    cell_in = (max(lay.text_width(x) for row in texts for x in row) + 3) / 72  # a number and a hair each side
    models = [r.model for r in board.rows]
    type_names = [re.sub(r"(?<=[a-z])(?=[A-Z])", " ", t) for t in types]
    name_room = width - len(types) * cell_in - 0.2
    models_as_rows = name_room * 72 / 3.7 >= 12
    if models_as_rows:
        names = [_name(b, int(name_room * 72 / 3.7)) for b in _matrix_names(models, name_room * 72 - 6)]
        header_in = max(lay.text_width(t) for t in type_names) / 72 + 0.1
        room = lay.Room(width, fixed=header_in + 0.3, per_panel=0.0)
        n, note = lay.fit_rows(total, top, room, [r.model for r in board.rows])
        size = (width, room(n, note))
    else:
        type_names = [lay.wrap(t, 0.9) for t in type_names]
        lines = max(t.count("\n") + 1 for t in type_names)
        type_in = max(lay.text_width(line) for t in type_names for line in t.split("\n")) / 72 + 0.1
        n = max(1, min(total, top or total, int((width - type_in - 0.2) / cell_in)))
        names = [_name(b, 40) for b in _matrix_names(models, lay.text_width("x" * 40))]
        note = lay.rest_note([r.model for r in board.rows[n:]], n, width)
        header_in = max(lay.text_width(x) for x in names[:n]) / 72 + 0.1
        size = (width, min(lay.MAX_HEIGHT, header_in + 0.3 + len(types) * lines * lay.ROW + lay.note_height(note)))
    shown = values[:n] if models_as_rows else values[:n].T
    cells = [row[: len(types)] for row in texts[:n]]
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    ax.grid(False)
    low, high = np.nanmin(values[:n]), np.nanmax(values[:n])
    # the darkest shade a mid grey (black numbers read on every cell, in print and in grayscale)
    ax.imshow(np.ma.masked_invalid(shown), cmap="Greys", vmin=low, vmax=high + 1.5 * max(high - low, 1.0), aspect="auto")
    for i in range(n):
        for j in range(len(types)):
            a, b = (i, j) if models_as_rows else (j, i)
            ax.text(
                b,
                a,
                cells[i][j],
                ha="center",
                va="center",
                fontsize=lay.SMALL,
                color=GREY if cells[i][j] == "\u2013" else "black",
            )
    model_ticks, type_ticks = names[:n], type_names
    ax.set_yticks(range(len(shown)), model_ticks if models_as_rows else type_ticks, fontsize=lay.SMALL)
    ax.set_xticks(range(shown.shape[1]), type_ticks if models_as_rows else model_ticks, rotation=90, fontsize=lay.SMALL)
    ax.xaxis.tick_top()  # the column heads over the matrix, as a table reads
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    _note_below(fig, note)
    k = max(1, fits)
    shown_note = "" if n == total else f"; the first {n} of {total} models, the rest named under it"
    caption = (
        f"Mean score per task type (%, rounded; \u2013: missing, never 0), shaded by score; no intervals: the "
        f"{min(total, top or total)} models do not fit a panel per type at {width:g} in (--top {k} draws those)"
        f"{shown_note}."
    )
    figure = Figure("task_types", caption, fig)
    figure.notes.append(
        f"task_types: a matrix of mean scores without intervals ({min(total, top or total)} models do not fit a panel "
        f"per task type at {width:g} in; --top {k} or a wider --width draws the panels with intervals)"
    )
    if n < total:
        figure.notes.append(f"task_types: the first {n} of {total} models (the rest named under it)")
    return figure


def borda_forest(board: Board, width: float = lay.PAGE, top: int | None = None) -> Figure:
    """Each model's Borda rank (dot) and its rank interval over the bootstrap draws (line); groups of models the
    draws cannot tell apart on alternating grey bands. The rule that ranked them is named on the axis."""
    plt = pyplot()
    u = board.uncertainty
    rows, names, note, height = _shown(board, width, top, fixed=0.2, per_panel=0.5)
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    ys = np.arange(len(rows))[::-1]
    at = {r.model: y for r, y in zip(rows, ys)}
    if u is not None:
        for i, group in enumerate(u.groups):
            here = [at[m] for m in group if m in at]
            if i % 2 and here:
                ax.axhspan(min(here) - 0.5, max(here) + 0.5, color="#eeeeee", zorder=0)
        for r, y in zip(rows, ys):
            ax.hlines(y, u.rank_low[r.model], u.rank_high[r.model], color="black", lw=1.0)
    ax.plot([r.rank for r in rows], ys, "o", color="black", ms=3.5)
    ax.set_yticks(ys, names)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"Borda rank (1 = best), {board.borda} rule", fontsize=lay.FONT)
    # ranks are whole numbers (two tied models read 0.75, 1.25 ... before)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    high = max([r.rank for r in rows] + ([u.rank_high[r.model] for r in rows] if u else []))
    pad = max(0.5, 0.05 * (high - 1))  # a share of the range: with 67 ranks half a rank is thinner than a marker
    ax.set_xlim(1 - pad, high + pad)
    ax.grid(axis="y", visible=False)
    _note_below(fig, note)
    how = (
        f"lines: {round(100 * u.level)}% rank intervals, {u.draws} bootstrap draws over {', '.join(u.sources)}"
        if u
        else "no intervals computed"
    )
    shown = (
        "" if len(rows) == len(board.rows) else f"; the first {len(rows)} of {len(board.rows)} models, the rest named under it"
    )
    caption = f"Borda rank per model ({_rule(board)}); {how}; grey bands: groups not told apart{shown}."
    return _cut(Figure("borda_ranks", caption, fig), rows, board)


def scatter(board: Board, cards: dict[str, Card], attr: str, what: str, width: float = lay.PAGE, top: int | None = None):
    """Score against a card's number, log scale (maeb.analysis.scatterfig.scatter)."""
    from .scatterfig import scatter as draw

    return draw(board, cards, attr, what, width, top)


def score_vs_compute(board: Board, results: Iterable[Path], width: float = lay.PAGE, top: int | None = None):
    """Score against embedding seconds, log scale (maeb.analysis.scatterfig.score_vs_compute)."""
    from .scatterfig import score_vs_compute as draw

    return draw(board, results, width, top)


def correlation(board: Board, width: float = lay.PAGE) -> Figure | None:
    """The task-by-task correlation matrix, grouped by type (maeb.analysis.corrfig)."""
    from .corrfig import correlation as draw

    return draw(board, width)


def _line_figure(
    name: str,
    caption: str,
    panels: dict[str, dict[str, tuple[list[str], list[float | None]]]],
    ylabel: str,
    counts: dict[str, dict[str, set[int]]] | None = None,
    width: float = lay.PAGE,
):
    """One panel per key of `panels`, each a line per run (label -> (x labels, scores)); a legend below. A
    panel's x axis is the union of its runs' steps (in order), so a run lacking a step (an empty duration
    bucket) leaves a gap there instead of sliding its later points onto the wrong labels; a missing score is
    a gap, never zero. counts: panel -> step -> the item counts behind it, written under the step's label."""
    plt = pyplot()
    runs_all = list(dict.fromkeys(k for p in panels.values() for k in p))
    kept, note = fit_legend(len(panels), width, runs_all)
    panels = {title: {k: v for k, v in runs.items() if k in kept} for title, runs in panels.items()}
    styles = {label: i for i, label in enumerate(kept)}
    fig, axes, legend_cols = lay.panels(plt, len(panels), width, [_name(k) for k in styles])
    note_above(fig, note)
    handles: dict[str, object] = {}
    for ax, (title, runs) in zip(axes, panels.items()):
        steps = list(dict.fromkeys(step for run_steps, _ in runs.values() for step in run_steps))
        for label, (run_steps, scores) in runs.items():
            i = styles[label]
            ys = [np.nan] * len(steps)
            for step, score in zip(run_steps, scores):
                ys[steps.index(step)] = np.nan if score is None else 100 * score
            (line,) = ax.plot(
                range(len(steps)), ys, LINES[i % len(LINES)], marker=MARKERS[i % len(MARKERS)], color="black", ms=3.5, lw=0.8
            )
            handles.setdefault(label, line)
        n = (counts or {}).get(title, {})
        ticks = [step + (f"\nn={_span(n[step])}" if n.get(step) else "") for step in steps]
        ax.set_xticks(range(len(steps)), ticks, rotation=45 if len(steps) > 3 else 0, ha="right" if len(steps) > 3 else "center")
        ax.set_xlim(-0.5, len(steps) - 0.5)
        ax.set_title(_label(title, 30), fontsize=lay.FONT)
        ax.set_ylabel(ylabel, fontsize=lay.FONT)
    fig.legend(
        handles.values(),
        [_name(k) for k in handles],
        loc="outside lower center",
        ncols=legend_cols,
        fontsize=lay.SMALL,
        frameon=False,
    )
    figure = Figure(name, caption + (f" The first {len(kept)} lines; the rest named over it." if note else ""), fig)
    if note:
        figure.notes.append(f"{name}: the first {len(kept)} of {len(runs_all)} lines (the rest named over it)")
    return figure


def _span(values: set[int]) -> str:
    """'11' or '9–11': the item counts of one step over the runs."""
    return str(min(values)) if len(values) == 1 else f"{min(values)}–{max(values)}"


def robust_files(results: Iterable[Path]) -> list[Path]:
    """robust.json files (`maeb robust`'s output) in or under the result folders."""
    return sorted({p for r in results if Path(r).is_dir() for p in Path(r).rglob("robust.json")})


def robustness(paths: list[Path], width: float = lay.PAGE) -> Figure | None:
    """Degradation curves from robust.json: a panel per perturbation ladder, a line per model."""
    panels: dict[str, dict[str, tuple[list[str], list[float | None]]]] = {}
    for path in paths:
        try:  # the whole shape is read inside the try: a wrong shape is one line naming the file, not a traceback
            for c in json.loads(path.read_text(encoding="utf-8"))["curves"]:
                panels.setdefault(str(c["ladder"]), {})[str(c["model"])] = (list(c["steps"]), list(c["scores"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise MaebError(f"{path}: not a robust.json of `maeb robust` ({type(exc).__name__}: {exc})") from None
    if not panels:
        return None
    caption = "Mean score under each perturbation ladder (clean first)."
    return _line_figure("robustness", caption, panels, "mean score (%)", width=width)


def duration_curves(results: Iterable[Path], width: float = lay.PAGE) -> Figure | None:
    """Score per clip-duration bucket, from results run with --duration-buckets: a panel per task, a line per run."""
    from .durations import collect

    panels: dict[str, dict[str, tuple[list[str], list[float | None]]]] = {}
    counts: dict[str, dict[str, set[int]]] = {}
    for root in results:
        if Path(root).is_dir():
            for task, runs in collect(Path(root)).items():
                for run, rows in runs.items():
                    panels.setdefault(task, {})[run] = ([r["bucket"] for r in rows], [r.get("score") for r in rows])
                    for r in rows:  # a bucket of few clips gives a jumpy score: its size is printed under it
                        if isinstance(r.get("items"), int):
                            counts.setdefault(task, {}).setdefault(r["bucket"], set()).add(r["items"])
    if not panels:
        return None
    caption = "Score per clip-duration bucket (n: clips in the bucket; a gap: a bucket without a score)."
    return _line_figure("durations", caption, panels, "score (%)", counts, width)


def figures(
    board: Board, cards: dict[str, Card], results: Iterable[Path], width: float = lay.PAGE, top: int | None = None
) -> tuple[list[Figure], list[str]]:
    """Every figure the board and the result folders allow at `width` inches (the per-model ones showing at most
    `top` models), and one line per figure left out and why."""
    results = list(results)
    out = [task_types(board, width, top), borda_forest(board, width, top)]
    skipped = []
    for attr, what in (("n_parameters", "Parameters"), ("embed_dim", "Embedding dimension")):
        fig = scatter(board, cards, attr, what, width, top)
        out.append(fig) if fig else skipped.append(f"score_vs_{attr}: no model records its {what.lower()}")
    for fig, why in (
        (score_vs_compute(board, results, width, top), "score_vs_compute: no result records its embedding seconds"),
        (correlation(board, width), "task_correlation: fewer than 2 tasks"),
        (robustness(robust_files(results), width), "robustness: no robust.json (python -m maeb robust) under the results"),
        (duration_curves(results, width), "durations: no result run with --duration-buckets"),
        (_layer_curves(board, width), "score_by_layer: no layer sweep (run --layers) among the results"),
    ):
        out.append(fig) if fig else skipped.append(why)
    return out, skipped


def _layer_curves(board: Board, width: float) -> Figure | None:
    from .layerfig import layer_curves

    return layer_curves(board, width)


def write(figs: list[Figure], folder: Path, formats: Iterable[str] = FORMATS) -> list[Path]:
    """Each figure as NAME.pdf, NAME.svg and NAME.png in `folder` (created); the figures are closed after.
    Each file is drawn in memory, then written through a temporary file and renamed, as results are: a
    killed or failed plot leaves the figure that was there, never a torn or empty one."""
    from ..results.write import check_writable, write_bytes_atomic

    plt = pyplot()
    check_writable(folder)  # a full disk, a file where the folder belongs: one line naming it, not a traceback
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with plt.rc_context(STYLE):
        for f in figs:
            for fmt in formats:
                path = folder / f"{f.name}.{fmt}"
                buf = io.BytesIO()
                # the figure's own size, no tight box: it is drawn at the width it is printed at
                f.figure.savefig(buf, format=fmt, metadata=_METADATA[fmt])  # type: ignore[attr-defined]
                write_bytes_atomic(path, buf.getvalue())
                written.append(path)
            for extra, text in f.extras.items():  # data behind the figure (the models per correlation cell)
                write_bytes_atomic(folder / extra, text.encode("utf-8"))
            plt.close(f.figure)  # type: ignore[arg-type]
    return written


def svg_text(fig: Figure) -> str:
    """A figure as SVG text (for the page), the figure closed after."""
    plt = pyplot()
    buf = io.StringIO()
    with plt.rc_context(STYLE):
        fig.figure.savefig(buf, format="svg", metadata=_METADATA["svg"])  # type: ignore[attr-defined]
    plt.close(fig.figure)  # type: ignore[arg-type]
    return buf.getvalue()


def build(
    board: Board, cards: dict[str, Card], results: Iterable[Path], width: float = lay.PAGE, top: int | None = None
) -> tuple[list[Figure], list[str]]:
    """figures() drawn under STYLE (fonts and sizes apply when drawn, not only when saved)."""
    plt = pyplot()
    with plt.rc_context(STYLE):
        return figures(board, cards, results, width, top)
