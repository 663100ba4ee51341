"""How sure a leaderboard is: an interval for each task score and for each Borda rank, and the
groups of models whose order the data cannot tell apart.

Two sources of noise are read from the result files behind a board:
- the few-shot experiments: a classification or multilabel result holds each experiment's score
  (mteb's `scores_per_experiment`: the draws of the training sample, or the folds); resampling
  them says how much the task score owes to which clips were drawn;
- the stability band of a maeb result (`maeb.run.stability.band`: how far the score moves when the
  vectors move by the rounding another machine makes; maeb.run.stability).
And one from the benchmark itself: which tasks it holds (resampling the tasks says how much a rank
owes to the choice of tasks).

Each bootstrap draw resamples the tasks with replacement (a task drawn twice counts twice), each
cell's experiments with replacement (the cell's score moves by the resampled mean minus the mean)
and adds a uniform draw within each cell's band, then counts Borda points exactly as the board
does (under the board's rule: average ranks within a task, n_models or n_task - rank points, nothing for a missing
task). A model's rank interval holds the central `level` share of its ranks over the draws; two
neighbours on the board are told apart when the upper one has more points in at least `level` of
the draws; a group is a run of neighbours none of which can be told from the next. The board's
own ranks are not changed: this is reported beside them.

Every random number of a draw is addressed rather than drawn in turn: it is a hash (`uniforms`) of the seed,
the draw, what it moves (the task resampling, or a cell named by its model and task) and its place there.
So the bootstrap of a subset of the tasks (`compute` on the board of `load_board(tasks=...)`) draws each
cell's noise as the whole board's does, and the leaderboard page's script redoes it exactly, from the
recipe (`Uncertainty.recipe`) the page embeds: the same numbers in the same order of operations."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .draws import name_key, uniforms

SOURCES = ("tasks", "experiments", "bands")
_SLACK = 1e-6  # results are rounded to 6 places


@dataclass
class CellInterval:
    """One model's score on one task with its interval (the score's own scale, 0-1)."""

    value: float
    low: float
    high: float
    experiments: int = 0  # experiments behind the interval (0: none recorded)
    band: float | None = None  # the result's stability band, where recorded


@dataclass
class Uncertainty:
    """The bootstrap of a leaderboard's ranks: each model's rank interval, which neighbours are told apart and the groups that are
    not."""

    draws: int
    level: float
    sources: tuple[str, ...]
    seed: int
    models: list[str]  # the board's rows, in its order
    rank_low: dict[str, int] = field(default_factory=dict)
    rank_high: dict[str, int] = field(default_factory=dict)
    above_next: list[float] = field(default_factory=list)  # per neighbour pair: share of draws the upper one leads
    groups: list[list[str]] = field(default_factory=list)
    cells: dict[tuple[str, str], CellInterval] = field(default_factory=dict)
    set_aside: list[str] = field(default_factory=list)  # one line per band or experiment list not used, naming its file
    # what redoes the draws on a subset of the tasks (the page's script): seed, draws, level, sources, each
    # moving cell's band and experiments, each task's metric range; None for an Uncertainty made by hand
    recipe: dict | None = field(default=None, repr=False)

    @property
    def distinguishable(self) -> int:
        """Neighbour pairs on the board whose order holds in at least `level` of the draws."""
        return sum(share >= self.level for share in self.above_next)

    def group_of(self, model: str) -> int:
        """1-based number of the model's group, in board order."""
        return next(i for i, group in enumerate(self.groups, 1) if model in group)

    def rank_text(self, model: str) -> str:
        """A model's rank interval as text: "3", or "2–5" when the draws disagree."""
        low, high = self.rank_low[model], self.rank_high[model]
        return str(low) if low == high else f"{low}–{high}"

    def cell_text(self, model: str, task: str, value: float | None) -> str:
        """A task score in %, with its band (±) and its few-shot interval ([low–high]) where
        recorded; '' when missing."""
        if value is None:
            return ""
        text = f"{100 * value:.1f}"
        cell = self.cells.get((model, task))
        if cell is not None and cell.band:
            text += f" ±{100 * cell.band:.1f}"
        if cell is not None and cell.experiments:
            text += f" [{100 * cell.low:.1f}–{100 * cell.high:.1f}]"
        return text

    def summary(self) -> str:
        """One line: how many neighbouring pairs are told apart, the number of groups, and how it was measured."""
        pairs = len(self.above_next)
        return (
            f"{self.distinguishable} of {pairs} neighbouring rank pairs told apart, {len(self.groups)} "
            f"group{'s' if len(self.groups) != 1 else ''} "
            f"({self.draws} bootstrap draws over {', '.join(self.sources)}; {round(100 * self.level)}% level)"
        )

    def as_dict(self) -> dict:
        """The uncertainty as a plain dict, for the leaderboard's JSON."""
        return {
            "draws": self.draws,
            "level": self.level,
            "sources": list(self.sources),
            "seed": self.seed,
            "distinguishable_neighbours": self.distinguishable,
            "neighbour_pairs": len(self.above_next),
            "groups": self.groups,
            "models": {
                m: {
                    "rank_low": self.rank_low[m],
                    "rank_high": self.rank_high[m],
                    "group": self.group_of(m),
                    "leads_next": None if i >= len(self.above_next) else round(self.above_next[i], 4),
                }
                for i, m in enumerate(self.models)
            },
            **({"set_aside": list(self.set_aside)} if self.set_aside else {}),  # (absent when all was used)
            "cells": [
                {
                    "model": m,
                    "task": t,
                    "low": round(c.low, 6),
                    "high": round(c.high, 6),
                    "experiments": c.experiments,
                    "band": c.band,
                }
                for (m, t), c in sorted(self.cells.items())
            ],
        }


