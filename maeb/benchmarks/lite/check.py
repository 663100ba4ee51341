"""`python -m maeb lite --check`: a run of MAEB-lite against the committed reference, cell by cell.

Every cell (model x task) of the reference records a band measured by replays (maeb.run.stability:
its scoring repeated on vectors moved by the rounding another CPU makes, so a score that depends on
the order of tied items carries that dependence). A cell agrees when its main score lies within
MARGIN times that band of the reference's, and at least within one evaluation item's share of the
score (a clip, a query, a pair: a rarer flip than the replays saw, or one the evaluator's own
kernels make, as k-means under another OpenBLAS kernel does); its other metrics move with it and
are reported, not judged. A cell whose replays moved nothing (band 0: exact by measurement) must agree
in its main score within the tolerance, and in every other number too unless its vectors differ
from the reference's for the same clips (the numeric path): some secondary metrics amplify
last-bit changes of the vectors (mteb's nAUC retrieval metrics moved by 0.39 under another OpenBLAS
kernel while every main score stayed equal), so those are reported, not judged. A reference cell
that records no measured band, or a file that cannot be read, fails in one line naming it. A cell
that differs within its band is reported as agreeing "within its band of ±x". For a cell that
differs beyond it, the fingerprints in the two files say why: other input clips (the synthesisers
made other bytes), other vectors from the same clips (the numeric path: a library version or the
CPU), or the same vectors and another score (the evaluator); and the two files' numeric
environments (BLAS kernels, threads, CPU, imitated instruction sets) are named."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ...run.numeric_env import differences as env_differences
from ...run.numeric_env import summary as env_summary

DEFAULT_TOLERANCE = 1e-6
ABSENT = "(absent from the run)"
# the band from a few replays is an estimate of the largest move: a machine's one draw beyond the
# largest of 8 replays' has a chance of about 1 in 9, so the check allows half as much again
MARGIN = 1.5


@dataclass
class Cell:
    """The comparison of one (model, task) cell of a run against the reference: both main scores, the largest difference and why
    they differ ("" when they agree)."""

    model: str
    task: str
    reference: float | None
    run: float | None
    largest: float  # largest absolute difference over the compared scores of the cell
    metric: str
    cause: str
    band: float | None = None  # how far the reference lets the main score move (None: not at all)
    main_gap: float = 0.0  # |run - reference| of the main score
    source: str = ""  # what sets the band

    @property
    def agrees(self) -> bool:
        """Whether the cell agrees with the reference (no cause recorded)."""
        return self.cause == ""

    @property
    def within_band(self) -> bool:
        """Agrees, but only thanks to its band (the main score or another metric moved)."""
        return self.agrees and self.band is not None and self.largest > DEFAULT_TOLERANCE


def _results(root: Path, broken: dict[tuple[str, str], str] | None = None) -> dict[tuple[str, str], dict]:
    """The result files of a folder by (model, task). broken: filled with the files that cannot be
    read or are not results (a truncated JSON, scores that are not a table), so the check says the
    file is broken instead of calling its cell absent."""
    out = {}
    for path in sorted(Path(root).glob("*/*/*.json")):
        if path.name == "model_meta.json":
            continue
        key = (path.parent.parent.name.replace("__", "/", 1), path.stem)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            if broken is not None:
                broken[key] = f"{path} cannot be read ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
            continue
        if isinstance(data, dict) and isinstance(data.get("scores"), dict):
            out[(key[0], data.get("task_name", path.stem))] = data
        elif broken is not None:
            broken[key] = f"{path} is not a result file (no scores table)"
    return out


def metric_of(data: dict) -> str | None:
    """The main metric a result file records for its task (maeb.task.main_score), or None."""
    task = (data.get("maeb") or {}).get("task")
    name = task.get("main_score") if isinstance(task, dict) else None
    return name if isinstance(name, str) else None


def _band_problem(reference: dict) -> str | None:
    """What is wrong with the reference's recorded band, or None: a band that is not a finite number
    of at least 0, or wider than the metric's range (1e9 would pass every score), must not be
    replaced by 0 (or trusted) without a word. The leaderboard's rule (results.read.check_band)."""
    from ...results.read import check_band

    record = stability_of(reference)
    if not isinstance(record, dict):
        return f"maeb.stability is {type(record).__name__}, not a record"
    for key in ("band", "quantum"):
        value = record.get(key)
        if value is None:
            continue
        problem = check_band(value, metric_of(reference), f"maeb.stability.{key}")
        if problem:
            return problem
    return None


