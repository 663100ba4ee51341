"""Score against compute: per model and task, the main score and the seconds the run spent
embedding and evaluating (the score-vs-compute view draws from `score_and_seconds`).

Seconds are read from each result's maeb record: embed_seconds = maeb.embedding.embed_wall_seconds
(wall time inside the embedder: decoding, resampling, forward passes, caching); eval_seconds =
maeb.embedding.evaluator_seconds where written, else evaluation_time minus embed_seconds (loading
the data, fitting the probes, scoring). A task whose vectors came from the cache embedded little
in that run: `cached` says so, and its embed_seconds is not the model's cost."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def _payloads(results: Iterable) -> list[tuple[str, dict, str]]:
    """(model, payload, where) of TaskResults, payload dicts, result files or folders of them."""
    from ..results.read import model_and_revision

    out = []
    for item in results:
        if isinstance(item, (str, Path)):
            path = Path(item)
            if not path.is_dir() and path.suffix != ".json":
                continue  # a published-scores CSV (leaderboard --results) records no seconds
            files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
            for f in files:
                if f.name == "model_meta.json":
                    continue
                try:
                    data = json.loads(f.read_text(encoding="utf-8"))
                except (OSError, json.JSONDecodeError) as exc:
                    if path.is_dir():
                        continue  # a folder's unreadable file is the board reader's problem to name, not the seconds'
                    raise ValueError(f"{f}: not a readable result file ({exc})") from exc
                if isinstance(data, dict) and "scores" in data and "task_name" in data:
                    name = ((data.get("maeb") or {}).get("identity") or {}).get("encoder", {}).get("name")
                    out.append((name or model_and_revision(f)[0], data, str(f)))
        elif isinstance(item, dict):
            name = ((item.get("maeb") or {}).get("identity") or {}).get("encoder", {}).get("name", "")
            out.append((name, item, str(item.get("task_name"))))
        else:  # maeb.run.runner.TaskResult
            out.append((item.model, item.payload, str(getattr(item, "path", None) or item.task)))
    return out


def _main_score(payload: dict, where: str) -> float:
    """The mean main score over the task's evaluation splits and subsets (as mteb's get_score)."""
    splits = ((payload.get("maeb") or {}).get("task") or {}).get("eval_splits") or list(payload["scores"])
    entries = [e for s in splits if s in payload["scores"] for e in payload["scores"][s]]
    if not entries:
        raise ValueError(f"{where}: no score entry for the task's evaluation splits")
    return float(sum(e["main_score"] for e in entries) / len(entries))


def score_and_seconds(results: Iterable) -> list[dict]:
    """Per model and task: {model, task, score, embed_seconds, eval_seconds, cached}. `results`:
    TaskResults (maeb.run.runner), result payloads, or paths of result files or folders. A seconds
    value the result does not record is None (results written before maeb recorded it)."""
    rows = []
    for model, payload, where in _payloads(results):
        embedding = (payload.get("maeb") or {}).get("embedding") or {}
        embed = embedding.get("embed_wall_seconds")
        evaluator = embedding.get("evaluator_seconds")
        total = payload.get("evaluation_time")
        if evaluator is None and total is not None and embed is not None:
            evaluator = max(0.0, float(total) - float(embed))
        rows.append(
            {
                "model": model,
                "task": payload["task_name"],
                "score": _main_score(payload, where),
                "embed_seconds": None if embed is None else float(embed),
                "eval_seconds": None if evaluator is None else round(float(evaluator), 3),
                "cached": bool(embedding.get("clips_cached") or embedding.get("texts_cached")),
            }
        )
    return sorted(rows, key=lambda r: (r["model"], r["task"]))
