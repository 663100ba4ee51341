"""Aggregation for any benchmark, with the semantics of mteb's leaderboard.

Per task: the mean of a model's main scores over subsets and splits. A model that lacks some
(subset, split) of a task has no score for it in the means, but its partial mean still votes in
the Borda count (as in mteb). Borda: within each task, models are ranked by score (ties share the
average rank); a model earns n_models - rank points (n_models: the models with at least one
complete task, the board's rows); a missing task earns nothing; the final rank orders total
points, ties sharing the best rank. As mteb's `_borda_rank_from_long` (a test compares them), the
final rank counts every model with a score, also one whose every task is incomplete and which the
board does not show: its rank number is then missing from the board, and a note says so. A task whose main score is lower-is-better (FD,
KL or WER of audio generation: TaskInfo.lower_is_better) ranks the smallest first. Mean (Task), Mean (TaskType) and the category and
domain means are empty when any of their tasks is missing.

Two Borda rules (BORDA_RULES; `aggregate(borda=...)`, `maeb leaderboard --borda`): "mteb" (the default,
as on the public board) gives n_models - rank on a task, where n_models counts the board's rows, so
a model that ran a task only a few models ran still earns points against every model on the board;
"paper" (the MAEB paper) gives n_task - rank, n_task counting the models with a score on that task:
points only against the models that ran it (the number of them it beats, ties counting half). Under
both a missing task earns nothing and final ranks order total points, ties sharing the best rank.

load_board reads result folders and CSV files (maeb.results.read: what it rejects, it reports) and joins
the task facts: the catalog's for its tasks, else what maeb's runner recorded in the results."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import rankdata

from ..results.read import AUDIO_ONLY, Score, TaskInfo, is_experiment  # noqa: F401  (TaskInfo lives beside the reader that fills it)

if TYPE_CHECKING:
    from ..core.taskspec import TaskSpec
    from .uncertainty import Uncertainty


def spec_info(spec: TaskSpec) -> TaskInfo:
    """A task spec's TaskInfo (languages of every subset, once each; the direction its type gives the
    main score, for a metric without a record)."""
    from .. import tasktypes

    langs = spec.languages if isinstance(spec.languages, list) else [x for v in spec.languages.values() for x in v]
    return TaskInfo(
        spec.name,
        spec.mteb_type,
        spec.category,
        tuple(spec.domains),
        tuple(dict.fromkeys(langs)),
        spec.family,
        spec.main_score,
        tuple(spec.data.eval_splits),
        tuple(spec.data.subsets),
        recorded_lower=tasktypes.get(spec.type).lower_is_better(spec.main_score),
    )


def catalog_info(name: str) -> TaskInfo | None:
    """What the catalog knows of a task, or None for a task it does not know."""
    from dataclasses import replace

    from ..core.errors import MaebError
    from ..spec import catalog

    if name not in catalog.task_files():
        return None
    try:
        spec = catalog.find_task(name)
    except MaebError:
        return None
    return replace(spec_info(spec), name=name)  # an alias keeps the name its results use


def task_infos(names: Iterable[str], recorded: dict[str, TaskInfo] | None = None) -> dict[str, TaskInfo]:
    """Task metadata: the catalog's for tasks it knows, else what the result files record (a local
    task from a user's spec file), else type Unknown."""
    recorded = recorded or {}
    out = {}
    for name in names:
        out[name] = catalog_info(name) or recorded.get(name) or TaskInfo(name)
    return out


@dataclass
class Row:
    """One model on a board: rank, Borda points, means (None where a task is missing) and scores."""

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
    leaks: dict[str, int] = field(default_factory=dict)  # task -> clips shared by its training and evaluation splits
    tie_dependent: list[str] = field(default_factory=list)  # tasks whose score moves with the order of tied items
    fragile: list[str] = field(default_factory=list)  # tasks whose score rounding-level noise moves by over one item's share


@dataclass
class Board:
    """A ranked table: the tasks, one row per model with a complete task, what is missing and why."""

    benchmark: str | None
    tasks: list[TaskInfo]
    rows: list[Row]
    missing_tasks: list[str] = field(default_factory=list)  # in the benchmark, in nobody's results
    task_filter: list[str] | None = None  # --tasks: the board covers only these tasks
    notes: list[str] = field(default_factory=list)  # what the reader noticed without rejecting anything
    # what maeb.analysis.uncertainty needs: each task's per-model means that vote in the Borda count (partial
    # ones too) and the scores behind them (their files hold the few-shot experiments and bands)
    partial: dict[str, dict[str, float]] = field(default_factory=dict)
    cells: dict[tuple[str, str], list[Score]] = field(default_factory=dict)
    uncertainty: Uncertainty | None = None  # when asked for
    borda: str = "mteb"  # the rule that ranked the rows (BORDA_RULES)

    @property
    def types(self) -> list[str]:
        """The task types on the board, sorted."""
        return sorted({t.type for t in self.tasks})

    @property
    def domains(self) -> list[str]:
        """The domains any task on the board records, sorted."""
        return sorted({d for t in self.tasks for d in t.domains})


