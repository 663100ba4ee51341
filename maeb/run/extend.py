"""Runs that extend earlier ones: a result file that holds some of a task's splits and subsets (MAEB's
FSD2019Kaggle keeps `curated`; MAEB+ asks for `noisy` too) gets the missing ones evaluated and merged
into it, as mteb's per-subset saving does; a file that already holds every pair asked for is done.

Only the coverage may differ: an earlier file computed with another model, protocol or data is still
refused by the runner (maeb.run.resume.existing_result), naming what changed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..results.write import read_result

if TYPE_CHECKING:
    from ..core.taskspec import TaskSpec

# where a task's coverage lies in a run identity (maeb.core.identity.task_identity)
_COVERAGE = ("subsets", "eval_splits")


def pairs(scores: dict) -> set[tuple[str, str]]:
    """The (split, subset) pairs a result's scores hold."""
    return {
        (split, entry.get("hf_subset", "default"))
        for split, entries in (scores or {}).items()
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict)
    }


def wanted(spec: TaskSpec) -> set[tuple[str, str]]:
    """The (split, subset) pairs a run of `spec` evaluates."""
    return {(split, subset) for split in spec.data.eval_splits for subset in spec.data.subsets}


def _without_coverage(identity: dict) -> dict:
    task = dict(identity.get("task") or {})
    task["data"] = {k: v for k, v in (task.get("data") or {}).items() if k not in _COVERAGE}
    return {**{k: v for k, v in identity.items() if k != "hash"}, "task": task}


def same_but_coverage(recorded: dict | None, ident: dict) -> bool:
    """Whether two run identities differ at most in the task's subsets and splits."""
    return isinstance(recorded, dict) and _without_coverage(recorded) == _without_coverage(ident)


@dataclass(frozen=True)
class Extension:
    """An earlier result to extend: `run` is the spec narrowed to what is missing, `union` the spec
    whose coverage the merged file will have (its identity is recorded), `earlier` the file's JSON."""

    run: TaskSpec
    union: TaskSpec
    earlier: dict


def _ordered(first: list[str], more) -> list[str]:
    return [*first, *sorted(set(more) - set(first))]


def plan(path: Path, spec: TaskSpec, ident: dict) -> Extension | str | None:
    """'done' when the file at `path` holds every pair `spec` asks for under an identity that differs
    at most in coverage; an Extension when it holds some; None when the runner's usual check applies
    (no file, a file of another configuration, or an incomplete one)."""
    data = read_result(path) or {}
    info = data.get("maeb")
    if not isinstance(info, dict) or not info.get("complete", True):
        return None
    if not same_but_coverage(info.get("identity"), ident):
        return None
    have, want = pairs(data.get("scores") or {}), wanted(spec)
    if not have:
        return None
    missing = want - have
    if not missing:
        return "done"
    splits = [s for s in spec.data.eval_splits if s in {split for split, _ in missing}]
    subsets = [s for s in spec.data.subsets if s in {sub for _, sub in missing}]
    run = replace(spec, data=replace(spec.data, eval_splits=splits, subsets=subsets))
    union_splits = _ordered(list(spec.data.eval_splits), {split for split, _ in have})
    union_subsets = _ordered(list(spec.data.subsets), {sub for _, sub in have})
    union = replace(spec, data=replace(spec.data, eval_splits=union_splits, subsets=union_subsets))
    return Extension(run, union, data)


def merge_scores(earlier: dict, new: dict, order: list[str]) -> dict:
    """Scores of both files, split by split: an earlier subset is kept as it was (never dropped),
    a new one added; subsets in `order` (the union spec's), others after them."""
    out: dict[str, list[dict]] = {}
    for split in [*earlier, *(s for s in new if s not in earlier)]:
        by_subset = {e.get("hf_subset", "default"): e for e in new.get(split, [])}
        by_subset.update({e.get("hf_subset", "default"): e for e in earlier.get(split, [])})
        rank = {name: i for i, name in enumerate(order)}
        out[split] = sorted(by_subset.values(), key=lambda e: rank.get(e.get("hf_subset", "default"), len(rank)))
    return out


def merged_payload(earlier: dict, payload: dict, union: TaskSpec, identity: dict) -> dict:
    """The result file after an extension: both runs' scores, the union's identity, the times added
    and the earlier run's identity, date and fingerprints kept under maeb.extends."""
    info = dict(payload.get("maeb") or {})
    before = earlier.get("maeb") or {}
    info["identity"] = identity
    info["extends"] = {
        "identity": (before.get("identity") or {}).get("hash"),
        "date": earlier.get("date"),
        "pairs": sorted(map(list, pairs(earlier.get("scores") or {}))),
        "fingerprints": before.get("fingerprints"),
    }
    return {
        **payload,
        "scores": merge_scores(earlier.get("scores") or {}, payload.get("scores") or {}, list(union.data.subsets)),
        "evaluation_time": (earlier.get("evaluation_time") or 0.0) + (payload.get("evaluation_time") or 0.0),
        "maeb": info,
    }
