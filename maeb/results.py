"""TaskResult files in mteb's layout: results/{org}__{model}/{revision}/{Task}.json plus
model_meta.json, written atomically so an interrupted run never leaves a half file."""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import tempfile
from pathlib import Path

from . import __version__

# the mteb release whose protocols maeb reproduces; mteb's loaders read this field
MTEB_PROTOCOL_VERSION = "2.26.24"


def rounded(value, places: int = 6):
    if isinstance(value, float):
        return value if math.isnan(value) or math.isinf(value) else round(value, places)
    if isinstance(value, dict):
        return {k: rounded(v, places) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, places) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return rounded(value.item(), places)
    return value


def write_json_atomic(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2, ensure_ascii=False, allow_nan=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def model_dir(root: Path, meta) -> Path:
    revision = str(meta.revision).replace("/", "_")
    return Path(root) / meta.folder / revision


def result_path(root: Path, meta, task_name: str) -> Path:
    return model_dir(root, meta) / f"{task_name}.json"


def write_model_meta(root: Path, meta) -> Path:
    path = model_dir(root, meta) / "model_meta.json"
    write_json_atomic(path, meta.to_mteb())
    return path


def task_result(spec, scores: dict[str, list[dict]], evaluation_time: float, run_info: dict) -> dict:
    """scores: split -> one entry per subset, each already holding main_score, hf_subset, languages."""
    return {
        "dataset_revision": spec.revision,
        "task_name": spec.name,
        "mteb_version": MTEB_PROTOCOL_VERSION,
        "scores": rounded(scores),
        "evaluation_time": evaluation_time,
        "kg_co2_emissions": None,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "maeb": {"version": __version__, **rounded(run_info, 6)},
    }


def read_result(path: Path) -> dict | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError):
        return None
