"""Task selection as MAEB chose 30 of 98 tasks, and the analyses the paper reports.

Scores of the pool's tasks across models (models missing more than `max_missing` tasks dropped) are
rank-correlated (Spearman) task against task. While some pair of remaining tasks correlates above
the threshold, the most correlated pair gives up one task, unless that would remove the last task
of a type, category, domain or language, or a protected task: a text-to-audio task is kept over its
audio-to-text twin, else the cheaper task (mean evaluation time) is kept. Pairs where neither may
go are set aside. Then one task per same-source family remains. Validation compares per-model
averages on the selection with the full pool (Pearson r, Spearman rho) and the time saved."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import pearsonr, spearmanr

from ..results.read import Score
from .leaderboard import TaskInfo

PROTECTED = ("BirdCLEF", "RavdessZeroshot")


@dataclass
class Matrix:
    """Scores as a models x tasks array (NaN where missing), with each task's mean evaluation time."""

    models: list[str]
    tasks: list[str]
    values: np.ndarray  # models x tasks, NaN where missing
    eval_time: dict[str, float]


def score_matrix(scores: list[Score], tasks: list[str], max_missing: int = 10) -> Matrix:
    """The scores of `tasks` as a Matrix (a cell: the mean of its scores); models missing more than `max_missing` tasks
    are dropped."""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    times: dict[str, list[float]] = defaultdict(list)
    for s in scores:
        if s.task in tasks:
            per[(s.model, s.task)].append(s.value)
            if s.evaluation_time is not None:
                times[s.task].append(s.evaluation_time)
    seen = {t for _, t in per}
    present = [t for t in tasks if t in seen]
    models = sorted({m for m, _ in per})
    index = {t: j for j, t in enumerate(present)}
    values = np.full((len(models), len(present)), np.nan)
    for i, m in enumerate(models):
        for t, j in index.items():
            if (m, t) in per:
                values[i, j] = float(np.mean(per[(m, t)]))
    keep = np.isnan(values).sum(axis=1) <= max_missing
    # evaluation time per task: its mean over model runs (a run's time covers all its subsets)
    eval_time = {t: float(np.mean(times[t])) if times[t] else 0.0 for t in present}
    return Matrix([m for m, k in zip(models, keep) if k], present, values[keep], eval_time)


def task_correlations(matrix: Matrix) -> np.ndarray:
    """Spearman rho between every two tasks over the models that have both (NaN under 3 models)."""
    from scipy.stats import rankdata

    x = matrix.values
    n = x.shape[1]
    mask = ~np.isnan(x)
    if mask.all():
        ranks = np.apply_along_axis(rankdata, 0, x)
        return np.corrcoef(ranks, rowvar=False) if n > 1 else np.ones((1, 1))
    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            both = mask[:, i] & mask[:, j]
            if both.sum() >= 3:
                out[i, j] = out[j, i] = spearmanr(x[both, i], x[both, j]).statistic
    np.fill_diagonal(out, 1.0)
    return out


@dataclass
class Selection:
    """The result of a task selection: its correlation threshold, the tasks kept, the removed ones (each with why) and the
    validation figures."""

    threshold: float
    selected: list[str]
    removed: list[dict] = field(default_factory=list)
    validation: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The selection as a plain dict, for JSON output."""
        return {"threshold": self.threshold, "selected": self.selected, "removed": self.removed, "validation": self.validation}


def _coverage_keys(info: TaskInfo) -> list[tuple[str, str]]:
    keys = [("type", info.type)]
    if info.category:
        keys.append(("category", info.category))
    keys += [("domain", d) for d in info.domains] + [("language", lang) for lang in info.languages]
    return keys


def select(matrix: Matrix, infos: dict[str, TaskInfo], threshold: float = 0.8, protected=PROTECTED) -> Selection:
    """Greedy task selection: for each pair of tasks correlated above `threshold`, strongest first, drop one (the
    audio-to-text side of a t2a/a2t pair, else the costlier) unless it is protected or the last of its coverage group;
    returns the Selection with its validation."""
    rho = task_correlations(matrix)
    tasks = list(matrix.tasks)
    alive = set(tasks)
    coverage: dict[tuple[str, str], int] = defaultdict(int)
    for t in tasks:
        for key in _coverage_keys(infos.get(t, TaskInfo(t))):
            coverage[key] += 1
    order = [
        (rho[i, j], tasks[i], tasks[j])
        for i in range(len(tasks))
        for j in range(i + 1, len(tasks))
        if not np.isnan(rho[i, j]) and rho[i, j] > threshold
    ]
    order.sort(key=lambda x: (-x[0], x[1], x[2]))
    removed = []

    def removable(t: str) -> bool:
        if t in protected:
            return False
        return all(coverage[k] > 1 for k in _coverage_keys(infos.get(t, TaskInfo(t))))

    def loser(a: str, b: str) -> list[str]:
        """Which of the pair to drop, most preferred first."""
        ca, cb = infos.get(a, TaskInfo(a)).category, infos.get(b, TaskInfo(b)).category
        if {ca, cb} == {"t2a", "a2t"}:
            return [a if ca == "a2t" else b]  # text-to-audio stays
        ta, tb = matrix.eval_time.get(a, 0.0), matrix.eval_time.get(b, 0.0)
        return [a, b] if (ta, a) > (tb, b) else [b, a]  # the costlier goes first

    for value, a, b in order:
        if a not in alive or b not in alive:
            continue
        for victim in loser(a, b):
            if removable(victim):
                kept = b if victim == a else a
                alive.discard(victim)
                for key in _coverage_keys(infos.get(victim, TaskInfo(victim))):
                    coverage[key] -= 1
                removed.append({"task": victim, "redundant_with": kept, "rho": round(float(value), 4), "reason": "correlated"})
                break
    families: dict[str, list[str]] = defaultdict(list)
    for t in tasks:
        fam = infos.get(t, TaskInfo(t)).family
        if fam and t in alive:
            families[fam].append(t)
    for members in families.values():
        members.sort(key=lambda t: (infos[t].category == "a2t", matrix.eval_time.get(t, 0.0), t))
        for extra in members[1:]:
            if removable(extra):
                alive.discard(extra)
                for key in _coverage_keys(infos[extra]):
                    coverage[key] -= 1
                i, j = tasks.index(extra), tasks.index(members[0])
                removed.append(
                    {
                        "task": extra,
                        "redundant_with": members[0],
                        "rho": None if np.isnan(rho[i, j]) else round(float(rho[i, j]), 4),
                        "reason": "same-source family",
                    }
                )
    selected = [t for t in tasks if t in alive]
    return Selection(threshold, selected, removed, validate(matrix, selected))


def model_means(matrix: Matrix, tasks: list[str]) -> np.ndarray:
    """Each model's mean score over `tasks`, ignoring missing cells."""
    cols = [matrix.tasks.index(t) for t in tasks]
    return np.nanmean(matrix.values[:, cols], axis=1)


