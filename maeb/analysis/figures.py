"""Publication figures from a leaderboard: per task type scores with their intervals, Borda ranks with
their rank intervals (a forest plot), score against parameters and against embedding dimension, the
task-by-task Spearman correlation matrix the selector uses, robustness curves (robust.json of
`maeb robust`) and duration curves (results run with --duration-buckets) where present.

Drawn with matplotlib (the `plots` extra): it renders offline, writes PDF, SVG and PNG from one
figure, and has kept its API for two decades. Every figure is readable in grayscale (black marks,
distinct marker shapes and line styles, a colour map whose lightness rises with the value, numbers
printed on the matrix), saved with a tight bounding box (no label clipped, model names whole), and a
missing score is written "missing" where its mark would be, never drawn as zero. SVG keeps its text as
text, so a reader can search it (and a test can check every model is there)."""

from __future__ import annotations

import io
import json
import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import MaebError
from .cards import Card
from .leaderboard import Board

FORMATS = ("pdf", "svg", "png")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINES = ("-", "--", ":", "-.")
STYLE = {
    "svg.fonttype": "none",  # text stays text: searchable, and the page's fonts draw it
    "pdf.fonttype": 42,  # TrueType in the PDF: journals reject Type 3 fonts
    "font.size": 8,
    "font.family": "DejaVu Sans",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "svg.hashsalt": "maeb",  # the same figure gives the same SVG bytes (ids are otherwise random)
}
# no creation date in the files: the same results give the same bytes
_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None}, "png": {}}
GREY = "#777777"


@dataclass
class Figure:
    """One drawn figure: its file stem, a one-line caption and the matplotlib figure."""

    name: str
    caption: str
    figure: object  # matplotlib.figure.Figure (imported lazily: matplotlib is an optional extra)


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, or one clear error naming the extra to install."""
    try:
        import matplotlib
    except ImportError:
        raise MaebError("figures need matplotlib: pip install 'maeb[plots]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(text: str, width: int = 18) -> str:
    """'AudioMultilabelClassification' -> 'Audio Multilabel\\nClassification': a panel title that fits its panel."""
    return "\n".join(textwrap.wrap(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text), width)) or text


def _name(model: str, width: int = 60) -> str:
    """A model name as a figure draws it: clipped to `width` characters, because one very long name
    collapsed the axes and made constrained layout run for minutes (the page's table keeps it whole)."""
    return model if len(model) <= width else model[: width - 1] + "\u2026"


def _rows_height(n: int) -> float:
    return 0.9 + 0.22 * n  # inches: one model name per line at 8 pt with room between


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
    ax.text(0.02, y, text, transform=ax.get_yaxis_transform(), fontsize=6.5, color=GREY, style="italic", va="center")


def task_types(board: Board) -> Figure:
    """One panel per task type: each model's mean score with its interval (the mean of its tasks' bands and
    few-shot intervals), models in board order."""
    plt = pyplot()
    types, rows = board.types, board.rows
    fig, axes = plt.subplots(
        1, len(types), sharey=True, squeeze=False, figsize=(1.9 * len(types) + 0.5, _rows_height(len(rows))), layout="constrained"
    )
    ys = np.arange(len(rows))[::-1]
    for ax, t in zip(axes[0], types):
        for y, r in zip(ys, rows):
            v = r.types.get(t)
            if v is None:
                _missing(ax, y)
                continue
            span = _type_interval(board, r.model, t)
            err = None if span is None else [[100 * (v - min(span[0], v))], [100 * (max(span[1], v) - v)]]
            marker = "s" if r.model.endswith("]") else "o"
            ax.errorbar(100 * v, y, xerr=err, fmt=marker, color="black", ms=4, capsize=2, lw=1)
        ax.set_title(_label(t), fontsize=8)
        ax.set_xlabel("score (%)")
    axes[0][0].set_yticks(ys, [_name(r.model) for r in rows])
    axes[0][0].set_ylim(-0.7, len(rows) - 0.3)
    how = "bars: mean of the tasks' intervals (stability bands, few-shot draws)" if board.uncertainty else "no intervals computed"
    return Figure("task_types", f"Mean score per task type; {how}.", fig)


def borda_forest(board: Board) -> Figure:
    """Each model's Borda rank (dot) and its rank interval over the bootstrap draws (line); groups of models the
    draws cannot tell apart on alternating grey bands."""
    plt = pyplot()
    rows, u = board.rows, board.uncertainty
    fig, ax = plt.subplots(figsize=(6.0, _rows_height(len(rows))), layout="constrained")
    ys = np.arange(len(rows))[::-1]
    at = {r.model: y for r, y in zip(rows, ys)}
    if u is not None:
        for i, group in enumerate(u.groups):
            if i % 2:
                top, bottom = max(at[m] for m in group), min(at[m] for m in group)
                ax.axhspan(bottom - 0.5, top + 0.5, color="#eeeeee", zorder=0)
        for r, y in zip(rows, ys):
            ax.hlines(y, u.rank_low[r.model], u.rank_high[r.model], color="black", lw=1.2)
    ax.plot([r.rank for r in rows], ys, "o", color="black", ms=4)
    ax.set_yticks(ys, [_name(r.model) for r in rows])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("Borda rank (1 = best)")
    from matplotlib.ticker import MaxNLocator

    # ranks are whole numbers (two tied models read 0.75, 1.25 ... before)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlim(0.5, max([r.rank for r in rows] + ([max(u.rank_high.values())] if u and u.rank_high else [])) + 0.5)
    ax.grid(axis="y", visible=False)
    how = (
        f"lines: {round(100 * u.level)}% rank intervals, {u.draws} bootstrap draws over {', '.join(u.sources)}"
        if u
        else "no intervals computed"
    )
    return Figure("borda_ranks", f"Borda rank per model; {how}; grey bands: groups not told apart.", fig)


def _common_mean(board: Board, models: list[str]) -> tuple[dict[str, float], int]:
    """Each model's mean over the tasks all of `models` completed, and how many tasks that is."""
    rows = {r.model: r for r in board.rows}
    common = [t.name for t in board.tasks if all(rows[m].tasks.get(t.name) is not None for m in models)]
    if not common:
        return {}, 0
    return {m: float(np.mean([rows[m].tasks[t] for t in common])) for m in models}, len(common)


# where a point's label may go, in points from the point (x, y, horizontal alignment), nearest first
_OFFSETS = [
    (dx * s, dy * s, "left" if dx > 0 else "right")
    for s in (1, 2, 3)
    for dx, dy in ((4, 2), (4, -8), (-4, 2), (-4, -8), (4, 9), (-4, -15))
]


def _place_labels(ax, points: list[tuple[float, float, str]]) -> None:
    """Label each point where its text overlaps no label placed before (greedy over _OFFSETS, a leader line
    when the label sits far off): overlapping names cannot be read, and a cut name is a wrong name."""
    fig = ax.figure
    fig.canvas.draw()  # the limits and the transforms the boxes are measured in
    renderer = fig.canvas.get_renderer()
    from matplotlib.transforms import Bbox

    marks = [ax.transData.transform((x, y)) for x, y, _ in points]
    placed: list = [Bbox.from_extents(px - 4, py - 4, px + 4, py + 4) for px, py in marks]  # no label over a mark
    for x, y, text in points:
        for dx, dy, ha in _OFFSETS:
            note = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=6, ha=ha)
            box = note.get_window_extent(renderer).expanded(1.05, 1.15)
            if not any(box.overlaps(other) for other in placed) or (dx, dy, ha) == _OFFSETS[-1]:
                if abs(dx) > 4 or abs(dy) > 9:
                    note.arrow_patch = None
                    note.remove()
                    note = ax.annotate(
                        text,
                        (x, y),
                        xytext=(dx, dy),
                        textcoords="offset points",
                        fontsize=6,
                        ha=ha,
                        arrowprops={"arrowstyle": "-", "color": GREY, "lw": 0.5},
                    )
                placed.append(box)
                break
            note.remove()


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


