"""`python -m maeb lite --check`: a run of MAEB-lite against the committed reference, cell by cell.

A cell (model x task) agrees when every score of the two result files agrees within the tolerance.
For a cell that differs, the fingerprints in the two files say why: other input clips (the
synthesisers made other bytes), other vectors from the same clips (the numeric path: a library
version or the CPU), or the same vectors and another score (the evaluator)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TOLERANCE = 1e-6


@dataclass
class Cell:
    model: str
    task: str
    reference: float | None
    run: float | None
    largest: float  # largest absolute difference over all scores of the cell
    metric: str
    cause: str

    @property
    def agrees(self) -> bool:
        return self.cause == ""


def _results(root: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for path in sorted(Path(root).glob("*/*/*.json")):
        if path.name == "model_meta.json":
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("scores"), dict):
            out[(path.parent.parent.name.replace("__", "/", 1), data.get("task_name", path.stem))] = data
    return out


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


def explain(reference: dict, run: dict) -> str:
    """Why two result files of the same cell differ, from what they recorded."""
    fa = (reference.get("maeb") or {}).get("fingerprints")
    fb = (run.get("maeb") or {}).get("fingerprints")
    software = _software_changes(reference, run)
    if not fa or not fb:
        return "the reference records no fingerprints (written before maeb recorded them); rerun it to tell why"
    if fa["inputs"] != fb["inputs"]:
        return "inputs differ: the clips are other bytes (synthesiser versions?)" + software
    if fa["vectors"] != fb["vectors"]:
        drift = abs(fa.get("vector_sum", 0.0) - fb.get("vector_sum", 0.0))
        return f"vectors differ from the same clips (sum of all values moves by {drift:.3g}): the numeric path" + software
    return "same vectors, other scores: the evaluator or its libraries" + software


def _software_changes(reference: dict, run: dict) -> str:
    a = ((reference.get("maeb") or {}).get("encoder") or {}).get("software") or {}
    b = ((run.get("maeb") or {}).get("encoder") or {}).get("software") or {}
    changed = [f"{k} {a.get(k)} -> {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return f" ({'; '.join(changed)})" if changed else ""


def compare(reference_dir: Path, run_dir: Path, tolerance: float = DEFAULT_TOLERANCE) -> list[Cell]:
    reference, run = _results(reference_dir), _results(run_dir)
    cells = []
    for key in sorted(set(reference) | set(run)):
        model, task = key
        a, b = reference.get(key), run.get(key)
        if a is None or b is None:
            cells.append(
                Cell(
                    model,
                    task,
                    a and _main(a),
                    b and _main(b),
                    math.inf,
                    "",
                    "missing in the run" if b is None else "not in the reference",
                )
            )
            continue
        left, right = dict(_numbers(a["scores"])), dict(_numbers(b["scores"]))
        largest, metric = 0.0, ""
        # a metric only one file has is a change of format (a newer maeb writes more), not of score
        for name in sorted(set(left) & set(right)):
            x, y = left[name], right[name]
            if math.isnan(x) and math.isnan(y):
                continue
            gap = abs(x - y) if not (math.isnan(x) or math.isnan(y)) else math.inf
            if gap > largest:
                largest, metric = gap, name
        cause = explain(a, b) if largest > tolerance else ""
        cells.append(Cell(model, task, _main(a), _main(b), largest, metric, cause))
    return cells


def report(cells: list[Cell], tolerance: float) -> str:
    differing = [c for c in cells if not c.agrees]
    lines = [
        f"MAEB-lite check: {len(cells) - len(differing)} of {len(cells)} cells agree with the reference within {tolerance:g}"
    ]
    for c in differing:
        ref = "-" if c.reference is None else f"{c.reference:.4f}"
        got = "-" if c.run is None else f"{c.run:.4f}"
        lines.append(f"  {c.model} / {c.task}: main {ref} -> {got}; largest difference {c.largest:.3g} in {c.metric}; {c.cause}")
    return "\n".join(lines) + "\n"
