"""Regenerate the committed MAEB-lite reference (results/maeb-lite) with each cell's band.

  python scripts/lite_reference.py --work /tmp/lite-ref [--replays 40] [--keep-scores results/maeb-lite]

1. The native run: `python -m maeb lite --stability-replays N` with a fresh cache (the band from
   N replays of each probe, maeb.run.stability), with one BLAS and OpenMP thread: small probe fits
   run five times faster so on a busy machine, and the thread count is one of the set-ups.
2. The same run under other numeric set-ups, each in a fresh process with a fresh cache (vectors
   and evaluators both recomputed): OpenBLAS's Haswell and Prescott kernels (one thread each), and
   the machine's default threads (OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS, OMP_NUM_THREADS).
3. Each cell's `maeb.run.stability.machines` records every set-up's main score, those of --observe
   folders (other runs of the same code: another machine's, evaluators alone under another
   kernel) and, with --keep-scores, the previous reference's, and the band becomes the largest
   of the replays' band and the observed largest move, for the main score and for every
   entry-level metric (what `lite --check` allows).
4. The reference folder gets the native run's result files, except that --keep-scores keeps the
   previous reference's file (its scores and fingerprints) for a cell whose scores differ from
   the native run's, so the reference's numbers stay those already published (the native run is
   then one of the observed machines). Then the leaderboards are rewritten.

Each step's folder under --work is reused when it is complete (rerun to resume)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from maeb.benchmarks.lite.check import _numbers, _results
from maeb.benchmarks.lite.runner import leaderboard, reference_dir
from maeb.results.write import write_json_atomic
from maeb.run.numeric_env import summary

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
NATIVE = ONE_THREAD
SETUPS = {
    "openblas-Haswell": {"OPENBLAS_CORETYPE": "Haswell", **ONE_THREAD},
    "openblas-Prescott": {"OPENBLAS_CORETYPE": "Prescott", **ONE_THREAD},
    "default-threads": {},
}


def run_lite(folder: Path, work: Path, env: dict, replays: int) -> None:
    done = folder / "leaderboard.json"
    if done.exists():
        print(f"{folder.name}: reusing {folder}", flush=True)
        return
    cache = work / f"cache-{folder.name}"
    shutil.rmtree(cache, ignore_errors=True)
    cmd = [sys.executable, "-m", "maeb", "lite", "--quiet", "--output-dir", str(folder), "--cache-dir", str(cache)]
    cmd += ["--dir", str(work / "lite-data"), "--stability-replays", str(replays)]
    print(f"{folder.name}: {' '.join(f'{k}={v}' for k, v in env.items())} {' '.join(cmd[1:])}", flush=True)
    subprocess.run(cmd, env={**os.environ, "HF_HOME": str(work / "hf"), **env}, check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(cache, ignore_errors=True)


def entry_numbers(data: dict) -> dict[str, float]:
    return {p: v for p, v in _numbers(data["scores"]) if p.count(".") == 1 and "[" not in p.split(".")[1]}


def main_of(data: dict) -> float:
    entries = next(iter(data["scores"].values()))
    return sum(e["main_score"] for e in entries) / len(entries)


def quantum_of(task: str, lite_dir: Path) -> float:
    """maeb.run.stability.quantum of a MAEB-lite task (for results written before it was recorded)."""
    from maeb.core.context import RunContext
    from maeb.run.stability import quantum
    from maeb.spec import catalog
    from maeb.spec.loader import load_task

    spec = catalog.find_task(task)
    return quantum(spec, load_task(spec, RunContext(cache_dir=lite_dir.parent, lite_dir=lite_dir)))


def merge(native: dict, observed: dict[str, dict], kept: dict | None) -> tuple[dict, list[str]]:
    """The reference file of one cell: the native file (or the kept one) with the band widened
    to what the other set-ups moved."""
    out = json.loads(json.dumps(kept or native))
    base = entry_numbers(out)
    stability = dict(native["maeb"].get("stability") or {})
    configurations, metrics = {}, dict(stability.get("metrics") or {})
    sources = dict(observed)
    if kept is not None:
        sources = {"this machine (native)": native, **observed}
    largest, notes = 0.0, []
    for name, data in sources.items():
        env = (data.get("maeb") or {}).get("numeric_env")
        configurations[name] = {"main_score": round(main_of(data), 6), "numeric_env": summary(env) if env else "not recorded"}
        for path, value in entry_numbers(data).items():
            if path in base:
                gap = abs(value - base[path])
                metrics[path] = round(max(metrics.get(path, 0.0), gap), 6)
        largest = max(largest, abs(main_of(data) - main_of(out)))
    stability["machines"] = {
        "configurations": configurations,
        "largest": round(largest, 6),
        "what": "the cell's main score under other numeric set-ups (fresh processes and caches: vectors and "
        "evaluator recomputed) and, where named, another machine's run",
    }
    stability["band"] = round(max(float(stability.get("band") or 0.0), largest), 6)
    stability["metrics"] = metrics
    out.setdefault("maeb", {})["stability"] = stability
    if kept is not None and largest > 0:
        notes.append(f"kept the previous reference's scores; this machine's main score differs by {largest:.4f}")
    return out, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="working folder (runs, caches, the build)")
    parser.add_argument("--replays", type=int, default=40)
    parser.add_argument("--setups", nargs="*", default=list(SETUPS), choices=list(SETUPS))
    parser.add_argument("--only", action="store_true", help="run the native run and the set-ups, then stop")
    parser.add_argument("--keep-scores", type=Path, help="the previous reference: keep its files where the scores differ")
    parser.add_argument("--observe", type=Path, nargs="*", default=[], help="other runs' result folders to fold in")
    parser.add_argument("--out", type=Path, default=reference_dir())
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    previous = _results(args.keep_scores) if args.keep_scores else {}

    run_lite(args.work / "native", args.work, NATIVE, args.replays)
    for name in args.setups:
        run_lite(args.work / name, args.work, SETUPS[name], 0)
    if args.only:
        return
    native = _results(args.work / "native")
    others = {name: _results(args.work / name) for name in args.setups}
    others.update({f"{folder.name} (observed)": _results(folder) for folder in args.observe})

    staged = args.work / "reference"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(args.work / "native", staged, ignore=shutil.ignore_patterns("leaderboard.*"))
    for key, data in sorted(native.items()):
        model, task = key
        kept = previous.get(key)
        same = kept is not None and entry_numbers(kept) == entry_numbers(data)
        observed = {name: runs[key] for name, runs in others.items() if key in runs}
        if kept is not None and not same:
            observed["previous reference (another machine)"] = kept
        stability = data["maeb"].get("stability") or {}
        if stability.get("method") == "replay" and "quantum" not in stability:
            stability["quantum"] = quantum_of(task, args.work / "lite-data")
        merged, notes = merge(data, observed, kept if kept is not None and not same else None)
        if kept is not None and same:
            configurations = merged["maeb"]["stability"]["machines"]["configurations"]
            configurations["previous reference (another machine)"] = {
                "main_score": round(main_of(kept), 6),
                "numeric_env": "not recorded",
            }
        path = next(p for p in staged.glob(f"{model.replace('/', '__', 1)}/*/{task}.json"))
        write_json_atomic(path, merged)
        band = merged["maeb"]["stability"]["band"]
        print(f"{model:52} {task:26} {main_of(merged):.4f} ±{band:.4f} {'; '.join(notes)}")
    leaderboard(staged)
    shutil.rmtree(args.out, ignore_errors=True)
    shutil.copytree(staged, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