BORDA_RULES = {
    "mteb": "mteb's Borda rule: on each task n_models - rank (n_models: the board's models), a missing task 0",
    "paper": "the MAEB paper's Borda rule: on each task n_task - rank (n_task: the models that ran it), a missing task 0",
}


def borda_rule(name: str) -> str:
    """The rule's name, checked (one line naming the choices otherwise)."""
    if name not in BORDA_RULES:
        from ..core.errors import MaebError

        raise MaebError(f"Borda rule {name!r}: choose one of {', '.join(BORDA_RULES)}")
    return name


def _mean_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    if not values or len(present) < len(values):
        return None
    return float(np.mean(present))


def aggregate(
    scores: list[Score],
    tasks: list[str] | None = None,
    subsets: dict[str, list[str]] | None = None,
    infos: dict[str, TaskInfo] | None = None,
    benchmark: str | None = None,
    borda: str = "mteb",
) -> Board:
    """The board of these scores: a task's score is the mean over its splits and subsets; models
    are ranked by Borda points over every task they have a score on (partial ones too, as mteb
    does), and shown where they have at least one complete task. `tasks` limits and orders the
    tasks, `subsets` keeps only the named subsets of a task, `infos` says what each task is, `borda`
    names the rule (BORDA_RULES)."""
    borda_rule(borda)
    subsets = subsets or {}
    wanted = None if tasks is None else set(tasks)
    values: dict[tuple[str, str], dict[tuple[str, str], float]] = defaultdict(dict)
    kept: dict[tuple[str, str], dict[tuple[str, str], Score]] = defaultdict(dict)
    revisions: dict[str, set[str]] = defaultdict(set)
    leaks: dict[tuple[str, str], int] = {}
    tied: set[tuple[str, str]] = set()
    fragile: set[tuple[str, str]] = set()
    for s in scores:
        if wanted is not None and s.task not in wanted:
            continue
        if s.task in subsets and s.subset not in subsets[s.task]:
            continue
        values[(s.model, s.task)][(s.split, s.subset)] = s.value
        kept[(s.model, s.task)][(s.split, s.subset)] = s
        revisions[s.model].add(s.revision)
        if s.shared_clips:
            leaks[(s.model, s.task)] = max(leaks.get((s.model, s.task), 0), s.shared_clips)
        if s.tie_dependent:
            tied.add((s.model, s.task))
        if s.fragile:  # any of the cell's files (splits, subsets) says so
            fragile.add((s.model, s.task))
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
    infos = infos if infos is not None else task_infos(present)
    for task in present:
        names = list(partial[task])
        sign = 1.0 if infos.get(task, TaskInfo(task)).lower_is_better else -1.0  # rank 1 is the best model
        ranks = rankdata([sign * partial[task][m] for m in names], method="average")
        voters = n_models if borda == "mteb" else len(names)
        for name, r in zip(names, ranks):
            points[name] += voters - r
    task_list = [infos.get(t, TaskInfo(t)) for t in present]
    rows = []
    for model in models:
        per_task = {t: complete[model].get(t) for t in present}
        row = Row(model, sorted(revisions[model]), points=points[model], tasks=per_task)
        row.leaks = {t: leaks[(model, t)] for t in present if (model, t) in leaks}
        row.tie_dependent = [t for t in present if (model, t) in tied]
        row.fragile = [t for t in present if (model, t) in fragile and per_task[t] is not None]  # cells with a value
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
    ranked = sorted(points)  # every model with a score, shown or not: mteb numbers ranks over them all
    final = dict(zip(ranked, rankdata([-points[m] for m in ranked], method="min"))) if ranked else {}
    for row in rows:
        row.rank = int(final[row.model])
    rows.sort(key=lambda r: (r.rank, -(r.mean_task if r.mean_task is not None else -1.0), r.model))
    missing = [t for t in (tasks or []) if t not in present]
    cells = {key: list(combos.values()) for key, combos in kept.items()}
    board = Board(benchmark, task_list, rows, missing, partial={t: dict(partial[t]) for t in present}, cells=cells)
    board.borda = borda
    hidden = sorted(set(ranked) - set(models))
    if hidden:
        shown = ", ".join(f"{m} (rank {int(final[m])})" for m in hidden[:5]) + (" ..." if len(hidden) > 5 else "")
        board.notes.append(
            f"{len(hidden)} model(s) with no complete task are not shown but take Borda rank numbers, as on mteb's "
            f"leaderboard: {shown}"
        )
    return board


