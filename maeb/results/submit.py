"""`maeb submit RESULTS_DIR --to CLONE`: a run's results laid out in a clone of the public results
repository as a pull request there expects, merged with the files already there, then checked by
that repository's CI rules (read from its tests; reproduced here, not copied).

What it refuses, one line each: experiment folders (non-default settings: the repository takes the
registered model), models mteb's registry does not know (the repository rejects them), tasks
neither maeb's catalog nor mteb knows (a local task spec), a main score that is NaN or inf, incomplete
results, results on another dataset revision, and tasks the model already has under another
revision folder (the repository keeps one), and, before anything is written, a model name, revision
or task name that cannot name one folder of the clone (a revision "../../x" would write outside it).
Merging keeps every split, subset and language already there: a (split, subset) the repository has
keeps its published entry; new ones are added. All or nothing: every file is staged beside its
target before any is renamed into place (a full disk stops it with the clone unchanged); on a failed
check every file it wrote is put back as it was, and the folders it made (only those) are removed."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from ..core.errors import MaebError, OutputError
from ..core.paths import inside, unsafe_reason
from .staging import Submission
from .write import RUN_SETTINGS

MAX_BYTES = 10 * 1024 * 1024  # the repository's file size check
SCORE_EPSILON = 0.001  # the repository's largest accepted change of a published main score
HOW_TO_REGISTER = (
    "the results repository only takes models in mteb's registry: add a ModelMeta for it to mteb "
    "(mteb/models/model_implementations/, a pull request to embeddings-benchmark/mteb), then submit"
)


def folder_name(name: str) -> str:
    """A model's folder in the repository (mteb's model_name_as_path)."""
    return name.replace("/", "__").replace(" ", "_")


def known_models() -> set[str]:
    """Model names mteb's registry holds: the pinned release's records maeb ships, and the
    installed mteb's registry when there is one (the repository's CI uses its newest mteb)."""
    from ..spec.catalog import mteb_records

    names = set(mteb_records())
    try:
        import mteb

        names |= {m.name for m in mteb.get_model_metas() if m.name}
    except Exception:  # noqa: BLE001  (mteb absent or broken: the shipped records decide)
        pass
    return names


def _json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _pairs(data: dict) -> dict[tuple[str, str], dict]:
    return {
        (split, e.get("hf_subset", "default")): e
        for split, entries in (data.get("scores") or {}).items()
        if isinstance(entries, list)
        for e in entries
        if isinstance(e, dict)
    }


def merge(published: dict, ours: dict) -> tuple[dict, list[tuple[str, str]]]:
    """The published file with our (split, subset) entries that it lacks added; its own entries and
    top-level fields stay. Returns the merged file and the pairs added."""
    have = _pairs(published)
    added = [key for key in _pairs(ours) if key not in have]
    scores = {split: list(entries) for split, entries in (published.get("scores") or {}).items()}
    for split, subset in added:
        entry = dict(_pairs(ours)[(split, subset)])
        if ours.get("mteb_version") and published.get("mteb_version") != ours.get("mteb_version"):
            entry.setdefault("mteb_version", ours["mteb_version"])  # per subset, as mteb's own merge records it
        scores.setdefault(split, []).append(entry)
    merged = {**published, "scores": scores}
    if added:
        merged["evaluation_time"] = (published.get("evaluation_time") or 0.0) + (ours.get("evaluation_time") or 0.0)
    if added and isinstance(published.get("maeb"), dict) and isinstance(ours.get("maeb"), dict):
        # a maeb file both sides: its maeb section (identity with its subsets and splits, date) must say
        # what the merged file holds, as a run that extends a file records it (maeb.run.extend)
        merged["maeb"] = _merged_maeb(published, ours)
        merged["date"] = ours.get("date", published.get("date"))
    return merged, added


_COVERAGE = ("subsets", "eval_splits")  # where a run identity lists its coverage (as maeb.run.extend reads it)


def _merged_maeb(published: dict, ours: dict) -> dict:
    """Our maeb section, its identity widened to the merged coverage when the two runs differ in
    nothing else (its hash recomputed), and the published run's identity, date and pairs under
    `extends`; identities that differ otherwise keep ours, the published one named under `extends`."""
    from ..core.identity import digest

    before, info = published["maeb"], dict(ours["maeb"])
    mine, theirs = info.get("identity"), before.get("identity")
    if isinstance(mine, dict) and isinstance(theirs, dict) and _but_coverage(mine) == _but_coverage(theirs):
        task = dict(mine.get("task") or {})
        data = dict(task.get("data") or {})
        for key in _COVERAGE:
            first = list((theirs.get("task") or {}).get("data", {}).get(key) or [])
            data[key] = first + [v for v in data.get(key) or [] if v not in first]
        task["data"] = data
        base = {k: v for k, v in mine.items() if k != "hash"} | {"task": task}
        info["identity"] = {**base, "hash": digest(base)}
    info["extends"] = {
        "identity": theirs.get("hash") if isinstance(theirs, dict) else None,
        "date": published.get("date"),
        "pairs": sorted(map(list, _pairs(published))),
        "fingerprints": before.get("fingerprints"),
    }
    return info


def _but_coverage(identity: dict) -> dict:
    task = dict(identity.get("task") or {})
    task["data"] = {k: v for k, v in (task.get("data") or {}).items() if k not in _COVERAGE}
    return {**{k: v for k, v in identity.items() if k != "hash"}, "task": task}


def _revision_folders(results: Path) -> list[Path]:
    return sorted(p for p in results.glob("*/*") if p.is_dir() and not p.name.startswith("."))


def known_tasks() -> set[str]:
    """Task names the repository can take: maeb's registered catalog (names and aliases) and the
    installed mteb's tasks; a local task spec's own name is neither."""
    from ..spec.catalog import task_files

    names = set(task_files())
    try:
        from mteb.get_tasks import get_tasks

        names |= {t.metadata.name for t in get_tasks()}
    except Exception:  # noqa: BLE001  (mteb absent or broken: the catalog decides)
        pass
    return names


def submit(source: Path, clone: Path, known: set[str] | None = None, tasks: set[str] | None = None) -> Submission:
    """Lay the results under `source` (maeb's output folder) out in `clone`/results, merged with what
    is there, and run the repository's rules on what was written; undone when a rule fails."""
    source, clone = Path(source), Path(clone)
    results = clone / "results"
    if not results.is_dir():
        raise MaebError(f"{clone} is not a clone of the results repository (it has no results/ folder)")
    if not source.is_dir():
        raise MaebError(f"results folder {source} does not exist")
    known = known_models() if known is None else known
    tasks = known_tasks() if tasks is None else tasks
    out = Submission()
    folders = _revision_folders(source)
    if not folders:
        raise MaebError(f"{source} holds no results in mteb's layout (MODEL/REVISION/TASK.json)")
    unsafe = {folder: why for folder in folders if (why := unsafe_names(folder, results))}  # before any write
    out.refused += unsafe.values()
    for folder in folders:
        if folder not in unsafe:
            _submit_folder(folder, results, known, tasks, out)
    if out.written:
        out.commit()
        try:
            out.failures = check(results, out, known)
        except BaseException:  # a check that cannot finish leaves the clone as it was, too
            out.undo()
            raise
        if out.failures:
            out.undo()
        else:
            out.finish()
    return out


def unsafe_names(folder: Path, results: Path) -> str | None:
    """Why a revision folder's names (model_meta.json's name and revision, its result files' task
    names) cannot lay it out inside `results`, in one line; None when they can (or when the folder is
    refused later for another reason, such as no model_meta.json)."""
    meta = _json(folder / "model_meta.json") or {}
    name, revision = meta.get("name"), meta.get("revision")
    if not isinstance(name, str) or not isinstance(revision, str):
        return None
    named = [("model name", name, folder_name(name)), ("revision", revision, revision)]
    tasks = [p.stem for p in sorted(folder.glob("*.json")) if p.name != "model_meta.json" and not p.name.startswith(".")]
    named += [("task name", task, task) for task in tasks]
    for what, value, part in named:
        why = unsafe_reason(part)
        if why is not None:
            return f"{folder / 'model_meta.json'}: {what} {value!r} cannot name a folder of the repository ({why}); not submitted"
    try:
        inside(results, results / folder_name(name) / revision, f"{folder}: model {name} at revision {revision}")
    except OutputError as exc:  # a link in the clone that leads out of it
        return f"{exc}; not submitted"
    return None


def _submit_folder(folder: Path, results: Path, known: set[str], tasks: set[str], out: Submission) -> None:
    if (folder / "experiments").is_dir():
        out.refused.append(
            f"{folder / 'experiments'}: experiment folders (runs with non-default settings) are not submitted; "
            "the results repository takes the registered model's runs"
        )
    meta = _json(folder / "model_meta.json")
    if meta is None:
        out.refused.append(f"{folder}: no readable model_meta.json; rerun with maeb to write one")
        return
    name, revision = meta.get("name"), meta.get("revision")
    if not isinstance(name, str) or not isinstance(revision, str):
        out.refused.append(f"{folder / 'model_meta.json'}: needs a name and a revision")
        return
    if meta.get("experiment_kwargs"):
        out.refused.append(f"{folder}: model_meta.json records experiment_kwargs (an experiment); not submitted")
        return
    if name not in known:
        out.refused.append(f"{folder}: model {name} is not in mteb's model registry; {HOW_TO_REGISTER}")
        return
    dest = results / folder_name(name) / revision
    others = [p for p in (results / folder_name(name)).glob("*") if p.is_dir() and p != dest]
    written = []
    for path in sorted(folder.glob("*.json")):
        if path.name == "model_meta.json" or path.name.startswith("."):
            continue
        if _submit_task(path, dest, others, tasks, out):
            written.append(path.stem)
    for other, names in sorted(out.elsewhere.items()):  # one line per folder in the way, not one per task
        out.refused.append(_elsewhere_line(folder, results.parent, other, names, revision))
    out.elsewhere.clear()
    if not written:
        return
    out.models.add(name)
    if out.text(dest / "model_meta.json") is None:
        out.write(dest / "model_meta.json", (folder / "model_meta.json").read_text(encoding="utf-8"))
    settings = folder / RUN_SETTINGS
    if settings.exists():  # ours for the tasks written, after what the repository has (later rows win in mteb)
        rows = [line for line in settings.read_text(encoding="utf-8").splitlines() if _row_task(line) in written]
        target = dest / RUN_SETTINGS
        before = out.text(target) or ""
        out.write(target, before + "".join(line + "\n" for line in rows))


def _elsewhere_line(folder: Path, clone: Path, other: Path, names: list[str], revision: str) -> str:
    """The refusal of tasks the repository has under another revision folder of the model (a legacy
    `main` folder, say), with the way forward: the repository's no-duplicate-results rule takes a
    task under one revision only, so a pull request that moves it removes the old file in the same
    pull request (or explains in its description why both stay)."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    where = other.relative_to(clone)
    theirs = {p.stem for p in other.glob("*.json") if p.name != "model_meta.json"}
    if theirs <= set(names):  # every result of that folder is replaced: the folder goes
        files = f"-r {where}"
    else:
        files = f"{where}/{names[0]}.json" if len(names) == 1 else f"{where}/{{{','.join(names)}}}.json"
    return (
        f"{folder}: the repository has {shown} for this model under revision {other.name} and keeps one revision "
        f"per task (no-duplicate-results); not submitted. To move {'it' if len(names) == 1 else 'them'} to "
        f"{revision}, remove the old files in the same pull request (cd {clone} && git rm {files}) and submit "
        "again, or keep them and say why in the pull request's description"
    )


def _row_task(line: str) -> str | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    return row.get("task") if isinstance(row, dict) else None


def _submit_task(path: Path, dest: Path, others: list[Path], tasks: set[str], out: Submission) -> bool:
    ours = _json(path)
    if ours is None or not isinstance(ours.get("scores"), dict):
        out.refused.append(f"{path}: not a result file (unreadable, or no scores)")
        return False
    if ours.get("task_name") != path.stem:
        out.refused.append(f"{path}: task_name {ours.get('task_name')!r} differs from the file name")
        return False
    if path.stem not in tasks:
        out.refused.append(
            f"{path}: task_name {path.stem!r} is not a registered task (maeb's catalog or mteb's); "
            "the repository takes results of tasks mteb knows, not of a local task spec"
        )
        return False
    bad = _not_finite(ours)
    if bad:
        out.refused.append(f"{path}: {bad} is not a finite number; rerun the task (the repository takes no NaN or inf score)")
        return False
    if not (ours.get("maeb") or {}).get("complete", True):
        out.refused.append(f"{path}: incomplete (some judge items failed); rerun the task to finish it")
        return False
    elsewhere = [p for p in others if (p / path.name).exists()]
    if elsewhere:
        out.elsewhere.setdefault(elsewhere[0], []).append(path.stem)
        return False
    target = dest / path.name
    published = _json(target) if target.exists() else None
    if published is None:
        out.write(target, json.dumps(ours, indent=2, ensure_ascii=False) + "\n")
        return True
    if published.get("dataset_revision") != ours.get("dataset_revision"):
        out.refused.append(
            f"{path}: computed on dataset revision {ours.get('dataset_revision')}, the repository has "
            f"{published.get('dataset_revision')}; they cannot be merged"
        )
        return False
    merged, added = merge(published, ours)
    kept = [k for k in _pairs(ours) if k not in added and _moved(_pairs(published)[k], _pairs(ours)[k])]
    if kept:
        shown = ", ".join(f"{a}/{b}" for a, b in kept[:5])
        out.notes.append(f"{target}: kept the published scores of {shown} (ours differ by more than {SCORE_EPSILON})")
    if not added:
        out.notes.append(f"{target}: nothing new (every split and subset is there already)")
        return False
    out.write(target, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    return True


def _not_finite(data: dict) -> str | None:
    """The first main score of a result file that is not a finite number, as `scores.SPLIT[SUBSET].main_score = VALUE`."""
    for (split, subset), entry in _pairs(data).items():
        value = entry.get("main_score")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"scores.{split}[{subset}].main_score = {value!r}"
    return None


def _moved(a: dict, b: dict) -> bool:
    x, y = a.get("main_score"), b.get("main_score")
    return isinstance(x, (int, float)) and isinstance(y, (int, float)) and abs(_unit(x) - _unit(y)) > SCORE_EPSILON


def _unit(value: float) -> float:
    return value / 100 if value > 1 else value  # the repository compares scores on a 0-1 scale


# -- the repository's CI rules, on what was written ----------------------------------------------
_SHA1 = re.compile(r"^[0-9a-f]{40}$")


def check(results: Path, sub: Submission, known: set[str]) -> list[str]:
    """The repository's rules on the folders and files `sub` wrote: one line per failure, naming
    the file and the rule."""
    failures: list[str] = []
    folders = sorted({p.parent for p in sub.written})
    for folder in folders:
        failures += _check_folder(results, folder, sub, known)
    for path, before in sorted(sub.written.items()):
        failures += _check_file(path, before)
    return failures


def _check_folder(results: Path, folder: Path, sub: Submission, known: set[str]) -> list[str]:
    where = folder / "model_meta.json"
    meta = _json(where)
    if meta is None:
        return [f"{where}: model-meta-present: missing or unreadable"]
    name, revision = str(meta.get("name")), str(meta.get("revision"))
    fails = []
    if results / folder_name(name) / revision != folder:
        fails.append(f"{where}: folder-structure: name and revision say {folder_name(name)}/{revision}")
    if "/" not in name:
        fails.append(f"{where}: organization-in-name: {name!r} has no organization")
    legacy = sub.written.get(where, b"") is not None  # a folder the repository had keeps its revision
    if not legacy and not (_SHA1.match(revision) or len(revision) == 1):
        fails.append(f"{where}: revision-is-specified: {revision!r} is neither a commit hash nor a one-character version")
    if revision != folder.name:
        fails.append(f"{where}: revision-matches-folder: {revision!r} in folder {folder.name!r}")
    if name not in known:
        fails.append(f"{where}: model-in-mteb: {name} is not in mteb's registry; {HOW_TO_REGISTER}")
    fails += _mteb_meta(where)
    model = folder.parent
    revisions: dict[str, Path] = {}
    tasks: dict[str, list[str]] = {}
    for other in sorted(p for p in model.iterdir() if p.is_dir() and not p.name.startswith(".")):
        other_meta = _json(other / "model_meta.json") or {}
        rev = str(other_meta.get("revision") or other.name)
        if rev in revisions:
            fails.append(f"{other / 'model_meta.json'}: no-duplicate-revisions: {rev} also in {revisions[rev]}")
        revisions[rev] = other
        for file in other.glob("*.json"):
            if file.name != "model_meta.json":
                tasks.setdefault(file.stem, []).append(other.name)
    for task, revs in sorted(tasks.items()):
        if len(revs) > 1 and folder / f"{task}.json" in sub.written:
            fails.append(f"{folder / f'{task}.json'}: no-duplicate-results: {task} under revisions {', '.join(revs)}")
    return fails


def _mteb_meta(path: Path) -> list[str]:
    """mteb's own reading of model_meta.json (ModelMeta.model_validate_json_resolved, the entry point
    its ResultCache uses), when mteb is installed."""
    try:
        from mteb.models import ModelMeta
    except Exception:  # noqa: BLE001
        return []
    try:
        ModelMeta.model_validate_json_resolved(path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001  (pydantic's ValidationError, as one line)
        return [f"{path}: mteb-model-meta: {' '.join(str(exc).split())[:300]}"]
    return []


def _check_file(path: Path, before: bytes | None) -> list[str]:
    fails = []
    if path.stat().st_size > MAX_BYTES:
        fails.append(f"{path}: file-size: {path.stat().st_size} bytes, over 10 MB")
    if path.suffix != ".json" or path.name == "model_meta.json":
        return fails
    new = _json(path) or {}
    if new.get("task_name") != path.stem:
        fails.append(f"{path}: task-name-matches-filename: task_name is {new.get('task_name')!r}")
    try:
        from mteb import TaskResult

        TaskResult.from_disk(path)
    except ImportError:
        pass
    except Exception as exc:  # noqa: BLE001
        fails.append(f"{path}: mteb-task-result: {' '.join(str(exc).split())[:300]}")
    if before is None:
        return fails
    old = json.loads(before)
    old_pairs, new_pairs = _pairs(old), _pairs(new)
    for (split, subset), entry in sorted(old_pairs.items()):
        now = new_pairs.get((split, subset))
        if now is None:
            fails.append(f"{path}: no-splits-removed: {split}/{subset} was there")
            continue
        lost = set(entry.get("languages") or []) - set(now.get("languages") or [])
        if lost:
            fails.append(f"{path}: no-languages-removed: {split}/{subset} lost {', '.join(sorted(lost))}")
        if _moved(entry, now):
            fails.append(f"{path}: results-diff: {split}/{subset} main_score moved by more than {SCORE_EPSILON}")
    return fails
