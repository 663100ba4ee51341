"""Paired significance between two models on one task, from per-item scores.

The items are what the evaluators already score one by one (maeb.engine.taskrecord's outcomes): a
classification clip's correctness (averaged over the probe's experiments), a retrieval or reranking
query's main metric. `maeb run --per-item` writes them beside each result
(`{Task}_predictions/[subset/][split_]per_item.tsv`: content key, clip name, value); `maeb compare
--models A B` pairs the two models' items by content key and reports, per task and split:

- the mean difference A - B over the shared items;
- a paired bootstrap: each draw resamples the items with replacement, the same draw for both models,
  so the interval is the percentile interval of the mean difference (the distribution of
  scipy.stats.bootstrap(paired=True, method="percentile"));
- a two-sided p-value from a sign-flip permutation test (each item's difference keeps or flips its
  sign: the null of exchangeable models; scipy.stats.permutation_test(permutation_type="samples")),
  exact when 2**n is at most `draws`, otherwise from `draws` random flips.

The mean over items equals the task's main score only where that score is a mean over the same
items (accuracy of a probe with equal folds, a retrieval metric's mean over queries); the
difference is of that mean."""

from __future__ import annotations

import csv
import io
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import DataError

PER_ITEM_FILE = "per_item.tsv"


def per_item_tsv(metric: str, refs: list, values: list) -> str:
    """The per-item outcomes of one split as a TSV file: a `# metric` line, then key, clip name, value per item."""
    out = io.StringIO()
    out.write(f"# metric\t{metric}\n")
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(["key", "clip", "value"])
    seen: dict[str, int] = {}
    for ref, value in zip(refs, values):
        # text queries are filed under their most relevant clip, which several may share: the n-th
        # item of one clip pairs with the other model's n-th (both models see the queries in one order)
        seen[ref.key] = seen.get(ref.key, 0) + 1
        key = ref.key if seen[ref.key] == 1 else f"{ref.key}#{seen[ref.key]}"
        writer.writerow([key, ref.name, repr(float(value))])
    return out.getvalue()


def read_per_item(path: Path) -> tuple[str, dict[str, float]]:
    """(metric, key -> value) of a per-item file; DataError naming the file, line and item when one is
    malformed, not a finite number or outside the metric's range (one NaN would make every
    sign-flip look extreme and report p = 0.0005), or when a key repeats."""
    from ..results.read import _SLACK, metric_range

    lines = path.read_text().splitlines()
    if not lines or not lines[0].startswith("# metric\t"):
        raise DataError(f"{path}: not a per-item file (its first line must be '# metric<TAB>NAME')")
    metric, values = lines[0].split("\t", 1)[1], {}
    bounds = metric_range(metric)
    first_line: dict[str, int] = {}
    for n, row in enumerate(csv.reader(lines[2:], delimiter="\t"), start=3):
        try:
            value = float(row[2])
        except (IndexError, ValueError):
            raise DataError(f"{path} line {n}: expected key, clip and a number, got {row!r}") from None
        item = f"item {row[0]} ({row[1]})" if row[1] else f"item {row[0]}"
        if not math.isfinite(value):
            raise DataError(f"{path} line {n}: {item} scores {value}, not a finite number; rerun the task with --per-item")
        if bounds and not bounds[0] - _SLACK <= value <= bounds[1] + _SLACK:
            raise DataError(
                f"{path} line {n}: {item} scores {value:g}, outside [{bounds[0]:g}, {bounds[1]:g}], the range of {metric}"
            )
        if row[0] in first_line:
            raise DataError(f"{path} line {n}: {item} is already on line {first_line[row[0]]}; each item is scored once")
        first_line[row[0]] = n
        values[row[0]] = value
    return metric, values


@dataclass
class Paired:
    """The paired comparison of two models' per-item scores."""

    items: int
    mean_a: float
    mean_b: float
    difference: float  # mean of a - b
    low: float  # the bootstrap's percentile interval of the difference
    high: float
    p_value: float  # two-sided, sign-flip permutation test
    exact: bool  # whether the permutation test enumerated every sign pattern