def _resolve_tasks(asked: list[str], bench, specs: dict[str, TaskInfo]) -> list[str]:
    """--tasks names as results call them. With a benchmark, each must be one of its tasks (case
    does not matter); without one, a catalog name or alias, a task spec file (whose task infos
    then count as the catalog's), or the name a local task's results use."""
    from ..core.errors import MaebError, UnknownName, closest
    from ..spec import catalog

    out: list[str] = []
    for name in asked:
        if bench is not None:
            by_lower = {t.lower(): t for t in bench.tasks}
            if name.lower() not in by_lower:
                close = closest(name, list(bench.tasks))
                hint = (
                    f"; did you mean {', '.join(close)}?"
                    if close
                    else f"; run `python -m maeb list tasks --benchmark {bench.name}`"
                )
                raise MaebError(f"--tasks: {name!r} is not a task of {bench.name}{hint}")
            resolved = by_lower[name.lower()]
        elif name.endswith((".toml", ".json")):
            spec = catalog.find_task(name)  # a missing or malformed spec file is an error here
            resolved = spec.name
            specs[resolved] = spec_info(spec)
        else:
            try:
                resolved = catalog.find_task(name).name  # aliases and case resolve to the name results use
            except UnknownName:
                resolved = name  # a local task: only its results know it
        if resolved not in out:
            out.append(resolved)
    return out


def load_board(
    results: Iterable[Path],
    benchmark_name: str | None = None,
    pins: dict[str, str] | None = None,
    tasks: list[str] | None = None,
    plain: bool = False,
    borda: str = "mteb",
) -> tuple[Board, list[str]]:
    """The board of a benchmark (or of every task found, or of a task list) from result folders and
    CSV files, and the lines describing what was left out. Catalog facts (main metric, evaluation
    splits, type) come first; result files' own records fill in tasks the catalog does not know.
    Runs in mteb's experiments folders are rows of their own ("model [setting]", with a note
    saying so), or with `plain` left out. `borda` names the ranking rule (BORDA_RULES)."""
    from ..core.errors import MaebError, closest
    from ..results.read import choose_revisions, read_results
    from ..spec import catalog

    results = list(results)
    bench = catalog.find_benchmark(benchmark_name) if benchmark_name else None
    specs: dict[str, TaskInfo] = {}
    names = _resolve_tasks(tasks, bench, specs) if tasks else (list(bench.tasks) if bench else None)
    known: dict[str, TaskInfo | None] = {}

    def lookup(name: str) -> TaskInfo | None:
        if name not in known:
            known[name] = specs.get(name) or catalog_info(name)
        return known[name]

    res = read_results(results, lookup, names)
    if tasks and bench is None:
        for name in names or ():  # a typo is an error; a task whose files were all rejected is reported missing
            if name not in res.seen and lookup(name) is None:
                close = closest(name, catalog.task_names())
                hint = f"; catalog tasks with a close name: {', '.join(close)}" if close else ""
                raise MaebError(
                    f"--tasks: no results for {name!r} under {', '.join(map(str, results))}, and it is not a catalog task{hint}"
                )
    registered = {m.name: m.revision for m in catalog.models().values()}
    scores = choose_revisions(res.scores, pins, registered)
    experiments = sorted({s.model for s in scores if is_experiment(s.source)})
    if plain:
        scores = [s for s in scores if not is_experiment(s.source)]
    present = names or sorted({s.task for s in scores})
    infos = {t: lookup(t) or res.tasks.get(t) or TaskInfo(t) for t in present}
    board = aggregate(scores, names, bench.subsets if bench else None, infos, bench.name if bench else None, borda)
    board.task_filter = list(names or ()) if tasks else None
    board.notes = list(res.notes) + board.notes
    if experiments and not plain:
        board.notes.append(
            f"{len(experiments)} {'rows are experiments' if len(experiments) != 1 else 'row is an experiment'} (runs under non-default "
            f"settings, from mteb's experiments folders), ranked beside the plain runs: {', '.join(experiments[:3])}"
            + (f" and {len(experiments) - 3} more" if len(experiments) > 3 else "")
            + "; their means are empty where they lack tasks; --plain ranks the plain protocol only"
        )
    elif experiments:
        board.notes.append(f"--plain: {len(experiments)} experiment row{'s' if len(experiments) != 1 else ''} left out")
    return board, res.problems


def report_lines(problems: Sequence[str], notes: Sequence[str] = (), limit: int = 20) -> list[str]:
    """What the command line prints to stderr: each rejected file or entry, then each note."""
    lines = [f"maeb: skipped {p}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"maeb: ... and {len(problems) - limit} more skipped")
    lines += [f"maeb: note: {n}" for n in notes[:limit]]
    if len(notes) > limit:
        lines.append(f"maeb: ... and {len(notes) - limit} more notes")
    return lines