def scatter(board: Board, cards: dict[str, Card], attr: str, what: str) -> Figure | None:
    """Score against a card's number (n_parameters or embed_dim), log scale. The score is the mean over the tasks
    every plotted model completed (no model is judged on tasks another lacks) when they are at least a quarter of
    the board's tasks (and 3); else the Borda rank, which counts every task and gives a missing one nothing. Models
    without the number are named above the axes. None when no model has it."""
    plt = pyplot()
    known = [r.model for r in board.rows if (getattr(cards[r.model], attr) or 0) > 0]
    if not known:
        return None
    means, n_common = _common_mean(board, known)
    rank = n_common < max(3, len(board.tasks) / 4)
    if rank:  # too few shared tasks for a fair mean
        ranks = {r.model: r.rank for r in board.rows}
        ys = {m: float(ranks[m]) for m in known}
        label = "Borda rank (1 = best; every task counts, a missing one earns nothing)"
    else:
        ys = {m: 100 * v for m, v in means.items()}
        label = f"mean score over the {n_common} tasks all plotted models completed (%)"
    fig, ax = plt.subplots(figsize=(6.5, 4.5), layout="constrained")
    for m, y in ys.items():
        ax.plot(getattr(cards[m], attr), y, "o", color="black", mfc="white" if cards[m].baseline else "black", ms=4)
    ax.set_xscale("log")
    if rank:
        from matplotlib.ticker import MaxNLocator

        ax.set_ylim(len(board.rows) + 0.5, 0.5)  # ranks are whole numbers from 1 (best, on top) to the board's size
        ax.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    _place_labels(ax, [(getattr(cards[m], attr), y, _name(m.split("/")[-1])) for m, y in ys.items()])
    _log_ticks(ax, [getattr(cards[m], attr) for m in ys])
    ax.set_xlabel(what + " (log scale)")
    ax.set_ylabel(label)
    lacking = [_name(r.model) for r in board.rows if r.model not in known]
    if lacking:  # names whole: no break inside a name
        note = f"not shown, no {what.lower()} recorded (or 0): {', '.join(lacking)}"
        wrapped = textwrap.fill(note, 110, break_on_hyphens=False, break_long_words=False)
        ax.set_title(wrapped, fontsize=6.5, color=GREY, loc="left")
    return Figure(f"score_vs_{attr}", f"Score against {what.lower()}.", fig)