def _numbers(value, prefix: str = ""):
    """Every number in a scores tree, by its path."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield prefix, float(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _numbers(item, f"{prefix}[{i}]")


def _main(data: dict) -> float | None:
    entries = [e for entries in data["scores"].values() for e in entries if isinstance(e.get("main_score"), (int, float))]
    return sum(e["main_score"] for e in entries) / len(entries) if entries else None


def stability_of(data: dict) -> dict:
    """The stability record a result file holds under maeb.run.stability, or {}."""
    return ((data.get("maeb") or {}).get("stability")) or {}


def unmeasured(reference: dict) -> str:
    """Why the reference cell has no measured band ('' when it has one: replays, or a type whose
    score comes from no vectors)."""
    record = stability_of(reference)
    band = record.get("band")
    if record.get("method") in ("replay", "exact") and isinstance(band, (int, float)) and math.isfinite(band) and band >= 0:
        return ""
    if not record:
        return "the reference records no stability band"
    return f"the reference's band is {record.get('method', 'unknown')!r} ({record.get('why', 'no band recorded')})"


def allowance(reference: dict) -> tuple[float, str]:
    """How far the reference lets the cell's main score move, and what sets it: MARGIN times its
    band (replays), and at least one evaluation item's share (a replay count can miss a rare flip;
    maeb.run.stability.quantum). 0: every number must agree."""
    record = stability_of(reference)
    band_value, quantum = record.get("band"), record.get("quantum")
    band = MARGIN * float(band_value) if isinstance(band_value, (int, float)) and math.isfinite(band_value) else 0.0
    floor = float(quantum) if record.get("method") == "replay" and isinstance(quantum, (int, float)) else 0.0
    if floor > band:
        return floor, "one item's share"
    return band, _band_source(reference) if band > 0 else ""


def explain(reference: dict, run: dict) -> str:
    """Why two result files of the same cell differ, from what they recorded."""
    fa = (reference.get("maeb") or {}).get("fingerprints")
    fb = (run.get("maeb") or {}).get("fingerprints")
    software = _software_changes(reference, run)
    env = _environment(reference, run)
    if not fa or not fb:
        return "the reference records no fingerprints (written before maeb recorded them); rerun it to tell why"
    if fa["inputs"] != fb["inputs"]:
        return "inputs differ: the clips are other bytes (synthesiser versions?)" + software + env
    if fa["vectors"] != fb["vectors"]:
        drift = abs(fa.get("vector_sum", 0.0) - fb.get("vector_sum", 0.0))
        return f"vectors differ from the same clips (sum of all values moves by {drift:.3g}): the numeric path" + software + env
    return "same vectors, other scores: the evaluator or its libraries" + software + env


def _environment(reference: dict, run: dict) -> str:
    a = (reference.get("maeb") or {}).get("numeric_env")
    b = (run.get("maeb") or {}).get("numeric_env")
    changed = env_differences(a, b)
    return f"; {changed}" if changed else f"; same numeric environment as the reference ({env_summary(b)})"


def _software_changes(reference: dict, run: dict) -> str:
    a = ((reference.get("maeb") or {}).get("encoder") or {}).get("software") or {}
    b = ((run.get("maeb") or {}).get("encoder") or {}).get("software") or {}
    changed = [f"{k} {a.get(k)} -> {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return f" ({'; '.join(changed)})" if changed else ""


def _entry_level(scores: dict) -> dict[str, float]:
    """The numbers directly in each entry (not the per-experiment lists), by path."""
    return {p: v for p, v in _numbers(scores) if p.count(".") == 1 and "[" not in p.split(".")[1]}


def _vectors_moved(reference: dict, run: dict) -> bool:
    """The same clips gave other vectors (the numeric path), as the two files' fingerprints say."""
    fa = (reference.get("maeb") or {}).get("fingerprints") or {}
    fb = (run.get("maeb") or {}).get("fingerprints") or {}
    return bool(fa and fb) and fa.get("inputs") == fb.get("inputs") and fa.get("vectors") != fb.get("vectors")


def _compare_cell(a: dict, b: dict, tolerance: float) -> tuple[float, str, bool, float | None, str]:
    """(largest difference, its metric, whether the cell agrees, its allowance, what sets it). A
    cell with an allowance is judged by its main score (its other metrics move with it and are
    only reported); one without must agree in every number."""
    allowed, source = allowance(a)
    main_only = allowed > 0 or _vectors_moved(a, b)
    if allowed > 0:
        left, right = _entry_level(a["scores"]), _entry_level(b["scores"])
    else:
        left, right = dict(_numbers(a["scores"])), dict(_numbers(b["scores"]))
    largest, metric, ok = 0.0, "", True
    # the main scores are what the check judges: one the run lacks (another split or subset, an
    # empty entry list) is a difference, not something to skip
    lacking = sorted(n for n in left if n.endswith(".main_score") and n not in right)
    if lacking or (left and not right):
        return math.inf, f"{lacking[0] if lacking else 'scores'} {ABSENT}", False, (allowed if allowed > 0 else None), source
    # another metric only one file has is a change of format (a newer maeb writes more), not of score
    for name in sorted(set(left) & set(right)):
        x, y = left[name], right[name]
        if math.isnan(x) and math.isnan(y):
            continue
        gap = abs(x - y) if not (math.isnan(x) or math.isnan(y)) else math.inf
        judged = not main_only or name.endswith(".main_score")
        if judged:
            ok = ok and gap <= (allowed + tolerance if allowed > 0 else tolerance)
        if gap > largest:
            largest, metric = gap, name
    return largest, metric, ok, (allowed if allowed > 0 else None), source


