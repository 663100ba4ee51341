"""Reading published and local results: mteb's folder layout ({org}__{model}/{revision}/{Task}.json),
maeb's own results (the same layout), and the flat main_scores.csv form. One record per (model,
revision, task, split, subset).

Nothing wrong enters a board: every rejected file or entry is reported as one line naming the file
and the reason. A main score must be a finite number inside the range of its metric (accuracy, AP,
nDCG, V-measure, LRAP ... lie in [0, 1]; AMI, ARI and correlations in [-1, 1]; judge scores are
divided by the file's maeb.main_score_scale first). Only the splits the task is evaluated on are
read: the catalog's eval_splits, else the file's own record (maeb.task.eval_splits), else another
file's record of the same task, else "test" when some file of the task has it (mteb's default),
else whatever the files hold. Other splits are reported and left out, so one model's stray
"validation" file cannot make the task incomplete for every model. Subsets likewise: the spec's
subsets where the catalog or a spec file knows the task, else the subsets that more than half of
the models with results for the task have; entries of other subsets are reported and left out, so
one file with an unexpected hf_subset cannot blank the task's column for every other model.

maeb's runner records its task in each result (maeb.task: name, type, category, domains,
languages, main_score, eval_splits, family; older files only maeb.task_type, maeb's short type
name); those records are returned beside the scores so tasks the catalog does not know still get
their type, category and domains."""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..spec.taskspec import CATEGORIES, GENERATIVE_TYPES, TYPES

# metric names older mteb releases wrote; the key is today's name
OLD_NAMES = {f"hit_rate_at_{k}": f"cv_recall_at_{k}" for k in (1, 3, 5, 10, 20, 100, 1000)}
NO_REVISION = {"", "no_revision_available", "external", "None", "none"}
AUDIO_ONLY = {"a2a", "a2c"}
MTEB_TYPES = {**TYPES, **GENERATIVE_TYPES}  # maeb's short type names -> mteb's
DEFAULT_SPLIT = "test"  # mteb's default evaluation split, assumed only when nothing records one


@dataclass(frozen=True)
class TaskInfo:
    """What a board needs to know of a task: its type, category, domains, main score and splits."""

    name: str
    type: str = "Unknown"
    category: str | None = None
    domains: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    family: str | None = None
    main_score: str | None = None
    eval_splits: tuple[str, ...] = ()
    subsets: tuple[str, ...] = ()  # the task's subsets where a spec names them (); () = unknown
    recorded_lower: bool | None = None  # maeb.task.lower_is_better of its result files (None: not recorded)

    @property
    def lower_is_better(self) -> bool:
        """Whether a smaller main score ranks higher (error rates, FD, KL, WER): the main score's metric
        record (maeb.metrics.registry, where a task type of any origin declares its metric once), else
        what the result file recorded (maeb.task.lower_is_better, written from that record where the
        run had it), else a record the name only extends (f1_weighted is f1's), else higher is better.
        The file comes before an extended name: hamming_loss, declared by a module this process has not
        imported, is not the higher-is-better hamming."""
        from ..metrics.registry import record_of

        found = record_of(self.main_score, loose=False)
        if found is not None:
            return found.lower_is_better
        if self.recorded_lower is not None:
            return self.recorded_lower
        found = record_of(self.main_score)
        return found.lower_is_better if found is not None else False

    @property
    def group(self) -> str | None:
        """ "audio-only" or "cross-modal" by the category; None when the category is unknown."""
        if self.category is None:
            return None
        return "audio-only" if self.category in AUDIO_ONLY else "cross-modal"


@dataclass(frozen=True)
class Score:
    """One main score: a model's value on one split and subset of a task, with where it was read."""

    model: str
    revision: str
    task: str
    split: str
    subset: str
    value: float
    evaluation_time: float | None = None
    mteb_version: str | None = None
    date: str | None = None
    source: str = ""
    shared_clips: int = 0  # clips byte-identical in the training and an evaluation split (maeb.data.sources)
    tie_dependent: bool = False  # the result's maeb.ties says this score moves with the order of tied items
    fragile: bool = False  # the result's maeb.stability says rounding-level noise moves it by more than one item's share