def _field(record, name: str):
    """A record's field, whether compute.score_and_seconds gives mappings or dataclasses."""
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def score_vs_compute(board: Board, results: Iterable[Path]) -> Figure | None:
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
    rows = {r.model: r for r in board.rows}
    known = [m for m in rows if seconds.get(m)]
    common = [t.name for t in board.tasks if all(t.name in seconds[m] and rows[m].tasks.get(t.name) is not None for m in known)]
    if not known or not common:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5), layout="constrained")
    points = []
    for m in known:
        x = sum(seconds[m][t] for t in common)
        y = 100 * float(np.mean([rows[m].tasks[t] for t in common]))
        ax.plot(x, y, "o", color="black", ms=4)
        points.append((x, y, _name(m.split("/")[-1])))
    ax.set_xscale("log")
    _log_ticks(ax, [x for x, _, _ in points])
    _place_labels(ax, points)
    ax.set_xlabel(f"embedding seconds over the {len(common)} tasks (log scale)")
    ax.set_ylabel(f"mean score over the same {len(common)} tasks (%)")
    lacking = [_name(m) for m in rows if m not in known]
    if lacking:
        note = f"not shown, no embedding seconds recorded: {', '.join(lacking)}"
        ax.set_title(
            textwrap.fill(note, 110, break_on_hyphens=False, break_long_words=False), fontsize=6.5, color=GREY, loc="left"
        )
    caption = "Score against compute: mean score and embedding seconds over the tasks every plotted model has both for."
    return Figure("score_vs_compute", caption, fig)


def correlation(board: Board) -> Figure | None:
    """Spearman's rho between every two tasks over the models that completed both (the selector's
    task_correlations); a pair with fewer than 3 such models is hatched and marked n/a. None under 2 tasks."""
    from .selection import Matrix, task_correlations

    plt = pyplot()
    tasks = [t.name for t in board.tasks]
    if len(tasks) < 2:
        return None
    values = np.array([[np.nan if r.tasks.get(t) is None else r.tasks[t] for t in tasks] for r in board.rows], dtype=float)
    rho = task_correlations(Matrix([r.model for r in board.rows], tasks, values, {}))
    n = len(tasks)
    cell = 0.32 if n <= 40 else max(0.1, 12.0 / n)  # inches; a large matrix stays a page wide
    size = 1.2 + cell * n
    fig, ax = plt.subplots(figsize=(size + 1.5, size), layout="constrained")
    ax.grid(False)
    # n/a cells are masked: the hatched background shows through them (one patch, however many cells)
    ax.add_patch(plt.Rectangle((-0.5, -0.5), n, n, fill=False, hatch="///", ec="#bbbbbb", lw=0, zorder=0))
    image = ax.imshow(np.ma.masked_invalid(rho), cmap="cividis", vmin=-1, vmax=1, zorder=1)
    font = 8 if n <= 40 else max(3.0, cell * 72 * 0.7)
    ax.set_xticks(range(n), tasks, rotation=90, fontsize=font)
    ax.set_yticks(range(n), tasks, fontsize=font)
    if n <= 40:  # numbers readable in grayscale; beyond 40 tasks the cells are too small to hold them
        for i in range(n):
            for j in range(n):
                text = "n/a" if np.isnan(rho[i, j]) else f"{rho[i, j]:.2f}"
                colour = GREY if np.isnan(rho[i, j]) else "white" if rho[i, j] < -0.3 else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=5, color=colour)
    fig.colorbar(image, ax=ax, shrink=0.6, label="Spearman's rho over models")
    return Figure(
        "task_correlation", "Task-by-task Spearman correlation over models (hatched, n/a: under 3 models have both).", fig
    )