def compare(
    reference_dir: Path,
    run_dir: Path,
    tolerance: float = DEFAULT_TOLERANCE,
    models: list[str] | None = None,
    tasks: list[str] | None = None,
) -> list[Cell]:
    """Every cell of the reference and of the run, compared; models/tasks: only the cells of
    these (what a `--models`/`--tasks` run evaluated), so the others do not count as missing."""
    broken_reference: dict[tuple[str, str], str] = {}
    broken_run: dict[tuple[str, str], str] = {}
    reference, run = _results(reference_dir, broken_reference), _results(run_dir, broken_run)
    keys = set(reference) | set(run) | set(broken_reference) | set(broken_run)
    if models is not None:
        keys = {k for k in keys if k[0] in set(models)}
    if tasks is not None:
        keys = {k for k in keys if k[1] in set(tasks)}
    cells = []
    for key in sorted(keys):
        model, task = key
        a, b = reference.get(key), run.get(key)
        restore = "restore it (the committed reference: git checkout results/maeb-lite)"
        told = None
        if a is None and key in broken_reference:
            told = f"broken reference: {broken_reference[key]}: {restore}"
        elif b is None and key in broken_run:
            told = f"broken run: {broken_run[key]}: rerun the cell"
        elif a is not None and _band_problem(a):
            told = f"the reference's {_band_problem(a)}: {restore}"
        if told:
            cells.append(Cell(model, task, None if a is None else _main(a), None if b is None else _main(b), math.inf, "", told))
            continue
        if a is None or b is None:
            cells.append(
                Cell(
                    model,
                    task,
                    None if a is None else _main(a),
                    None if b is None else _main(b),
                    math.inf,
                    "",
                    "missing in the run" if b is None else "not in the reference",
                )
            )
            continue
        largest, metric, ok, band, source = _compare_cell(a, b, tolerance)
        main_a, main_b = _main(a), _main(b)
        gap = abs(main_a - main_b) if main_a is not None and main_b is not None else math.inf
        cause = ""
        if not ok and metric.endswith(ABSENT):
            cause = (
                f"the run has no {metric[: -len(ABSENT) - 1]} (its splits: {', '.join(b['scores']) or 'none'}): rerun the cell"
            )
        elif not ok and unmeasured(a):
            cause = f"{unmeasured(a)}: nothing to judge a difference by; regenerate the reference (scripts/lite_reference.py)"
        elif not ok:
            beyond = f"outside its band of ±{band:.4f} ({source}); " if band is not None else ""
            cause = beyond + explain(a, b)
        cells.append(Cell(model, task, main_a, main_b, largest, metric, cause, band, gap, source))
    return cells


def _band_source(reference: dict) -> str:
    record = stability_of(reference)
    parts = []
    if record.get("replays"):
        eps = record.get("eps")
        shown = " / ".join(f"{side} {value}" for side, value in eps.items()) if isinstance(eps, dict) else str(eps)
        parts.append(f"{MARGIN:g} x the band of {record['replays']} replays, eps {shown}")
    machines = record.get("machines") or {}
    if machines.get("configurations"):
        parts.append(f"{len(machines['configurations'])} other numeric set-ups")
    return "; ".join(parts) or "recorded"


def report(cells: list[Cell], tolerance: float) -> str:
    """The check's text: how many cells agree (exactly, within their band, or in the main score only) and one line per cell that
    differs."""
    differing = [c for c in cells if not c.agrees]
    banded = [c for c in cells if c.within_band]
    moved = [c for c in cells if c.agrees and c.band is None and c.largest > tolerance]
    exact = len(cells) - len(differing) - len(banded) - len(moved)
    lines = [
        f"MAEB-lite check: {len(cells) - len(differing)} of {len(cells)} cells agree with the reference "
        f"({exact} within {tolerance:g}, {len(banded)} within their stability band"
        + (f", {len(moved)} equal in the main score, other metrics moved with the vectors)" if moved else ")")
    ]
    for c in banded:
        lines.append(
            f"  {c.model} / {c.task}: main {c.reference:.4f} -> {c.run:.4f}, within its band of ±{c.band:.4f} ({c.source})"
            + (f" (largest move {c.largest:.3g} in {c.metric})" if c.metric and c.largest > c.main_gap + 1e-12 else "")
        )
    for c in moved:
        lines.append(
            f"  {c.model} / {c.task}: main {c.reference:.4f} -> {c.run:.4f}, vectors differ (numeric path); "
            f"largest move {c.largest:.3g} in {c.metric}, reported, not judged"
        )
    for c in differing:
        ref = "-" if c.reference is None else f"{c.reference:.4f}"
        got = "-" if c.run is None else f"{c.run:.4f}"
        # a cell without a compared metric (absent, unreadable) has no difference to quote: its cause says it all
        largest = f"largest difference {c.largest:.3g} in {c.metric}; " if c.metric else ""
        lines.append(f"  {c.model} / {c.task}: main {ref} -> {got}; {largest}{c.cause}")
    return "\n".join(lines) + "\n"