@dataclass
class Results:
    """What reading result files gives: the scores, and one line per rejected file or disagreement."""

    scores: list[Score] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # rejected files and entries, one line each
    notes: list[str] = field(default_factory=list)  # disagreements that rejected nothing
    tasks: dict[str, TaskInfo] = field(default_factory=dict)  # what result files record about their tasks
    seen: set[str] = field(default_factory=set)  # every task some file or row names, rejected or not


# -- metric ranges --------------------------------------------------------------------------
_SLACK = 1e-6  # results are rounded to 6 places


def metric_range(name: str | None) -> tuple[float, float] | None:
    """The values a metric can take, from its record (maeb.metrics.registry.record_of: accuracy, AP,
    nDCG ... [0, 1]; AMI, correlations, FENSE [-1, 1]; FD [0, inf)), or None where it is unbounded
    or has no record (only finiteness is checked then). Thresholds, standard deviations and counts
    are not scores and have none."""
    from ..metrics.registry import record_of

    found = record_of(name)
    return found.range if found is not None else None


def _number(value) -> float | None:
    # bool is an int subclass; true/false is never a score
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _pick_main(entry: dict, wanted: str | None) -> tuple[float | None, str | None]:
    """The main score of one entry and the metric it is: the task's metric (or its old name) if the
    entry has it, else the entry's main_score, named by the metric that holds the same value."""
    if wanted:
        for name in (wanted, OLD_NAMES.get(wanted)):
            if name and _number(entry.get(name)) is not None:
                return _number(entry[name]), wanted
    value = _number(entry.get("main_score"))
    if value is None:
        return None, None
    if wanted:
        return value, wanted
    twins = {k: bounds for k, v in entry.items() if k != "main_score" and _number(v) == value and (bounds := metric_range(k))}
    if not twins:
        return value, None
    # several metrics may hold the same value; the widest range among them rejects nothing valid
    return value, max(twins, key=lambda k: twins[k][1] - twins[k][0])


def check_value(value: float, metric: str | None, scale: float = 1.0) -> str | None:
    """Why a main score cannot enter a board, or None when it can."""
    if math.isnan(value):
        return "main score is NaN; counted as missing"
    if math.isinf(value):
        return f"main score is {value}; not a finite number"
    bounds = metric_range(metric)
    if bounds and not bounds[0] - _SLACK <= value <= bounds[1] + _SLACK:
        shown = f"{value * scale:g} / maeb.main_score_scale {scale:g} = {value:g}" if scale != 1.0 else f"{value:g}"
        hint = (
            " (judge scores need maeb.main_score_scale)" if metric and metric.startswith("judge_score") and scale == 1.0 else ""
        )
        return f"main score {shown} is outside [{bounds[0]:g}, {bounds[1]:g}], the range of {metric}{hint}"
    return None


def check_band(band, metric: str | None, what: str = "stability band") -> str | None:
    """Why a recorded band (how far rounding moves a score: a result's stability band, an evaluator
    spread) cannot be used, or None when it can. One rule for the leaderboard's uncertainty and for
    `lite --check`: a band must be a finite number of at least 0 (uniform(-b, b) needs b >= 0; NaN
    allows nothing and compares as allowing everything) and no wider than the metric's range (a
    band of 1e9 on an accuracy would pass or blur any score)."""
    if isinstance(band, bool) or not isinstance(band, (int, float)):
        return f"{what} is {band!r}, not a number"
    if not math.isfinite(band):
        return f"{what} is {band}, not a finite number"
    if band < 0:
        return f"{what} {band:g} is negative"
    bounds = metric_range(metric)
    if bounds and band > bounds[1] - bounds[0]:
        return f"{what} {band:g} is wider than the range of {metric} [{bounds[0]:g}, {bounds[1]:g}]"
    return None


# -- what a result records about its task ----------------------------------------------------
def mteb_type(kind: str) -> str:
    """mteb's type name of maeb's short type name (unknown names are returned as they are)."""
    return MTEB_TYPES.get(kind, kind)


def _strings(value) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return tuple(value)
    return None