def ranks(values: np.ndarray, method: str = "average") -> np.ndarray:
    """scipy's rankdata for 1-d floats ("average" or "min"; equal values tie exactly), without its
    per-call overhead (a bootstrap ranks thousands of short columns)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    before = np.concatenate(([0], np.cumsum(counts)[:-1]))
    per_value = before + (counts + 1) / 2 if method == "average" else before + 1.0
    return per_value[inverse]


def borda_points(matrix: np.ndarray, lower_is_better: np.ndarray, n_models: int, rule: str = "mteb") -> np.ndarray:
    """(models x tasks) points: within each task (column) the models with a score (not NaN) are
    ranked, the best first, ties sharing their average rank; each earns n_models - rank (rule
    "mteb") or n_task - rank with n_task the models scored on that task (rule "paper"); a missing
    score earns 0. The board's points are the row sums (maeb.analysis.leaderboard.aggregate)."""
    out = np.zeros(matrix.shape)
    for j in range(matrix.shape[1]):
        column = matrix[:, j]
        present = ~np.isnan(column)
        if present.any():
            sign = 1.0 if lower_is_better[j] else -1.0
            voters = n_models if rule == "mteb" else int(present.sum())
            out[present, j] = voters - ranks(sign * column[present])
    return out


def experiments_of(entry: dict, metric: str | None) -> list:
    """The per-experiment values of an entry's main metric as recorded ([] when the entry records
    none). Values are not checked here: a NaN, a string or a missing value among them is set aside
    by the caller with a line naming the file (`_bad_experiment`), not dropped without a word."""
    rows = entry.get("scores_per_experiment")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return []
    names = [metric, "main_score"] if metric else ["main_score"]
    recorded = [name for name in names if any(name in r for r in rows)]
    # the task's metric where the experiments record it, else their main_score
    good = [n for n in recorded if all(_finite(r.get(n)) for r in rows)]
    chosen = good or recorded
    return [r.get(chosen[0]) for r in rows] if chosen else []


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class _Files:
    """Result files read once each (a board's scores name the file they came from)."""

    def __init__(self):
        self._data: dict[str, dict | None] = {}

    def get(self, source: str) -> dict | None:
        if source not in self._data:
            data = None
            if source.endswith(".json") and Path(source).is_file():
                try:
                    data = json.loads(Path(source).read_text(encoding="utf-8"))
                except (OSError, json.JSONDecodeError):
                    data = None
            self._data[source] = data if isinstance(data, dict) else None
        return self._data[source]