def validate(matrix: Matrix, selected: list[str]) -> dict:
    """How well the selected tasks stand for the pool: Pearson and Spearman correlation of the models' means over both,
    and the evaluation time of each (the speedup)."""
    full, sub = model_means(matrix, matrix.tasks), model_means(matrix, selected)
    ok = ~(np.isnan(full) | np.isnan(sub))
    t_full = sum(matrix.eval_time.get(t, 0.0) for t in matrix.tasks)
    t_sel = sum(matrix.eval_time.get(t, 0.0) for t in selected)
    return {
        "n_models": int(ok.sum()),
        "n_tasks_pool": len(matrix.tasks),
        "n_tasks_selected": len(selected),
        "pearson_r": round(float(pearsonr(full[ok], sub[ok]).statistic), 4) if ok.sum() > 2 else None,
        "spearman_rho": round(float(spearmanr(full[ok], sub[ok]).statistic), 4) if ok.sum() > 2 else None,
        "evaluation_time_pool_s": round(t_full, 1),
        "evaluation_time_selected_s": round(t_sel, 1),
        "speedup": round(t_full / t_sel, 2) if t_sel else None,
    }


def sweep(matrix: Matrix, infos: dict[str, TaskInfo], thresholds) -> list[dict]:
    """The validation figures of a selection at each threshold."""
    out = []
    for th in thresholds:
        result = select(matrix, infos, th)
        out.append({"threshold": th, **result.validation})
    return out


def compare_benchmarks(scores: list[Score], a: list[str], b: list[str]) -> dict:
    """Correlation of per-model averages on two task sets, over models complete on both."""
    ma, mb = score_matrix(scores, a, max_missing=0), score_matrix(scores, b, max_missing=0)
    common = sorted(set(ma.models) & set(mb.models))
    xa = model_means(ma, ma.tasks)[[ma.models.index(m) for m in common]]
    xb = model_means(mb, mb.tasks)[[mb.models.index(m) for m in common]]
    return {
        "n_models": len(common),
        "pearson_r": round(float(pearsonr(xa, xb).statistic), 4) if len(common) > 2 else None,
        "spearman_rho": round(float(spearmanr(xa, xb).statistic), 4) if len(common) > 2 else None,
        "models": {m: [round(float(x), 6), round(float(y), 6)] for m, x, y in zip(common, xa, xb)},
    }


def tradeoff(scores: list[Score], acoustic: list[str], linguistic: list[str]) -> list[dict]:
    """Per model: mean over an acoustic task group and a linguistic one, side by side."""
    ma, ml = score_matrix(scores, acoustic, max_missing=0), score_matrix(scores, linguistic, max_missing=0)
    common = sorted(set(ma.models) & set(ml.models))
    rows: list[dict[str, Any]] = []
    for m in common:
        a = float(np.mean(ma.values[ma.models.index(m)]))
        b = float(np.mean(ml.values[ml.models.index(m)]))
        rows.append({"model": m, "acoustic": round(a, 6), "linguistic": round(b, 6), "difference": round(a - b, 6)})
    rows.sort(key=lambda r: -r["difference"])
    return rows