def task_record(extra: dict, task: str, where: str, notes: list[str]) -> TaskInfo | None:
    """TaskInfo from a result's maeb section (maeb.task, else the older maeb.task_type). Fields of
    the wrong shape are noted and left out; the scores do not depend on them."""
    raw = extra.get("task")
    if raw is None:
        kind = extra.get("task_type")
        return TaskInfo(task, mteb_type(kind)) if isinstance(kind, str) and kind else None
    if not isinstance(raw, dict):
        notes.append(f"{where}: maeb.task is not an object; its record is ignored")
        return None
    if raw.get("name") not in (None, task):
        notes.append(f"{where}: maeb.task.name {raw.get('name')!r} is not the file's task {task!r}; its record is ignored")
        return None
    bad = []
    kind = raw.get("type", extra.get("task_type"))
    if kind is not None and not (isinstance(kind, str) and kind):
        bad.append("type")
        kind = None
    category = raw.get("category")
    if category is not None and category not in CATEGORIES:
        bad.append("category")
        category = None
    lists = {}
    for key in ("domains", "eval_splits"):
        lists[key] = _strings(raw.get(key, []))
        if lists[key] is None:
            bad.append(key)
    languages = raw.get("languages", [])
    if isinstance(languages, dict):  # multilingual tasks record languages per subset
        languages = [x for v in languages.values() if isinstance(v, list) for x in v]
    langs = _strings(languages)
    if langs is None:
        bad.append("languages")
    lower = raw.get("lower_is_better")
    if lower is not None and not isinstance(lower, bool):
        bad.append("lower_is_better")
        lower = None
    texts = {}
    for key in ("main_score", "family"):
        texts[key] = raw.get(key)
        if texts[key] is not None and not isinstance(texts[key], str):
            bad.append(key)
            texts[key] = None
    if bad:
        notes.append(f"{where}: maeb.task field(s) {', '.join(bad)} malformed; left out")
    return TaskInfo(
        task,
        mteb_type(kind) if kind else "Unknown",
        category,
        lists["domains"] or (),
        tuple(dict.fromkeys(langs or ())),
        texts["family"],
        texts["main_score"],
        lists["eval_splits"] or (),
        recorded_lower=lower,
    )


# -- reading ---------------------------------------------------------------------------------
Lookup = Callable[[str], "TaskInfo | None"]


@dataclass
class _Group:
    """Accepted entries of one task from one file (or one CSV), before the split check."""

    source: str
    task: str
    splits: tuple[str, ...]  # the task's evaluation splits as known for this file; () = unknown
    scores: list[Score]
    what: str = "file"  # how the report names a dropped split: a file's entries or a CSV's rows
    metric: str | None = None  # the task's main metric where known


def _model_name(folder: Path) -> str:
    meta = folder / "model_meta.json"
    for candidate in (meta, folder.parent / "model_meta.json"):
        try:
            name = json.loads(candidate.read_text(encoding="utf-8")).get("name")
            if name:
                return name
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
    return folder.parent.name.replace("__", "/", 1)


def is_experiment(source: str) -> bool:
    """Whether a score's file lies in mteb's experiments folder ({model}/{revision}/experiments/{name}/)."""
    return Path(source).parent.parent.name == "experiments"


def model_and_revision(path: Path) -> tuple[str, str]:
    """Model and revision of a result file in mteb's layout. A run with non-default settings lies
    in mteb's experiments folder ({model}/{revision}/experiments/{name}/) and is its own row,
    named "model [name]"."""
    folder = path.parent
    if folder.parent.name == "experiments":
        return f"{_model_name(folder)} [{folder.name}]", folder.parent.parent.name
    return _model_name(folder), folder.name


def _evaluation_time(value, where: str, problems: list[str]) -> float | None:
    if value is None:
        return None
    number = _number(value)
    if number is None or not math.isfinite(number) or number < 0:
        problems.append(f"{where}: evaluation_time {value!r} is not a non-negative number; left out")
        return None
    return number


def _is_board_output(data) -> bool:
    # maeb's own leaderboard.json sits beside the results it ranks; it is not a TaskResult
    return isinstance(data, dict) and "maeb_version" in data and "models" in data and "scores" not in data