def _entry(data: dict | None, split: str, subset: str) -> dict:
    for entry in ((data or {}).get("scores") or {}).get(split) or []:
        if isinstance(entry, dict) and entry.get("hf_subset", "default") == subset:
            return entry
    return {}


def _band(data: dict | None):
    """The stability band a result file records, as recorded (None: none recorded; a record
    without a band is a band not measured, not one to set aside)."""
    record = ((data or {}).get("maeb") or {}).get("stability") or {}
    return record.get("band") if isinstance(record, dict) else None


@dataclass
class _Noise:
    """What moves one cell: each of its combos' experiments (in the board's order of its (split, subset)
    scores; [] for a combo that records none) and its band."""

    combos: list[list[float]]
    band: float | None

    @property
    def experiments(self) -> int:
        return sum(len(c) for c in self.combos)


_TASKS, _EXPERIMENTS, _BAND = 1, 2, 3  # the streams of random numbers: task resampling, a cell's experiments, its band


def _mean(values: list[float]) -> float:
    total = 0.0
    for v in values:  # left to right, as the page's script adds
        total += v
    return total / len(values)


def _moved(value: float, cell: _Noise, key: int, seed: int, draws: int, sources, bounds) -> np.ndarray | None:
    """The cell's value in each draw (None when the sources move nothing in it): each combo's experiments
    resampled with replacement (its score moves by the resampled mean minus the mean; the cell by the mean
    of those moves over its combos), plus a uniform draw within its band, kept within the metric's range.
    Each operation in the order the page's script does it, so the two give the same doubles."""
    use_experiments = "experiments" in sources and cell.experiments > 0
    use_band = "bands" in sources and bool(cell.band)
    if not (use_experiments or use_band):
        return None
    shift = np.zeros(draws)
    if use_experiments:
        u = uniforms(seed, _EXPERIMENTS, key, draws, cell.experiments)
        total, at = np.zeros(draws), 0
        for combo in cell.combos:
            if not combo:
                continue
            k, values = len(combo), np.array(combo, dtype=np.float64)
            acc = np.zeros(draws)
            for e in range(k):
                acc = acc + values[np.floor(u[:, at + e] * k).astype(np.intp)]
            at += k
            total = total + (acc / k - _mean(combo))
        shift = total / len(cell.combos)
    if use_band:
        shift = shift + float(cell.band or 0.0) * (2 * uniforms(seed, _BAND, key, draws, 1)[:, 0] - 1)
    moved = value + shift
    return moved if bounds is None else np.minimum(np.maximum(moved, bounds[0]), bounds[1])


def task_weights(seed: int, draws: int, n_tasks: int) -> np.ndarray:
    """(draws, n_tasks) times each task is drawn when n_tasks are drawn with replacement: pick i of draw d
    is task floor(u(d, i) * n_tasks), in the board's order of tasks."""
    picks = np.floor(uniforms(seed, _TASKS, 0, draws, n_tasks) * n_tasks).astype(np.intp)
    out = np.zeros((draws, n_tasks))
    np.add.at(out, (np.repeat(np.arange(draws), n_tasks), picks.ravel()), 1.0)
    return out


def _bad_experiment(values: list, bounds: tuple[float, float] | None) -> str | None:
    """Why a list of experiment scores cannot be used: its first value that is not a finite number
    or lies outside the metric's range (with the rounding slack), or None."""
    for v in values:
        if not _finite(v):
            return f"experiment score {v!r} is not a finite number" if v is not None else "an experiment has no score"
        if bounds is not None and not bounds[0] - _SLACK <= v <= bounds[1] + _SLACK:
            return f"experiment score {v:g} is outside the range"
    return None


