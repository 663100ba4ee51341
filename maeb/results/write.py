"""TaskResult files in mteb's layout: results/{org}__{model}/{revision}/{Task}.json plus
model_meta.json, written atomically so an interrupted run never leaves a half file."""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..core.errors import OutputError
from ..core.paths import inside, safe_component

if TYPE_CHECKING:
    from ..core.taskspec import TaskSpec
    from ..encoders import ModelMeta

# the mteb release whose protocol and file format maeb follows
MTEB_RELEASE = "2.26.24"
MTEB_VERSION = f"{MTEB_RELEASE}+maeb.{__version__}"
_STALE_TMP_SECONDS = 600  # a temporary file this old belongs to a killed run


def rounded(value: Any, places: int = 6) -> Any:
    """The value with every float rounded to `places` (NaN and infinities kept), through dicts, lists and numpy scalars."""
    if isinstance(value, float):
        return value if math.isnan(value) or math.isinf(value) else round(value, places)
    if isinstance(value, dict):
        return {k: rounded(v, places) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, places) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return rounded(value.item(), places)
    return value


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_hint(path: Path, exc: OSError) -> str:
    """What to do about a file that cannot be written: said for the cause (a leaderboard's --out is no
    --output-dir, so no flag is named)."""
    if exc.errno == errno.ENOSPC:
        return "free some space"
    if path.is_dir():
        return "it is a folder: name a file in it"
    above = next((p for p in path.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        return f"{above} is a file, not a folder"
    return "check the folder's permissions or write elsewhere"


def _write_atomic(path: Path, text: str | bytes) -> None:
    """Write to a temporary file beside the target, fsync, then rename: a reader sees the old file
    or the new one, never half of one. Failures name the path and what to do."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the writer's pid in the name lets a later run remove what a killed one left behind
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes files private; results are ordinary files
        os.replace(tmp, path)
    except OSError as exc:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        raise OutputError(f"cannot write {path} ({exc.strerror or exc}); {_write_hint(path, exc)}") from exc
    except BaseException:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check_writable(folder: Path) -> None:
    """Stop before any work when results cannot be written into `folder` (a file where a folder
    belongs, a read-only folder): a probe file is made and removed, and so are the folders made for
    it (a run that fails later, loading the model say, leaves nothing behind)."""
    folder = Path(folder)
    made, above = [], folder  # the folders this check creates, deepest first
    while not above.exists() and above.parent != above:
        made.append(above)
        above = above.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".write-check.{os.getpid()}.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        hint = "free some space" if exc.errno == errno.ENOSPC else "check the folder's permissions or pass another --output-dir"
        raise OutputError(f"cannot write results into {folder} ({exc.strerror or exc}); {hint}") from exc
    finally:
        for path in made:
            with contextlib.suppress(OSError):
                path.rmdir()


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write JSON (indented, NaN allowed as mteb writes it) through a temporary file, so a crash never leaves half a file."""
    _write_atomic(path, json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=True) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write text through a temporary file renamed into place, so a crash never leaves half a file."""
    _write_atomic(path, text)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write bytes (a figure's PDF or PNG) through a temporary file renamed into place, as text is."""
    _write_atomic(path, data)


def _writer_alive(tmp: Path) -> bool:
    parts = tmp.name.split(".")
    pid = next((int(p) for p in reversed(parts[:-2]) if p.isdigit()), None)
    if pid is None or pid == os.getpid():
        return False
    from ..engine.cache import pid_alive

    return pid_alive(pid)


def remove_stale_temporaries(folder: Path) -> int:
    """Temporary files a killed run left behind: their writer is gone, or they are old (never one
    a live run may still rename)."""
    removed = 0
    now = time.time()
    for tmp in Path(folder).glob(".*.tmp"):
        try:
            if not _writer_alive(tmp) or now - tmp.stat().st_mtime > _STALE_TMP_SECONDS:
                tmp.unlink()
                removed += 1
        except OSError:
            continue
    return removed


_INVALID = set('<>:"|?*\\/\0')


def _serial(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_serial(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_serial(v)}" for k, v in sorted(value.items())) + "}"
    return "".join("_" if ch in _INVALID else ch for ch in str(value))


def experiment_name(kwargs: dict | None) -> str | None:
    """The folder mteb files a model's non-default settings under
    ({model}/{revision}/experiments/{name}/): key_value pairs joined by "__", or exp_<hash> when
    long or unsafe (mteb's rule, so its ResultCache finds these results as experiments)."""
    if not kwargs:
        return None
    text = "__".join(f"{k}_{_serial(v)}" for k, v in sorted(kwargs.items()))
    if len(text) > 200 or any(ch in _INVALID for ch in text):
        return "exp_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return text


def model_dir(root: Path, meta: ModelMeta, experiment: dict | None = None) -> Path:
    """The folder of a model's results, mteb's layout: ROOT/ORG__NAME/REVISION, and under experiments/NAME for a run that differs
    from the registered entry."""
    # a model named ".." or revision ".." would climb out of ROOT: each is one plain folder name
    revision = safe_component(str(meta.revision).replace("/", "_"), f"model {meta.name!r}: revision")
    folder = Path(root) / safe_component(meta.folder, "model name") / revision
    name = experiment_name(experiment)
    out = folder / "experiments" / name if name else folder
    return inside(root, out, f"model {meta.name!r}")


def result_path(root: Path, meta: ModelMeta, task_name: str, experiment: dict | None = None) -> Path:
    """Where a task's result file goes: the model's folder / TASK.json."""
    folder = model_dir(root, meta, experiment)
    return inside(folder, folder / f"{safe_component(task_name, 'task name')}.json", f"task {task_name!r}")


def predictions_path(result: Path, name: str) -> Path:
    """Where a task's file `name` (its predictions, per-clip lines) goes: beside the result, in
    TASK_predictions/; the name comes from the task type and may name a subfolder per subset
    ("main/per_clip.jsonl"), so each of its '/'-separated parts is checked like a task name."""
    folder = Path(result).parent / f"{Path(result).stem}_predictions"
    what = f"{Path(result).stem}: prediction file name"
    parts = [safe_component(part, what) for part in str(name).split("/")]
    return inside(folder, folder.joinpath(*parts), str(result))


def model_meta_json(meta: ModelMeta, experiment: dict | None = None) -> dict:
    """model_meta.json's content: mteb's registry record when mteb knows the model at this revision
    (so the results repository sees the registry's own values), else the converted catalog entry."""
    from ..spec.catalog import mteb_record

    record = mteb_record(meta.name)
    if record is not None and str(record.get("revision")) != str(meta.revision):
        record = None  # another revision is another model as far as the registry goes
    return meta.to_mteb(experiment, record)


def write_model_meta(root: Path, meta: ModelMeta, options: dict | None = None, experiment: dict | None = None) -> Path:
    """Write model_meta.json (mteb's ModelMeta, experiment_kwargs for an experiment) into the model's
    folder and return its path; how maeb ran the model goes to run_settings.jsonl (write_run_settings)."""
    path = model_dir(root, meta, experiment) / "model_meta.json"
    if path.parent.is_dir():
        remove_stale_temporaries(path.parent)
    write_json_atomic(path, model_meta_json(meta, experiment))
    return path


RUN_SETTINGS = "run_settings.jsonl"


def _settings_rows(path: Path) -> list[dict]:
    rows = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a cut-off line from a killed writer: the task's next run writes it again
            if isinstance(row, dict):
                rows.append(row)
    return rows


def write_run_settings(folder: Path, task: str, scores: dict, settings: dict) -> Path:
    """Record in FOLDER/run_settings.jsonl (the side file mteb keeps beside model_meta.json, one JSON
    object per line naming task, splits and subsets) how maeb evaluated each split and subset of
    `task`; rows of earlier runs stay for what this run did not evaluate, as mteb merges them."""
    path = Path(folder) / RUN_SETTINGS
    evaluated = {(split, e.get("hf_subset", "default")) for split, entries in scores.items() for e in entries}
    kept = []
    for row in _settings_rows(path):
        if row.get("task") != task:
            kept.append(row)
            continue
        left = {(s, sub) for s in row.get("splits") or [] for sub in row.get("subsets") or []} - evaluated
        for split in sorted({s for s, _ in left}):  # what an earlier run evaluated and this one did not
            kept.append({**row, "splits": [split], "subsets": sorted(sub for s, sub in left if s == split)})
    row = {"version": {"maeb": __version__}, "encode_kwargs": {}, "maeb": settings}
    for split in sorted({s for s, _ in evaluated}):
        kept.append({"task": task, "splits": [split], "subsets": sorted(sub for s, sub in evaluated if s == split), **row})
    write_text_atomic(path, "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in kept))
    return path


def task_result(spec: TaskSpec, scores: dict[str, list[dict]], evaluation_time: float, run_info: dict) -> dict:
    """scores: split -> one entry per subset, each already holding main_score, hf_subset, languages."""
    return {
        # a branch ("main") or no revision resolved to its commit when the data came from the hub
        "dataset_revision": (run_info.get("data") or {}).get("resolved_revision") or spec.revision,
        "task_name": spec.name,
        # mteb's version with maeb's as a local label: mteb parses it as a release of its own, so
        # its choice among revision folders treats this file as it treats a file it wrote
        "mteb_version": MTEB_VERSION,
        "scores": rounded(scores),
        "evaluation_time": evaluation_time,
        "kg_co2_emissions": None,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "maeb": {"version": __version__, **rounded(run_info, 6)},
    }


def read_result(path: Path) -> dict | None:
    """A result file's JSON, or None when it is missing or unreadable (e.g. cut off)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError):
        return None