def _read_file(path: Path, lookup: Lookup, wanted, out: Results, recorded: dict) -> _Group | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        out.problems.append(f"{path}: not readable JSON ({exc})")
        return None
    if _is_board_output(data):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        out.problems.append(f"{path}: no 'scores' mapping; not a TaskResult")
        return None
    task = data.get("task_name") or path.stem
    if not isinstance(task, str):
        out.problems.append(f"{path}: task_name {task!r} is not a string")
        return None
    if wanted is not None and task not in wanted:
        return None
    out.seen.add(task)
    extra: dict = data["maeb"] if isinstance(data.get("maeb"), dict) else {}
    record = task_record(extra, task, str(path), out.notes)
    known = lookup(task)
    if record is not None:
        first = recorded.get(task)
        if first is None or (first[1].type == "Unknown" and record.type != "Unknown"):
            recorded[task] = first = (str(path), record)  # the first record that names a type
        if known is not None and known.type != "Unknown" and record.type not in ("Unknown", known.type):
            out.notes.append(f"{path}: records type {record.type} for {task}; the catalog says {known.type}, which is used")
        elif known is None and record.type not in ("Unknown", first[1].type):
            out.notes.append(f"{path}: records type {record.type} for {task}; {first[0]} records {first[1].type}, which is used")
    info = known or record
    metric = info.main_score if info else None
    splits = (known.eval_splits if known else ()) or (record.eval_splits if record else ())
    scale = 1.0
    if extra.get("main_score_scale") is not None:  # judge scores (1-10) enter tables as score / 10
        scale = _number(extra["main_score_scale"]) or 0.0
        if not math.isfinite(scale) or scale <= 0:
            out.problems.append(f"{path}: maeb.main_score_scale {extra['main_score_scale']!r} is not a positive number")
            return None
    model, revision = model_and_revision(path)
    time = _evaluation_time(data.get("evaluation_time"), str(path), out.problems)
    leak = (extra.get("data") or {}).get("train_eval_shared_clips") if isinstance(extra.get("data"), dict) else None
    leak = leak if isinstance(leak, int) and not isinstance(leak, bool) and leak > 0 else 0
    tie_records: dict = extra["ties"] if isinstance(extra.get("ties"), dict) else {}
    # maeb.stability's "fragile" (maeb.run.stability): absent in older files, which count as not fragile
    fragile = isinstance(extra.get("stability"), dict) and extra["stability"].get("fragile") is True
    scores, seen = [], set()
    for split, entries in data["scores"].items():
        if not isinstance(entries, list):
            out.problems.append(f"{path}: scores[{split!r}] is not a list")
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                out.problems.append(f"{path}: an entry of split {split!r} is not an object")
                continue
            subset = str(entry.get("hf_subset", "default"))
            where = f"{path}: split {split!r} subset {subset!r}"
            value, name = _pick_main(entry, metric)
            if value is None:
                out.problems.append(f"{where} has no main score")
                continue
            value = value / scale
            reason = check_value(value, name, scale)
            if reason:
                out.problems.append(f"{where} {reason}")
                continue
            if (split, subset) in seen:
                out.problems.append(f"{where} appears twice; the first entry is used")
                continue
            seen.add((split, subset))
            scores.append(
                Score(
                    model,
                    revision,
                    task,
                    split,
                    subset,
                    value,
                    time,
                    data.get("mteb_version"),
                    str(data.get("date") or ""),
                    str(path),
                    leak,
                    _tie_dependent(tie_records, split, subset),
                    fragile,
                )
            )
    return _Group(str(path), task, tuple(splits), scores)


def _tie_dependent(records: dict, split: str, subset: str) -> bool:
    """Whether maeb.ties (split -> subset -> record) marks this split and subset's main score as
    depending on the order of tied items (maeb.metrics.ties.record)."""
    record = (records.get(split) or {}).get(subset) if isinstance(records.get(split), dict) else None
    return isinstance(record, dict) and record.get("depends_on_tie_order") is True