def paired_bootstrap(diff: np.ndarray, draws: int, seed: int, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of the mean of `diff` over `draws` resamples of its items."""
    rng = np.random.default_rng(seed)
    n = len(diff)
    means = np.empty(draws)
    for start in range(0, draws, 1000):  # blocks bound memory for many items
        idx = rng.integers(0, n, size=(min(1000, draws - start), n))
        means[start : start + len(idx)] = diff[idx].mean(axis=1)
    tail = (1 - level) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def sign_flip_p(diff: np.ndarray, draws: int, seed: int) -> tuple[float, bool]:
    """Two-sided p-value of a zero mean difference under random sign flips (exact when 2**n <= draws)."""
    n = len(diff)
    observed = abs(diff.mean())
    tol = 1e-12 * max(1.0, observed)  # a flip that ties the observed mean counts as extreme (as scipy's)
    if n <= 20 and 2**n <= draws:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        return float(np.mean(np.abs(signs @ diff / n) >= observed - tol)), True
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, draws, 1000):
        signs = rng.choice((1.0, -1.0), size=(min(1000, draws - start), n))
        hits += int(np.sum(np.abs(signs @ diff / n) >= observed - tol))
    return (hits + 1) / (draws + 1), False  # the observed pattern counts once: never a p-value of 0


def compare_items(a: dict[str, float], b: dict[str, float], draws: int = 10000, seed: int = 0, level: float = 0.95) -> Paired:
    """Pair two models' items by key (those both scored) and test their mean difference."""
    keys = sorted(set(a) & set(b))
    if len(keys) < 2:
        raise DataError(f"only {len(keys)} items are scored by both models; a paired test needs at least 2")
    x, y = np.array([a[k] for k in keys]), np.array([b[k] for k in keys])
    diff = x - y
    low, high = paired_bootstrap(diff, draws, seed, level)
    p, exact = sign_flip_p(diff, draws, seed)
    return Paired(len(keys), float(x.mean()), float(y.mean()), float(diff.mean()), low, high, p, exact)


def per_item_files(model_dir: Path) -> dict[str, dict[str, Path]]:
    """A model folder's per-item files: task -> where in it ("test", "subset/test_", ...) -> file."""
    out: dict[str, dict[str, Path]] = {}
    for path in sorted(Path(model_dir).glob(f"*_predictions/**/*{PER_ITEM_FILE}")):
        folder = next(p for p in path.parents if p.name.endswith("_predictions"))
        task = folder.name[: -len("_predictions")]
        where = str(path.relative_to(folder))[: -len(PER_ITEM_FILE)].rstrip("_/") or _only_split(folder.parent / f"{task}.json")
        out.setdefault(task, {})[where] = path
    return out


def _only_split(result: Path) -> str:
    """The one split of a result (a file written beside it without a split prefix), "default" when unknown."""
    import json

    try:
        (split,) = json.loads(result.read_text(encoding="utf-8"))["scores"]
        return str(split)
    except (OSError, ValueError, KeyError, TypeError):
        return "default"


def compare_models(
    dir_a: Path, dir_b: Path, tasks: list[str] | None = None, draws: int = 10000, seed: int = 0, level: float = 0.95
) -> list[dict]:
    """One row per task and split both model folders hold per-item scores for (or the named tasks,
    DataError naming a task that either lacks)."""
    files_a, files_b = per_item_files(dir_a), per_item_files(dir_b)
    wanted = tasks or sorted(set(files_a) & set(files_b))
    if not wanted:
        raise DataError(f"no task has per-item scores in both {dir_a} and {dir_b}; run both models with --per-item (maeb run)")
    rows = []
    for task in wanted:
        for folder, files in ((dir_a, files_a), (dir_b, files_b)):
            if task not in files:
                raise DataError(f"task {task}: no per-item scores in {folder}; run it with --per-item (maeb run)")
        for where in sorted(set(files_a[task]) & set(files_b[task])):
            metric, a = read_per_item(files_a[task][where])
            other, b = read_per_item(files_b[task][where])
            if metric != other:  # a difference of two metrics means nothing
                raise DataError(
                    f"task {task} {where}: {files_a[task][where]} scores {metric}, {files_b[task][where]} scores {other}; "
                    "compare per-item scores of one metric"
                )
            try:
                res = compare_items(a, b, draws, seed, level)
            except DataError as exc:
                raise DataError(f"task {task} {where}: {exc}") from None
            rows.append({"task": task, "split": where, "metric": metric, **res.__dict__})
    return rows
