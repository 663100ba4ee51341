"""Row transforms a spec lists under [[transforms]], applied per split after loading and before
deriving pairs or queries. Each names its op; `splits` limits it to some splits.

  filter                column, keep = [...] or drop = [...]
  rename                column, to
  map                   column, mapping = {old = new}; unmapped values stay
  split_labels          column, sep: "a;b" -> ["a", "b"] for multilabel tasks
  stratified_subsample  column, n, seed: mteb's stratified subsampling (e.g. to 2,048 clips)
  head                  n: the first n rows"""

from __future__ import annotations

from .data import Table
from .errors import SpecError, check_keys
from .sampling import stratified_subsample

OPS = {
    "filter": ({"column"}, {"keep", "drop"}),
    "rename": ({"column", "to"}, set()),
    "map": ({"column", "mapping"}, set()),
    "split_labels": ({"column", "sep"}, set()),
    "stratified_subsample": ({"column", "n"}, {"seed"}),
    "head": ({"n"}, set()),
}


def validate(transforms: list[dict], where: str) -> None:
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
        if step["op"] == "filter" and ("keep" in step) == ("drop" in step):
            raise SpecError(f"{at}: filter needs exactly one of keep or drop")


def _same(value, wanted) -> bool:
    return str(value) == str(wanted)


def apply(table: Table, step: dict) -> Table:
    op = step["op"]
    if op == "head":
        return table.select(range(min(step["n"], len(table))))
    column = step["column"]
    table.require([column], f"transform {op}")
    values = table[column]
    if op == "filter":
        wanted = {str(v) for v in step.get("keep", step.get("drop", []))}
        inside = [str(v) in wanted for v in values]
        return table.where(inside if "keep" in step else [not k for k in inside])
    if op == "rename":
        cols = {(step["to"] if k == column else k): v for k, v in table.columns.items()}
        return Table(cols, table.name)
    if op == "map":
        mapping = {str(k): v for k, v in step["mapping"].items()}
        return table.with_column(column, [mapping.get(str(v), v) for v in values])
    if op == "split_labels":
        split = [[part.strip() for part in str(v).split(step["sep"]) if part.strip()] for v in values]
        return table.with_column(column, split)
    if op == "stratified_subsample":
        return table.select(stratified_subsample(values, step["n"], step.get("seed", 42)))
    raise SpecError(f"unknown transform {op!r}")


def apply_all(table: Table, transforms: list[dict], split: str) -> Table:
    for step in transforms:
        if "splits" in step and split not in step["splits"]:
            continue
        table = apply(table, step)
    return table