def _read_csv(path: Path, lookup: Lookup, wanted, out: Results) -> list[_Group]:
    groups: dict[str, _Group] = {}
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = {"model", "task", "main_score"} - set(reader.fieldnames or [])
            if missing:
                out.problems.append(f"{path}: missing columns {sorted(missing)}")
                return []
            for number, row in enumerate(reader, start=2):
                task = row["task"]
                if wanted is not None and task not in wanted:
                    continue
                out.seen.add(task)
                where = f"{path}:{number}"
                try:
                    value = float(row["main_score"])
                except (TypeError, ValueError):
                    out.problems.append(f"{where}: main_score {row.get('main_score')!r} is not a number")
                    continue
                if task not in groups:
                    known = lookup(task)
                    splits, metric = (known.eval_splits, known.main_score) if known else ((), None)
                    groups[task] = _Group(str(path), task, splits, [], "rows", metric)
                reason = check_value(value, groups[task].metric)
                if reason:
                    out.problems.append(f"{where}: {reason}")
                    continue
                time = row.get("evaluation_time")
                try:
                    seconds = _evaluation_time(float(time) if time not in (None, "", "nan") else None, where, out.problems)
                except ValueError:
                    out.problems.append(f"{where}: evaluation_time {time!r} is not a number; left out")
                    seconds = None
                groups[task].scores.append(
                    Score(
                        row["model"].replace("__", "/", 1),
                        row.get("revision") or "",
                        task,
                        row.get("split") or DEFAULT_SPLIT,
                        row.get("subset") or "default",
                        value,
                        seconds,
                        row.get("mteb_version") or None,
                        "",
                        where,
                    )
                )
    except OSError as exc:
        out.problems.append(f"{path}: {exc.strerror}")
    return list(groups.values())


def _keep_eval_splits(groups: list[_Group], out: Results) -> None:
    """Drop entries of splits the task is not evaluated on, one report line per file and task."""
    recorded: dict[str, tuple[str, ...]] = {}
    seen: dict[str, set[str]] = defaultdict(set)
    for g in groups:
        if g.splits:
            recorded.setdefault(g.task, g.splits)
        seen[g.task].update(s.split for s in g.scores)
    for g in groups:
        splits = g.splits or recorded.get(g.task)
        assumed = ""
        if not splits:
            if DEFAULT_SPLIT not in seen[g.task]:
                out.scores += g.scores  # nothing says which splits count, and no file has the default
                continue
            splits, assumed = (DEFAULT_SPLIT,), " (no result records its evaluation splits; mteb's default assumed)"
        kept = [s for s in g.scores if s.split in splits]
        dropped = sorted({s.split for s in g.scores} - set(splits))
        out.scores += kept
        if not dropped:
            continue
        names, used = ", ".join(map(repr, dropped)), ", ".join(map(repr, splits))
        if g.what == "rows":
            count = len(g.scores) - len(kept)
            out.problems.append(
                f"{g.source}: {count} row{'s' if count != 1 else ''} of {g.task} in split {names} left out; {g.task} is evaluated on {used}{assumed}"
            )
        elif kept:
            out.problems.append(f"{g.source}: split {names} left out; {g.task} is evaluated on {used}{assumed}")
        else:
            out.problems.append(
                f"{g.source}: holds only split {names}, but {g.task} is evaluated on {used}{assumed}; file left out"
            )


def read_results(paths: Iterable[Path], lookup: Lookup | None = None, tasks: Iterable[str] | None = None) -> Results:
    """Every valid record under the given folders and CSV files. `lookup(task)` gives what the
    catalog knows of a task (main score, eval splits, type) or None; `tasks` limits the reading to
    those tasks (files of other tasks are passed over without a report)."""
    lookup = lookup or (lambda name: None)
    wanted = None if tasks is None else set(tasks)
    out = Results()
    groups: list[_Group | None] = []  # None: a file that was rejected
    recorded: dict[str, tuple[str, TaskInfo]] = {}
    for path in map(Path, paths):
        if path.is_file() and path.suffix == ".csv":
            groups += _read_csv(path, lookup, wanted, out)
        elif path.is_file() and path.suffix == ".json":
            groups.append(_read_file(path, lookup, wanted, out, recorded))
        elif path.is_dir():
            for file in sorted(path.rglob("*.json")):
                if file.name != "model_meta.json" and not file.name.startswith("."):
                    groups.append(_read_file(file, lookup, wanted, out, recorded))
        else:
            out.problems.append(f"{path}: no such results folder or CSV file")
    _keep_eval_splits([g for g in groups if g is not None], out)
    _keep_subsets(out, lookup)
    out.tasks = {task: info for task, (_, info) in recorded.items()}
    return out


