"""Reading published and local results: mteb's folder layout ({org}__{model}/{revision}/{Task}.json),
maeb's own results (the same layout), and the flat main_scores.csv form. One record per (model,
revision, task, split, subset). A malformed file is reported by path and skipped."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# metric names older mteb releases wrote; the key is today's name
OLD_NAMES = {f"hit_rate_at_{k}": f"cv_recall_at_{k}" for k in (1, 3, 5, 10, 20, 100, 1000)}
NO_REVISION = {"", "no_revision_available", "external", "None", "none"}


@dataclass(frozen=True)
class Score:
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


def _version_key(version: str | None) -> tuple:
    parts = []
    for piece in str(version or "").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def main_metric(task: str, entry: dict, wanted: str | None) -> float | None:
    """The task's main score in one result entry: the catalog's metric (or its old name) if the
    entry has it, else the entry's own main_score."""
    if wanted:
        for name in (wanted, OLD_NAMES.get(wanted)):
            if name and isinstance(entry.get(name), (int, float)):
                return float(entry[name])
    value = entry.get("main_score")
    return float(value) if isinstance(value, (int, float)) else None


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


def read_result_file(path: Path, main_scores: dict[str, str], problems: list[str]) -> list[Score]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: not readable JSON ({exc})")
        return []
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        problems.append(f"{path}: no 'scores' mapping; not a TaskResult")
        return []
    task = data.get("task_name") or path.stem
    model, revision = _model_name(path.parent), path.parent.name
    extra = data.get("maeb") if isinstance(data.get("maeb"), dict) else {}
    scale = float(extra.get("main_score_scale") or 1.0)  # judge scores (1-10) enter tables as score / 10
    out = []
    for split, entries in data["scores"].items():
        if not isinstance(entries, list):
            problems.append(f"{path}: scores[{split!r}] is not a list")
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                problems.append(f"{path}: an entry of split {split!r} is not an object")
                continue
            value = main_metric(task, entry, main_scores.get(task))
            value = value / scale if value is not None else None
            if value is None:
                problems.append(f"{path}: split {split!r} subset {entry.get('hf_subset')!r} has no main score")
                continue
            if math.isnan(value):
                problems.append(
                    f"{path}: split {split!r} subset {entry.get('hf_subset')!r} main score is NaN; counted as missing"
                )
                continue
            out.append(
                Score(
                    model,
                    revision,
                    task,
                    split,
                    str(entry.get("hf_subset", "default")),
                    value,
                    data.get("evaluation_time"),
                    data.get("mteb_version"),
                    str(data.get("date") or ""),
                    str(path),
                )
            )
    return out


def read_csv(path: Path, problems: list[str]) -> list[Score]:
    out = []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = {"model", "task", "main_score"} - set(reader.fieldnames or [])
            if missing:
                problems.append(f"{path}: missing columns {sorted(missing)}")
                return []
            for number, row in enumerate(reader, start=2):
                try:
                    value = float(row["main_score"])
                except (TypeError, ValueError):
                    problems.append(f"{path}:{number}: main_score {row.get('main_score')!r} is not a number")
                    continue
                if math.isnan(value):
                    problems.append(f"{path}:{number}: main score is NaN; counted as missing")
                    continue
                time = row.get("evaluation_time")
                out.append(
                    Score(
                        row["model"].replace("__", "/", 1),
                        row.get("revision") or "",
                        row["task"],
                        row.get("split") or "test",
                        row.get("subset") or "default",
                        value,
                        float(time) if time not in (None, "", "nan") else None,
                        row.get("mteb_version") or None,
                        "",
                        f"{path}:{number}",
                    )
                )
    except OSError as exc:
        problems.append(f"{path}: {exc.strerror}")
    return out


def read_scores(paths: Iterable[Path], main_scores: dict[str, str] | None = None) -> tuple[list[Score], list[str]]:
    """All records under the given folders and CSV files, plus a list of problems found."""
    main_scores = main_scores or {}
    scores: list[Score] = []
    problems: list[str] = []
    for path in map(Path, paths):
        if path.is_file() and path.suffix == ".csv":
            scores += read_csv(path, problems)
        elif path.is_file() and path.suffix == ".json":
            scores += read_result_file(path, main_scores, problems)
        elif path.is_dir():
            for file in sorted(path.rglob("*.json")):
                if file.name != "model_meta.json" and not file.name.startswith("."):
                    scores += read_result_file(file, main_scores, problems)
        else:
            problems.append(f"{path}: no such results folder or CSV file")
    return scores, problems


def _revision_priority(item, main_revision: str | None) -> tuple:
    revision, rows = item
    return (
        revision == main_revision,
        any(r.mteb_version for r in rows),
        revision not in NO_REVISION,
        max(_version_key(r.mteb_version) for r in rows),
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
