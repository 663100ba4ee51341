"""Speed of maeb against mteb 2.26.24 on real recordings and real-size random checkpoints.

For each (model, task, repeat) both sides run in a fresh process on the same hub-layout folder and
the same saved checkpoint: mteb's own code (`mteb.get_task`, its ModelMeta's `load_model`,
`mteb.evaluate`, through scripts/parity.py's MtebSide) in this Python (.venv-parity, which has the
torchaudio and torchcodec mteb needs), and `python -m maeb run` in maeb's .venv with no embeddings
in its cache. Which side runs first alternates per task and repeat, so load on this shared
machine falls on both alike. Wall time is the whole process (imports and model load included);
each side's in-process evaluation time is reported beside it. Every metric of the two result
files is compared (tolerance 1e-6, scripts/parity.py's comparison).

    .venv-parity/bin/python scripts/bench_vs_mteb.py --quick        # about 5 minutes on 2 cores
    .venv-parity/bin/python scripts/bench_vs_mteb.py                # full sizes: hours on 2 cores
    .venv-parity/bin/python scripts/bench_vs_mteb.py --models wav2vec2-base --tasks FSDD --repeats 3

Data (from ../shared/data) and checkpoints are built once under .bench/ (git-ignored). Both sides
read the datasets through caches prepared before timing starts (as after a download: mteb's
datasets cache, maeb's local-datasets), so the parquet-to-arrow conversion counts for neither side.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_data
import bench_models
import parity

ROOT = parity.ROOT
QUICK_TASKS = ["FSDD", "CREMADPairClassification"]
FULL_TASKS = list(bench_data.TASKS)


def mteb_worker(job: dict) -> None:
    """One mteb side: import, load, evaluate one task, write the result and what it measured."""
    side = parity.MtebSide()
    task = bench_data.task_data(job["task"])
    if job.get("prepare"):  # fill the datasets cache only
        side.task(task, Path(job["data"])).load_data()
        return
    family, _ = bench_models.FAMILIES[job["family"]]
    t0 = time.perf_counter()
    model = side.load(family, Path(job["checkpoint"]))
    load_s = time.perf_counter() - t0
    seconds, vectors = side.run(model, task, Path(job["data"]), Path(job["out"]))
    stats = {"load_s": load_s, "evaluate_s": seconds, "clips": sum(len(v) for v in vectors.values()), "unique": len(vectors)}
    Path(job["stats"]).write_text(json.dumps(stats))


def run_mteb(job: dict, work: Path, env: dict, log: Path) -> float:
    """mteb's side in a fresh process; returns its wall seconds (nan if it failed)."""
    spec = work / f"job-{time.monotonic_ns()}.json"
    spec.write_text(json.dumps(job))
    start = time.perf_counter()
    with open(log, "a", encoding="utf-8") as fh:
        rc = subprocess.run(
            [sys.executable, __file__, "--mteb-worker", str(spec)], cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT
        ).returncode
    wall = time.perf_counter() - start
    return wall if rc == 0 else float("nan")