def _keep_subsets(out: Results, lookup: Lookup) -> None:
    """Drop entries of subsets the task does not have (rule in the module docstring), one report
    line per file or CSV row and task."""
    by_task: dict[str, list[Score]] = defaultdict(list)
    for s in out.scores:
        by_task[s.task].append(s)
    dropped: list[Score] = []
    for task, scores in by_task.items():
        known = lookup(task)
        expected = set(known.subsets) if known and known.subsets else None
        how = "the task's spec names"
        if expected is None:
            holders: dict[str, set[str]] = defaultdict(set)
            for s in scores:
                holders[s.subset].add(s.model)
            n_models = len({s.model for s in scores})
            expected = {sub for sub, models in holders.items() if 2 * len(models) > n_models} or set(holders)
            how = f"more than half of the {n_models} models have"
        stray: dict[str, set[str]] = defaultdict(set)
        for s in scores:
            if s.subset not in expected:
                stray[s.source].add(s.subset)
                dropped.append(s)
        for source, subsets in stray.items():
            names = ", ".join(map(repr, sorted(subsets)))
            out.problems.append(
                f"{source}: subset {names} left out; {task}'s subsets are {', '.join(map(repr, sorted(expected)))} ({how})"
            )
    if dropped:
        gone = {id(s) for s in dropped}
        out.scores = [s for s in out.scores if id(s) not in gone]


def read_scores(paths: Iterable[Path], main_scores: Mapping[str, str] | None = None) -> tuple[list[Score], list[str]]:
    """All records under the given folders and CSV files, plus a list of problems found;
    `main_scores` names the main metric of tasks (the rest use each entry's main_score)."""
    main_scores = main_scores or {}
    res = read_results(paths, lambda name: TaskInfo(name, main_score=main_scores[name]) if name in main_scores else None)
    return res.scores, res.problems


def parse_version(version: str | None):
    """A result's mteb_version as mteb's leaderboard parses it (packaging's Version), or None: a
    range ("2.12.0-2.15.4", a merged file) or text ("mteb version not available") counts as none."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) if isinstance(version, str) else None
    except InvalidVersion:
        return None


def _revision_priority(item, main_revision: str | None) -> tuple:
    """mteb's join_revisions order: the registered revision first, then files whose version parses
    (maeb writes "2.26.24+maeb.X", which does), then a real revision; then the newest version (a
    missing one last); then, where mteb keeps its loading order, the newest file."""
    from packaging.version import Version

    revision, rows = item
    versions = [v for v in (parse_version(r.mteb_version) for r in rows) if v is not None]
    return (
        revision == main_revision,
        bool(versions),
        revision not in NO_REVISION,
        max(versions, default=Version("0")),
        max(r.date or "" for r in rows),
    )


def choose_revisions(
    scores: list[Score], pinned: dict[str, str] | None = None, main: dict[str, str] | None = None
) -> list[Score]:
    """One revision per (model, task), as mteb's leaderboard joins revisions: a pinned revision,
    else the model's registered revision; then results that record an mteb version, then a real
    revision, then the newest mteb version, then the newest file."""
    pinned, main = pinned or {}, main or {}
    groups: dict[tuple[str, str], dict[str, list[Score]]] = {}
    for s in scores:
        groups.setdefault((s.model, s.task), {}).setdefault(s.revision, []).append(s)
    kept: list[Score] = []
    for (model, _), by_revision in groups.items():
        if model in pinned:
            kept += by_revision.get(pinned[model], [])
        else:
            kept += max(by_revision.items(), key=lambda item: _revision_priority(item, main.get(model)))[1]
    return kept
