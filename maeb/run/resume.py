"""Which tasks a run still has to do. A task whose result file holds the same run identity is done
and read back, not rerun; one computed under another identity stops the run, naming what changed;
one that lacks a report the run asks for (duration buckets, per-item scores, a control) runs again
from cached vectors; one that holds some of the wanted splits and subsets is extended
(maeb.run.extend)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import MaebError
from ..core.identity import differences
from ..core.taskspec import TaskSpec
from ..results.write import predictions_path, read_result
from ..tasktypes.control import CONTROLLED
from .extend import Extension, pairs, wanted
from .extend import plan as plan_extension
from .options import ResolvedRun
from .summary import TaskResult


@dataclass
class Todo:
    """A run's tasks sorted: those to evaluate (spec, result path, identity), those already done
    (read from their files, by name) and those extending an earlier result (by name)."""

    pending: list[tuple[TaskSpec, Path | None, dict]] = field(default_factory=list)
    existing: dict[str, TaskResult] = field(default_factory=dict)
    extending: dict[str, Extension] = field(default_factory=dict)


def todo(job: ResolvedRun, specs: list[TaskSpec], log) -> Todo:
    """Each task's status under the run's output folder: to evaluate, to extend, or done."""
    cfg, out = job.options, Todo()
    for spec in specs:
        path = job.result_path(spec)
        ident = job.identity(spec)
        step = None if cfg.overwrite or path is None else plan_extension(path, spec, ident)
        if isinstance(step, Extension):
            missing = sorted(wanted(step.run) - pairs(step.earlier["scores"]))
            log(f"{spec.name}: {path} lacks {', '.join(f'{a}/{b}' for a, b in missing)}; evaluating them and merging")
            out.extending[spec.name] = step
            out.pending.append((step.run, path, job.identity(step.union)))
            continue
        status = "done" if step == "done" else "absent" if cfg.overwrite or path is None else existing_result(path, ident)
        if status == "done" and path is not None:
            status = _report_status(job, spec, path, log)
        if status == "done" and path is not None:  # (done: read from its file)
            out.existing[spec.name] = TaskResult.from_file(path, job.meta.name)
            log(f"{spec.name}: already done ({path}); skipped")
        else:
            if status == "incomplete":
                log(f"{spec.name}: the result at {path} is incomplete; running it again")
            out.pending.append((spec, path, ident))
    return out


def _report_status(job: ResolvedRun, spec: TaskSpec, path: Path, log) -> str:
    """'done', or 'incomplete-report' when a done result lacks a report the run asks for (report
    options are not part of the identity: the same scores, recomputed from cached vectors)."""
    cfg = job.options
    if cfg.duration_buckets and recorded_edges(path) != list(cfg.duration_buckets):
        log(f"{spec.name}: the result at {path} has no duration buckets with these edges; running it again")
        return "incomplete-report"
    if cfg.per_item and not has_per_item(path):
        log(f"{spec.name}: the result at {path} has no per-item scores; running it again")
        return "incomplete-report"
    if cfg.controls and not has_controls(path, spec):
        log(f"{spec.name}: the result at {path} has no {', '.join(cfg.controls)} control; running it again")
        return "incomplete-report"
    return "done"


def existing_result(path: Path, ident: dict) -> str:
    """'absent', 'done' (same run identity, complete) or 'incomplete' (to be run again); a file
    computed under another identity stops the run, naming what changed."""
    if not path.exists():
        return "absent"
    data = read_result(path)
    if data is None:
        return "absent"  # unreadable: recomputed and replaced
    found = data.get("maeb")
    extra: dict = found if isinstance(found, dict) else {}
    recorded = extra.get("identity")
    if not isinstance(recorded, dict) or recorded.get("hash") != ident["hash"]:
        what = "; ".join(differences(recorded, ident)[:6]) if recorded else "it records no maeb run identity"
        raise MaebError(
            f"{path} was computed under another configuration ({what}); rerun with --overwrite to replace it, "
            "or pass another --output-dir"
        )
    return "done" if extra.get("complete", True) else "incomplete"


def has_controls(path: Path, spec: TaskSpec) -> bool:
    """Whether a result records the shuffled control (a report option, not part of the identity), or
    its type computes none (nothing to run again for)."""
    if spec.type not in CONTROLLED:
        return True
    try:
        splits = json.loads(path.read_text(encoding="utf-8"))["maeb"]["baselines"]
        return any("shuffled" in record for subsets in splits.values() for record in subsets.values())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False  # no baselines record: run again, which writes one


def has_per_item(path: Path) -> bool:
    """Whether a result has its per-item files beside it (a report option, not part of the identity):
    every file a --per-item run recorded writing, which is none for a type that scores no item alone
    (pair classification, clustering: nothing to run again for); for a result from before that
    record, any per-item file."""
    from ..analysis.paired import PER_ITEM_FILE

    found = (read_result(path) or {}).get("maeb")
    written = found.get("per_item_files") if isinstance(found, dict) else None
    if isinstance(written, list):
        try:
            return all(predictions_path(path, str(name)).is_file() for name in written)
        except MaebError:  # a name that is no file name of ours: run again, which rewrites the record
            return False
    return any((path.parent / f"{path.stem}_predictions").rglob(f"*{PER_ITEM_FILE}"))


def recorded_edges(path: Path) -> list | None:
    """The --duration-buckets edges a result was computed with (None: without)."""
    found = (read_result(path) or {}).get("maeb")
    return found.get("duration_edges") if isinstance(found, dict) else None