def one_pair(key, task, folders, work, env, protocol, order, maeb_python) -> dict:
    """Both sides once on (model, task), in the given order."""
    family, _ = bench_models.FAMILIES[key]
    cell = work / key / task / f"r{time.monotonic_ns()}"
    cell.mkdir(parents=True)
    entry = parity.write_model_entry(family, folders["model"], cell / "entry.toml")
    spec = parity.write_task_spec(bench_data.task_data(task), folders["data"], cell / f"{task}.toml")
    job = {
        "family": key,
        "task": task,
        "checkpoint": str(folders["model"]),
        "data": str(folders["data"]),
        "out": str(cell / "mteb.json"),
        "stats": str(cell / "mteb-stats.json"),
    }
    out = {"first": order[0]}
    for side in order:
        if side == "mteb":
            out["mteb_wall"] = run_mteb(job, cell, env, cell / "mteb.log")
        else:
            bench_data.fresh_embeddings(folders["cache"])
            errors, wall = parity.run_maeb(
                maeb_python, entry, {task: spec}, cell / "maeb", folders["cache"], env, protocol, cell / "maeb.log"
            )
            out["maeb_wall"] = wall if not errors else float("nan")
            out["maeb_error"] = "; ".join(errors.values())
    mres, bres = Path(job["out"]), parity.find_result(cell / "maeb", task)
    if mres.exists() and bres is not None:
        a, b = json.loads(mres.read_text()), json.loads(bres.read_text())
        out["diffs"] = [(d.path, d.mteb, d.maeb) for d in parity.compare_scores(a["scores"], b["scores"])]
        out["maeb_eval"] = b.get("evaluation_time")
        out["maeb_embedded"] = ((b.get("maeb") or {}).get("embedding") or {}).get("clips_embedded")
        out["maeb_forward"] = ((b.get("maeb") or {}).get("embedding") or {}).get("forward_seconds")
        out.update(json.loads(Path(job["stats"]).read_text()))
    bench_data.fresh_embeddings(folders["cache"])
    return out


def summarise(key: str, task: str, runs: list[dict]) -> dict:
    ok = [r for r in runs if "diffs" in r and r["mteb_wall"] == r["mteb_wall"] and r["maeb_wall"] == r["maeb_wall"]]
    med = lambda k: statistics.median(r[k] for r in ok) if ok else float("nan")  # noqa: E731
    return {
        "model": key,
        "task": task,
        "repeats": len(runs),
        "ok": len(ok),
        "clips": ok[0]["clips"] if ok else None,
        "unique": ok[0]["unique"] if ok else None,
        "maeb_embedded": ok[0]["maeb_embedded"] if ok else None,
        "mteb_s": med("mteb_wall"),
        "maeb_s": med("maeb_wall"),
        # paired: each repeat's own ratio, then the median
        "ratio": statistics.median(r["mteb_wall"] / r["maeb_wall"] for r in ok) if ok else float("nan"),
        "mteb_eval_s": med("evaluate_s"),
        "maeb_eval_s": med("maeb_eval"),
        "mteb_load_s": med("load_s"),
        "equal": bool(ok) and all(not r["diffs"] for r in ok),
        "diffs": [d for r in ok for d in r["diffs"]][:5],
        "errors": [r.get("maeb_error") for r in runs if r.get("maeb_error")],
        "runs": runs,
    }