def _cell_noise(board, metric_of, files: _Files, extra: dict, set_aside: list[str]) -> dict[tuple[str, str], _Noise]:
    """Per (model, task): the experiments and the band behind the board's value. Result files are
    not trusted: experiments that are not finite numbers or lie outside the metric's range, and a band
    that is not a finite number of at least 0 or is wider than that range, are set
    aside (a line each in `set_aside`, naming the file), so one edited or foreign file cannot give
    a cell an interval of ±1e11 or a negative accuracy, nor move the rank intervals."""
    from ..results.read import check_band, metric_range

    out = {}
    for (model, task), scores in board.cells.items():
        combos: list[list[float]] = []
        band = None
        metric = metric_of(task)
        bounds = metric_range(metric)
        shown = f"{metric or 'main score'} [{bounds[0]:g}, {bounds[1]:g}]" if bounds else ""
        for s in scores:
            data = files.get(s.source)
            found = experiments_of(_entry(data, s.split, s.subset), metric)
            where = s.source
            if not found:
                found, where = extra.get((model, s.revision, task, s.split, s.subset), ([], ""))
            bad = _bad_experiment(found, bounds)
            if bad is not None:
                of = f" of {shown}" if bad.endswith("range") else ""
                set_aside.append(f"{where}: {task} split {s.split} subset {s.subset}: {bad}{of}; its experiments are set aside")
                found = []
            combos.append([float(v) for v in found])
            b = _band(data)
            problem = check_band(b, metric) if b is not None else None
            if problem:
                line = f"{s.source}: {task}: {problem}; set aside"
                if line not in set_aside:  # (a file's splits and subsets share its one band)
                    set_aside.append(line)
                b = None
            b = None if b is None else float(b)
            band = b if band is None or (b is not None and b > band) else band
        if any(combos) or band:
            out[(model, task)] = _Noise(combos, band)
    return out


def experiment_index(paths: Iterable[Path]) -> dict[tuple, tuple[list[float], str]]:
    """(model, revision, task, split, subset) -> (per-experiment main scores, the file), from result files
    under the given folders (a board read from main_scores.csv lacks them; raw files beside it
    may hold them)."""
    from ..results.read import model_and_revision

    out = {}
    for root in map(Path, paths):
        files = [root] if root.is_file() else sorted(root.rglob("*.json")) if root.is_dir() else []
        for path in files:
            if path.suffix != ".json" or path.name == "model_meta.json":
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
                continue
            model, revision = model_and_revision(path)
            task = data.get("task_name", path.stem)
            for split, entries in data["scores"].items():
                for entry in entries if isinstance(entries, list) else []:
                    if isinstance(entry, dict):
                        values = experiments_of(entry, None)
                        if values:  # (the file is kept for the line that sets bad values aside)
                            out[(model, revision, task, split, entry.get("hf_subset", "default"))] = (values, str(path))
    return out


def _clip(value: float, bounds: tuple[float, float] | None) -> float:
    return float(value) if bounds is None else float(min(max(value, bounds[0]), bounds[1]))


def min_draws(level: float = 0.95) -> int:
    """The fewest draws whose central `level` interval is not just the lowest and highest draw
    (each tail must hold at least one draw: 40 at 95%); fewer would tell ranks apart by chance."""
    return math.ceil(2 / (1 - level) - 1e-9)