def _line_figure(
    name: str,
    caption: str,
    panels: dict[str, dict[str, tuple[list[str], list[float | None]]]],
    ylabel: str,
    counts: dict[str, dict[str, set[int]]] | None = None,
):
    """One panel per key of `panels`, each a line per run (label -> (x labels, scores)); a legend outside. A
    panel's x axis is the union of its runs' steps (in order), so a run lacking a step (an empty duration
    bucket) leaves a gap there instead of sliding its later points onto the wrong labels; a missing score is
    a gap, never zero. counts: panel -> step -> the item counts behind it, written under the step's label."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(3.2 * len(panels) + 2.5, 3.4), layout="constrained")
    handles: dict[str, object] = {}
    styles = {label: i for i, label in enumerate(dict.fromkeys(k for p in panels.values() for k in p))}
    for ax, (title, runs) in zip(axes[0], panels.items()):
        steps = list(dict.fromkeys(step for run_steps, _ in runs.values() for step in run_steps))
        for label, (run_steps, scores) in runs.items():
            i = styles[label]
            ys = [np.nan] * len(steps)
            for step, score in zip(run_steps, scores):
                ys[steps.index(step)] = np.nan if score is None else 100 * score
            (line,) = ax.plot(
                range(len(steps)), ys, LINES[i % len(LINES)], marker=MARKERS[i % len(MARKERS)], color="black", ms=4, lw=1
            )
            handles.setdefault(label, line)
        n = (counts or {}).get(title, {})
        ticks = [step + (f"\nn={_span(n[step])}" if n.get(step) else "") for step in steps]
        ax.set_xticks(range(len(steps)), ticks, rotation=45 if len(steps) > 3 else 0, ha="right" if len(steps) > 3 else "center")
        ax.set_xlim(-0.5, len(steps) - 0.5)
        ax.set_title(_label(title, 30), fontsize=8)
        ax.set_ylabel(ylabel)
    fig.legend(handles.values(), [_name(k) for k in handles], loc="outside right center", fontsize=6.5, frameon=False)
    return Figure(name, caption, fig)


def _span(values: set[int]) -> str:
    """'11' or '9–11': the item counts of one step over the runs."""
    return str(min(values)) if len(values) == 1 else f"{min(values)}–{max(values)}"


def robust_files(results: Iterable[Path]) -> list[Path]:
    """robust.json files (`maeb robust`'s output) in or under the result folders."""
    return sorted({p for r in results if Path(r).is_dir() for p in Path(r).rglob("robust.json")})


def robustness(paths: list[Path]) -> Figure | None:
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
    return _line_figure("robustness", "Mean score under each perturbation ladder (clean first).", panels, "mean score (%)")


def duration_curves(results: Iterable[Path]) -> Figure | None:
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
    return _line_figure("durations", caption, panels, "score (%)", counts)


def figures(board: Board, cards: dict[str, Card], results: Iterable[Path]) -> tuple[list[Figure], list[str]]:
    """Every figure the board and the result folders allow, and one line per figure left out and why."""
    results = list(results)
    out = [task_types(board), borda_forest(board)]
    skipped = []
    for attr, what in (("n_parameters", "Parameters"), ("embed_dim", "Embedding dimension")):
        fig = scatter(board, cards, attr, what)
        out.append(fig) if fig else skipped.append(f"score_vs_{attr}: no model records its {what.lower()}")
    for fig, why in (
        (score_vs_compute(board, results), "score_vs_compute: no result records its embedding seconds"),
        (correlation(board), "task_correlation: fewer than 2 tasks"),
        (robustness(robust_files(results)), "robustness: no robust.json (python -m maeb robust) under the results"),
        (duration_curves(results), "durations: no result run with --duration-buckets"),
        (_layer_curves(board), "score_by_layer: no layer sweep (run --layers) among the results"),
    ):
        out.append(fig) if fig else skipped.append(why)
    return out, skipped


def _layer_curves(board: Board) -> Figure | None:
    from .layerfig import layer_curves  # its own module (maeb.analysis.layerfig), which imports this one

    return layer_curves(board)


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
                f.figure.savefig(buf, format=fmt, bbox_inches="tight", pad_inches=0.05, metadata=_METADATA[fmt])  # type: ignore[attr-defined]
                write_bytes_atomic(path, buf.getvalue())
                written.append(path)
            plt.close(f.figure)  # type: ignore[arg-type]
    return written


def svg_text(fig: Figure) -> str:
    """A figure as SVG text (for the page), the figure closed after."""
    plt = pyplot()
    buf = io.StringIO()
    with plt.rc_context(STYLE):
        fig.figure.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.05, metadata=_METADATA["svg"])  # type: ignore[attr-defined]
    plt.close(fig.figure)  # type: ignore[arg-type]
    return buf.getvalue()


def build(board: Board, cards: dict[str, Card], results: Iterable[Path]) -> tuple[list[Figure], list[str]]:
    """figures() drawn under STYLE (fonts and sizes apply when drawn, not only when saved)."""
    plt = pyplot()
    with plt.rc_context(STYLE):
        return figures(board, cards, results)