def print_table(rows: list[dict], total_s: float, out=sys.stdout) -> None:
    w = out.write
    w(f"\n{'model':<17} {'task':<25} {'clips':>6} {'unique':>6} {'maeb emb':>8} {'mteb s':>8} {'maeb s':>8} {'ratio':>6} ")
    w(f"{'mteb eval':>9} {'maeb eval':>9} {'mteb load':>9}  equal\n")
    for r in rows:
        equal = "yes" if r["equal"] else ("no" if r["ok"] else "FAILED")
        w(f"{r['model']:<17} {r['task']:<25} {r['clips'] or '-':>6} {r['unique'] or '-':>6} {r['maeb_embedded'] or '-':>8} ")
        w(f"{r['mteb_s']:8.1f} {r['maeb_s']:8.1f} {r['ratio']:6.2f} {r['mteb_eval_s']:9.1f} {r['maeb_eval_s']:9.1f} ")
        w(f"{r['mteb_load_s']:9.1f}  {equal} ({r['ok']}/{r['repeats']} runs)\n")
        for path, a, b in r["diffs"]:
            w(f"    differs: {path}: mteb {a!r} maeb {b!r}\n")
        for e in r["errors"][:1]:
            w(f"    maeb error: {e}\n")
    for key in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == key and r["ok"]]
        m, b = sum(r["mteb_s"] for r in mine), sum(r["maeb_s"] for r in mine)
        w(f"{key:<17} {'all tasks':<25} {'':>6} {'':>6} {'':>8} {m:8.1f} {b:8.1f} {m / b if b else float('nan'):6.2f}\n")
    w("clips: clips mteb embedded (a clip in two pairs twice); unique: distinct clips among them; maeb emb: clips maeb\n")
    w("embedded (a family batched in mteb's call order embeds a clip once per distinct batch); s: wall seconds of the\n")
    w("whole process (median over repeats); ratio: mteb/maeb per repeat, median; eval: in-process evaluation seconds\n")
    w("(mteb: mteb.evaluate; maeb: the result's evaluation_time); mteb load: its load_model seconds\n")
    w(f"total {total_s:.0f} s\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", choices=list(bench_models.FAMILIES), default=list(bench_models.FAMILIES))
    p.add_argument("--tasks", nargs="+", choices=FULL_TASKS, help=f"default {FULL_TASKS}; --quick: {QUICK_TASKS}")
    p.add_argument("--repeats", type=int, help="runs of each side per task (default 2; --quick: 1)")
    p.add_argument("--quick", action="store_true", help="small task sizes, two tasks, one repeat")
    p.add_argument("--build-dir", default=str(ROOT / ".bench"))
    p.add_argument("--shared-data", default=str(bench_data.DEFAULT_SHARED))
    p.add_argument("--maeb-python", default=str(ROOT / ".venv" / "bin" / "python"))
    p.add_argument("--json", metavar="OUT", help="write every run as JSON")
    p.add_argument("--keep", action="store_true", help="keep the work folder (results, logs)")
    p.add_argument("--table", metavar="JSON", help="print the table of a run saved with --json, and stop")
    p.add_argument("--mteb-worker", metavar="JOB", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.mteb_worker:
        mteb_worker(json.loads(Path(args.mteb_worker).read_text()))
        return 0
    if args.table:
        saved = json.loads(Path(args.table).read_text())
        print_table(saved["rows"], saved["total_s"])
        return 0
    parity.check_oracle()
    tasks = args.tasks or (QUICK_TASKS if args.quick else FULL_TASKS)
    repeats = args.repeats or (1 if args.quick else 2)
    size = "quick" if args.quick else "full"
    build = Path(args.build_dir).resolve()
    t0 = time.perf_counter()
    data = bench_data.build(build / "data", tasks, size, Path(args.shared_data))
    models = bench_models.build(build / "checkpoints", args.models)
    build.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="vs-mteb-", dir=build))
    env = {**parity.offline_env(work), "TQDM_DISABLE": "1"}
    protocol = parity.maeb_protocol_flag(args.maeb_python, parity.DEFAULT_PROTOCOL)
    for task in tasks:  # both sides' converted datasets, as after a download (untimed)
        job = {"family": args.models[0], "task": task, "checkpoint": str(models[args.models[0]]), "data": str(data[task])}
        run_mteb({**job, "prepare": True}, work, env, work / "prepare.log")
        spec = parity.write_task_spec(bench_data.task_data(task), data[task], work / f"{task}.toml")
        bench_data.prepare_maeb(args.maeb_python, spec, work / "maeb-cache" / task)
    print(f"[bench] built and prepared in {time.perf_counter() - t0:.0f} s; work folder {work}", flush=True)
    rows = []
    for fi, key in enumerate(args.models):
        for ti, task in enumerate(tasks):
            runs = []
            for r in range(repeats):
                # alternates over repeats, tasks and models, so no task always runs one side first
                order = ["mteb", "maeb"] if (fi + ti + r) % 2 == 0 else ["maeb", "mteb"]
                folders = {"model": models[key], "data": data[task], "cache": work / "maeb-cache" / task}
                runs.append(one_pair(key, task, folders, work, env, protocol, order, args.maeb_python))
                r = runs[-1]
                print(
                    f"[bench] {key} {task} ({order[0]} first): mteb {r['mteb_wall']:.1f} s, maeb {r['maeb_wall']:.1f} s",
                    flush=True,
                )
            rows.append(summarise(key, task, runs))
    total = time.perf_counter() - t0
    print_table(rows, total)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"size": size, "repeats": repeats, "total_s": total, "rows": rows}, indent=1, default=str)
        )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