def compute(
    board,
    draws: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    sources: Iterable[str] = SOURCES,
    extra_results: Iterable[Path] = (),
) -> Uncertainty:
    """The board's uncertainty (see the module's docstring); extra_results: result folders whose
    files give experiments to cells the board read from a CSV."""
    from ..results.read import metric_range

    asked = set(sources)
    sources = tuple(s for s in SOURCES if s in asked)
    if asked - set(SOURCES) or not 0 < level < 1:
        raise ValueError(f"sources must be among {SOURCES}, level in (0, 1)")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < min_draws(level):
        raise ValueError(f"draws must be a whole number, at least {min_draws(level)} for a {level:.0%} interval, not {draws!r}")
    rows = [r.model for r in board.rows]
    tasks = [t.name for t in board.tasks]
    voters = sorted({m for per in board.partial.values() for m in per} | set(rows))
    index = {m: i for i, m in enumerate(voters)}
    matrix = np.full((len(voters), len(tasks)), np.nan)
    for j, task in enumerate(tasks):
        for model, value in board.partial.get(task, {}).items():
            matrix[index[model], j] = value
    lower = np.array([t.lower_is_better for t in board.tasks], dtype=bool)
    n_models = len(rows)
    base = borda_points(matrix, lower, n_models, board.borda)
    metric = {t.name: t.main_score for t in board.tasks}
    set_aside: list[str] = []
    noise = _cell_noise(board, metric.get, _Files(), experiment_index(extra_results) if extra_results else {}, set_aside)
    bounds = {t: metric_range(m) for t, m in metric.items()}

    col_of = {t: j for j, t in enumerate(tasks)}
    moved_of: dict[tuple[str, str], np.ndarray] = {}
    for (model, task), cell in noise.items():
        moved = _moved(matrix[index[model], col_of[task]], cell, name_key(model, task), seed, draws, sources, bounds[task])
        if moved is not None:
            moved_of[(model, task)] = moved
    cells_i = np.array([index[m] for m, _ in moved_of], dtype=int)
    cells_j = np.array([col_of[t] for _, t in moved_of], dtype=int)
    cell_values = np.array(list(moved_of.values())).reshape(len(moved_of), draws)
    touched = sorted({col_of[t] for _, t in moved_of})
    weights = task_weights(seed, draws, len(tasks)) if "tasks" in sources else np.ones((draws, len(tasks)))

    ranked = np.array([index[m] for m in rows], dtype=int)
    points = np.zeros((draws, len(rows)))
    ranked_draws = np.zeros((draws, len(rows)), dtype=int)
    for b in range(draws):
        columns = base
        if moved_of:
            moved = matrix.copy()
            moved[cells_i, cells_j] = cell_values[:, b]
            columns = base.copy()
            columns[:, touched] = borda_points(moved[:, touched], lower[touched], n_models, board.borda)
        total = columns[ranked] @ weights[b]
        points[b] = total
        ranked_draws[b] = ranks(-total, "min")

    tail = (1 - level) / 2
    out = Uncertainty(draws, level, sources, seed, rows, set_aside=list(dict.fromkeys(set_aside)))
    for k, model in enumerate(rows):
        out.rank_low[model] = int(np.quantile(ranked_draws[:, k], tail, method="lower"))
        out.rank_high[model] = int(np.quantile(ranked_draws[:, k], 1 - tail, method="higher"))
    out.above_next = [float(np.mean(points[:, k] > points[:, k + 1])) for k in range(len(rows) - 1)]
    groups = [[rows[0]]] if rows else []
    for k in range(1, len(rows)):
        if out.above_next[k - 1] >= level:
            groups.append([rows[k]])
        else:
            groups[-1].append(rows[k])
    out.groups = groups
    for (model, task), cell in noise.items():
        value = matrix[index[model], col_of[task]]
        use = cell.experiments and "experiments" in sources and (model, task) in moved_of
        values: np.ndarray | list[float] = moved_of[(model, task)] if use else []
        band = cell.band or 0.0
        low, high = np.quantile(values, [tail, 1 - tail]) if len(values) else (value - band, value + band)
        low, high = _clip(low, bounds[task]), _clip(high, bounds[task])  # e.g. no accuracy above 100%
        out.cells[(model, task)] = CellInterval(
            float(value), float(low), float(high), cell.experiments if len(values) else 0, cell.band
        )
    out.recipe = {
        "seed": seed & 0xFFFFFFFF,
        "draws": draws,
        "level": level,
        "sources": list(sources),
        # [model, task, band (None: not drawn), each combo's experiments ([]: none drawn)], the cells that move
        "cells": [
            [
                m,
                t,
                noise[(m, t)].band if "bands" in sources and noise[(m, t)].band else None,
                noise[(m, t)].combos if "experiments" in sources and noise[(m, t)].experiments else [],
            ]
            for m, t in moved_of
        ],
        # [low, high] of each moving task's metric, None for an open end (FD: [0, None]); JSON has no infinity
        "bounds": {
            t: [v if math.isfinite(v) else None for v in span]
            for t in sorted({t for _, t in moved_of})
            if (span := bounds[t]) is not None
        },
    }
    return out
