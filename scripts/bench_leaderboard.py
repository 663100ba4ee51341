"""Leaderboard and selection speed on synthetic results.

  python scripts/bench_leaderboard.py [--models 100] [--tasks 120]

Builds a results folder in mteb's layout (one JSON per model and task; two subsets each), then
times reading + aggregation + all four output formats, and the task selector with a sweep of
seven thresholds over MAEB(extended)."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from maeb.analysis.leaderboard import aggregate, task_infos
from maeb.analysis.report import render
from maeb.analysis.selection import score_matrix, sweep
from maeb.results.read import choose_revisions, read_scores
from maeb.spec import catalog


def write_results(root: Path, n_models: int, tasks: list[str], rng) -> None:
    quality = rng.normal(size=n_models)
    for m in range(n_models):
        folder = root / f"org__model{m}" / "rev1"
        folder.mkdir(parents=True)
        for task in tasks:
            value = float(1 / (1 + np.exp(-(quality[m] + rng.normal(scale=0.7)))))
            entries = [
                {"main_score": value + d, "accuracy": value + d, "hf_subset": sub, "languages": []}
                for sub, d in (("a", 0.01), ("b", -0.01))
            ]
            payload = {
                "task_name": task,
                "mteb_version": "2.26.24",
                "evaluation_time": float(rng.uniform(10, 1000)),
                "scores": {"test": entries},
            }
            (folder / f"{task}.json").write_text(json.dumps(payload))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=120)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    plus = list(catalog.find_benchmark("MAEB+").tasks)
    tasks = (plus + [f"Extra{i}" for i in range(max(0, args.tasks - len(plus)))])[: args.tasks]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_results(root, args.models, tasks, rng)
        infos = task_infos(tasks)  # catalog lookups, as the command does once
        t0 = time.perf_counter()
        scores, problems = read_scores([root])
        scores = choose_revisions(scores)
        t1 = time.perf_counter()
        board = aggregate(scores, tasks, infos=infos)
        outputs = {fmt: render(board, fmt) for fmt in ("csv", "md", "json", "html")}
        t2 = time.perf_counter()
        pool = list(catalog.find_benchmark("MAEB(extended)").tasks)
        matrix = score_matrix(scores, pool)
        figures = sweep(matrix, task_infos(pool), [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9])
        t3 = time.perf_counter()
    print(
        json.dumps(
            {
                "models": args.models,
                "tasks": len(tasks),
                "result_files": args.models * len(tasks),
                "read_seconds": round(t1 - t0, 3),
                "aggregate_and_render_seconds": round(t2 - t1, 3),
                "leaderboard_total_seconds": round(t2 - t0, 3),
                "html_kb": round(len(outputs["html"]) / 1024),
                "selection_sweep_7_thresholds_seconds": round(t3 - t2, 3),
                "selected_at_0.8": next(f["n_tasks_selected"] for f in figures if f["threshold"] == 0.8),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
