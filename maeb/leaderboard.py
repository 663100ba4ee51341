"""Aggregation for any benchmark, with the semantics of mteb's leaderboard.

Per task: the mean of a model's main scores over subsets and splits. A model that lacks some
(subset, split) of a task has no score for it in the means, but its partial mean still votes in
the Borda count (as in mteb). Borda: within each task, models are ranked by score (ties share the
average rank); a model earns n_models - rank points; a missing task earns nothing; the final rank
orders total points, ties sharing the best rank. Mean (Task), Mean (TaskType) and the category and
domain means are empty when any of their tasks is missing."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

from .scores import Score

AUDIO_ONLY = {"a2a", "a2c"}


@dataclass(frozen=True)
class TaskInfo:
    name: str
    type: str = "Unknown"
    category: str | None = None
    domains: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    family: str | None = None

    @property
    def group(self) -> str | None:
        if self.category is None:
            return None
        return "audio-only" if self.category in AUDIO_ONLY else "cross-modal"


def task_infos(names) -> dict[str, TaskInfo]:
    """Task metadata from the catalog; tasks it does not know get type Unknown."""
    from . import catalog
    from .errors import MaebError

    files = catalog.task_files()
    out = {}
    for name in names:
        if name not in files:
            out[name] = TaskInfo(name)
            continue
        try:
            spec = catalog.find_task(name)
        except MaebError:
            out[name] = TaskInfo(name)
            continue
        langs = spec.languages if isinstance(spec.languages, list) else [x for v in spec.languages.values() for x in v]
        out[name] = TaskInfo(name, spec.mteb_type, spec.category, tuple(spec.domains), tuple(dict.fromkeys(langs)), spec.family)
    return out


@dataclass
class Row:
    model: str
    revisions: list[str]
    rank: int = 0
    points: float = 0.0
    mean_task: float | None = None
    mean_tasktype: float | None = None
    n_tasks: int = 0
    types: dict[str, float | None] = field(default_factory=dict)
    groups: dict[str, float | None] = field(default_factory=dict)  # audio-only / cross-modal
    domains: dict[str, float | None] = field(default_factory=dict)
    tasks: dict[str, float | None] = field(default_factory=dict)


@dataclass
class Board:
    benchmark: str | None
    tasks: list[TaskInfo]
    rows: list[Row]
    missing_tasks: list[str] = field(default_factory=list)  # in the benchmark, in nobody's results

    @property
    def types(self) -> list[str]:
        return sorted({t.type for t in self.tasks})

    @property
    def domains(self) -> list[str]:
        return sorted({d for t in self.tasks for d in t.domains})


def _mean_or_none(values: list[float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return float(np.mean(values))


def aggregate(
    scores: list[Score],
    tasks: list[str] | None = None,
    subsets: dict[str, list[str]] | None = None,
    infos: dict[str, TaskInfo] | None = None,
    benchmark: str | None = None,
) -> Board:
    subsets = subsets or {}
    wanted = None if tasks is None else set(tasks)
    values: dict[tuple[str, str], dict[tuple[str, str], float]] = defaultdict(dict)
    revisions: dict[str, set[str]] = defaultdict(set)
    for s in scores:
        if wanted is not None and s.task not in wanted:
            continue
        if s.task in subsets and s.subset not in subsets[s.task]:
            continue
        values[(s.model, s.task)][(s.split, s.subset)] = s.value
        revisions[s.model].add(s.revision)
    present = sorted({task for _, task in values}, key=lambda t: (tasks.index(t) if tasks and t in tasks else 0, t))
    seen_subsets: dict[str, set] = defaultdict(set)
    seen_splits: dict[str, set] = defaultdict(set)
    for (_, task), combos in values.items():
        for split, subset in combos:
            seen_splits[task].add(split)
            seen_subsets[task].add(subset)
    required = {task: len(seen_subsets[task]) * len(seen_splits[task]) for task in present}
    partial: dict[str, dict[str, float]] = defaultdict(dict)
    complete: dict[str, dict[str, float]] = defaultdict(dict)
    for (model, task), combos in values.items():
        mean = float(np.mean(list(combos.values())))
        partial[task][model] = mean
        if len(combos) >= required[task]:
            complete[model][task] = mean
    models = sorted(m for m in complete if complete[m])
    n_models = len(models)
    points: dict[str, float] = defaultdict(float)
    for task in present:
        names = list(partial[task])
        ranks = rankdata([-partial[task][m] for m in names], method="average")
        for name, r in zip(names, ranks):
            points[name] += n_models - r
    infos = infos if infos is not None else task_infos(present)
    task_list = [infos.get(t, TaskInfo(t)) for t in present]
    rows = []
    for model in models:
        per_task = {t: complete[model].get(t) for t in present}
        row = Row(model, sorted(revisions[model]), points=points[model], tasks=per_task)
        row.n_tasks = sum(v is not None for v in per_task.values())
        row.mean_task = _mean_or_none(list(per_task.values()))
        by_type = defaultdict(list)
        by_group = defaultdict(list)
        by_domain = defaultdict(list)
        for info in task_list:
            by_type[info.type].append(per_task[info.name])
            if info.group:
                by_group[info.group].append(per_task[info.name])
            for d in info.domains:
                by_domain[d].append(per_task[info.name])
        row.types = {k: _mean_or_none(v) for k, v in sorted(by_type.items())}
        row.mean_tasktype = _mean_or_none(list(row.types.values()))
        row.groups = {k: _mean_or_none(v) for k, v in sorted(by_group.items())}
        row.domains = {k: _mean_or_none(v) for k, v in sorted(by_domain.items())}
        rows.append(row)
    totals = [r.points for r in rows]
    for row, rank in zip(rows, rankdata([-p for p in totals], method="min") if rows else []):
        row.rank = int(rank)
    rows.sort(key=lambda r: (r.rank, -(r.mean_task if r.mean_task is not None else -1.0), r.model))
    missing = [t for t in (tasks or []) if t not in present]
    return Board(benchmark, task_list, rows, missing)
