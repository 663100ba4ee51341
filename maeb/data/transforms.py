"""Row transforms a spec lists under [[transforms]], applied per split after loading and before
deriving pairs or queries. Each names its op; `splits` limits it to some splits.

  filter                column, keep = [...] | drop = [...] | drop_empty = true
  rename                column, to (if_present = true: skip when the column is absent)
  map                   column, mapping = {old = new}, to (default: in place), lowercase,
                        unmapped = "keep" | "drop" | "error"; list cells are mapped element-wise
  split_labels          column, sep: "a;b" -> ["a", "b"] for multilabel tasks
  stratified_subsample  column, n (default 2048), seed: mteb's stratified subsampling; list
                        labels use iterative stratification; a no-op when the split is smaller
  drop_invalid_audio    min_samples, check_finite: drop clips that do not decode, are shorter
                        than min_samples at their own rate or hold NaN/inf (mteb's filters)
  head                  n: the first n rows"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ..audio.pipeline import decode, default_workers
from ..core.errors import AudioError, DataError, SpecError, check_keys
from .sampling import stratified_subsample
from .sources import Table

OPS = {
    "filter": ({"column"}, {"keep", "drop", "drop_empty"}),
    "rename": ({"column", "to"}, {"if_present"}),
    "map": ({"column", "mapping"}, {"to", "lowercase", "unmapped"}),
    "split_labels": ({"column", "sep"}, set()),
    "stratified_subsample": ({"column"}, {"n", "seed"}),
    "drop_invalid_audio": (set(), {"column", "min_samples", "check_finite"}),
    "head": ({"n"}, set()),
}


def validate(transforms: list[dict], where: str) -> None:
    """Check a spec's transforms: known ops with their required keys and no others (SpecError naming the step)."""
    for i, step in enumerate(transforms):
        at = f"{where}: transforms[{i}]"
        if "op" not in step:
            raise SpecError(f"{at}: missing 'op' (one of {', '.join(OPS)})")
        if step["op"] not in OPS:
            check_keys(f"{at}: op", {step["op"]: None}, set(OPS))
        required, optional = OPS[step["op"]]
        check_keys(at, {k: v for k, v in step.items() if k not in ("op", "splits")}, required | optional)
        missing = required - set(step)
        if missing:
            raise SpecError(f"{at}: {step['op']} needs {', '.join(sorted(missing))}")
        if step["op"] == "filter" and sum(k in step for k in ("keep", "drop", "drop_empty")) != 1:
            raise SpecError(f"{at}: filter needs exactly one of keep, drop or drop_empty")
        if step.get("unmapped", "keep") not in ("keep", "drop", "error"):
            raise SpecError(f"{at}: unmapped must be keep, drop or error")


def _empty(value) -> bool:
    return value is None or value == "" or (isinstance(value, (list, tuple)) and len(value) == 0)


def _map(table: Table, step: dict) -> Table:
    column = step["column"]
    mapping = {str(k): v for k, v in step["mapping"].items()}
    lower, unmapped = step.get("lowercase", False), step.get("unmapped", "keep")
    missing = object()

    def one(value):
        key = str(value).lower() if lower and value is not None else str(value)
        out = mapping.get(key, missing)
        if out is not missing:
            return out
        if unmapped == "error":
            raise DataError(f"{table.name}: map on {column!r} has no entry for {value!r}")
        return missing if unmapped == "drop" else value

    values = [[one(v) for v in cell] if isinstance(cell, list) else one(cell) for cell in table[column]]
    keep = [not (v is missing or (isinstance(v, list) and missing in v)) for v in values]
    out = table.with_column(step.get("to", column), values)
    return out.where(keep) if not all(keep) else out


def _valid_audio_rows(table: Table, step: dict) -> list[bool]:
    column, min_samples, finite = step.get("column", "audio"), step.get("min_samples", 1), step.get("check_finite", True)
    table.require([column], "drop_invalid_audio")

    def ok(ref) -> bool:
        try:
            samples, _ = decode(ref.read(), ref.name)
        except AudioError as exc:
            # the pipeline rejects non-finite audio; here it is a reason to drop only if asked
            return (not finite) and "NaN" in exc.reason
        return len(samples) >= min_samples

    with ThreadPoolExecutor(default_workers()) as pool:
        return list(pool.map(ok, table[column]))


def apply(table: Table, step: dict) -> Table:
    """One transform step applied to a table (see the module docstring for the ops)."""
    op = step["op"]
    if op == "head":
        return table.select(range(min(step["n"], len(table))))
    if op == "drop_invalid_audio":
        return table.where(_valid_audio_rows(table, step))
    column = step["column"]
    if op == "rename" and step.get("if_present") and column not in table:
        return table
    table.require([column], f"transform {op}")
    values = table[column]
    if op == "filter":
        if step.get("drop_empty"):
            return table.where([not _empty(v) for v in values])
        wanted = {str(v) for v in step.get("keep", step.get("drop", []))}
        inside = [str(v) in wanted for v in values]
        return table.where(inside if "keep" in step else [not k for k in inside])
    if op == "rename":
        return table.renamed(column, step["to"])
    if op == "map":
        return _map(table, step)
    if op == "split_labels":
        split = [[part.strip() for part in str(v).split(step["sep"]) if part.strip()] for v in values]
        return table.with_column(column, split)
    if op == "stratified_subsample":
        rows = stratified_subsample(values, step.get("n", 2048), step.get("seed", 42), column in table.class_labels)
        return table.select(rows)
    raise SpecError(f"unknown transform {op!r}")


def apply_all(table: Table, transforms: list[dict], split: str) -> Table:
    """The table after each transform step that applies to `split`, in order."""
    for step in transforms:
        if "splits" in step and split not in step["splits"]:
            continue
        table = apply(table, step)
    return table
