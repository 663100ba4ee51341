"""Regenerate the committed MAEB-lite reference (results/maeb-lite): scores, bands, vectors and
evaluator bands (`make regen-lite`).

  python scripts/lite_reference.py --work /tmp/lite-ref [--replays auto] [--jobs 2]

1. The native run: `python -m maeb lite --stability-replays auto` with a fresh cache and the
   machine's default threads, the models shared out over --jobs processes. Each cell's band comes
   from its replays (maeb.run.stability: 32 per cell, the scoring repeated on vectors moved by the
   size of another CPU's rounding); each model's vectors are written beside its results
   (vectors/ORG__MODEL.npz, maeb.benchmarks.lite.vectors). A cell whose band is not measured stops
   the script.
2. The evaluator bands: the run's vectors scored again (maeb.benchmarks.lite.evaluators) under every
   OpenBLAS kernel this CPU can run (OPENBLAS_CORETYPE) and torch's instruction sets
   (ATEN_CPU_CAPABILITY with MKL_ENABLE_INSTRUCTIONS); per cell the largest move from the run's
   score is the evaluator's own spread, stored in the model's vectors file ("evaluators").
3. The leaderboards are rewritten and the folder replaces --out.

The native folder under --work is reused when it is complete (rerun to resume)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from maeb.benchmarks.lite import vectors
from maeb.benchmarks.lite.check import _results, stability_of, unmeasured
from maeb.benchmarks.lite.runner import MODELS, leaderboard, reference_dir
from maeb.run.numeric_env import NEEDS, cpu_flags, imitable

# the slowest model alone, the others together: two processes take about as long
GROUPS = [["maeb/whisper-tiny.en-minilm-transcript-clipwindow"], [m for m in MODELS if "transcript" not in m]]


def run_lite(folder: Path, work: Path, replays: str, models: list[str], tag: str) -> None:
    cache = work / f"cache-{tag}"
    shutil.rmtree(cache, ignore_errors=True)
    cmd = [sys.executable, "-m", "maeb", "lite", "--quiet", "--output-dir", str(folder), "--cache-dir", str(cache)]
    cmd += ["--dir", str(work / "lite-data"), "--stability-replays", replays, "--models", *models]
    print(" ".join(cmd[1:]), flush=True)
    with open(work / f"{tag}.log", "w") as log:
        subprocess.run(cmd, env={**os.environ, "HF_HOME": str(work / "hf")}, check=True, stdout=log, stderr=subprocess.STDOUT)
    shutil.rmtree(cache, ignore_errors=True)


def native_run(work: Path, replays: str, jobs: int) -> Path:
    native = work / "native"
    if (native / "leaderboard.json").exists():
        print(f"native: reusing {native}", flush=True)
        return native
    subprocess.run([sys.executable, "-m", "maeb", "lite", "build", "--dir", str(work / "lite-data")], check=True)
    groups = GROUPS if jobs > 1 else [MODELS]
    parts = [work / f"native-{i}" for i in range(len(groups))]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda i: run_lite(parts[i], work, replays, groups[i], f"native-{i}"), range(len(groups))))
    shutil.rmtree(native, ignore_errors=True)
    for part in parts:
        shutil.copytree(part, native, dirs_exist_ok=True, ignore=shutil.ignore_patterns("leaderboard.*"))
    leaderboard(native)
    return native


# torch computes the ranking types' similarities (MKL and its own kernels): imitated apart from OpenBLAS
TORCH_SETUPS = {
    "torch default + MKL SSE4_2": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
    "torch avx2 + MKL AVX2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "torch avx512 + MKL AVX512": {"ATEN_CPU_CAPABILITY": "avx512", "MKL_ENABLE_INSTRUCTIONS": "AVX512"},
}


def setups() -> dict[str, dict[str, str]]:
    """The evaluator set-ups this CPU can run: every OpenBLAS kernel (numpy, scipy, scikit-learn:
    the probes and k-means) and torch's instruction sets (the similarities); a kernel whose
    instructions the CPU lacks would crash, so it is left out."""
    flags = cpu_flags() or set()
    out = {name: {"OPENBLAS_CORETYPE": name} for name, needs in NEEDS["OPENBLAS_CORETYPE"].items() if needs <= flags}
    for name, setup in TORCH_SETUPS.items():
        keep, left = imitable(setup, flags)
        if not left:
            out[name] = keep
    return out


def evaluator_bands(native: Path, work: Path, jobs: int) -> dict[str, dict[str, dict]]:
    """Per model and task: the board score of the run's vectors under each evaluator set-up, and
    the largest move from the run's own score."""

    def scored(name: str) -> dict:
        cmd = [sys.executable, "-m", "maeb.benchmarks.lite.evaluators", str(native), "--dir", str(work / "lite-data")]
        print(f"evaluators under {name}", flush=True)
        done = subprocess.run(cmd, env={**os.environ, **chosen[name]}, check=True, capture_output=True, text=True)
        return json.loads(done.stdout)

    chosen = setups()
    found = dict(zip(chosen, ThreadPoolExecutor(max_workers=jobs).map(scored, chosen)))
    cells = _results(native)
    out: dict[str, dict[str, dict]] = {}
    for (model, task), data in cells.items():
        base = main_of(data)
        by_setup = {k: table.get(model, {}).get(task) for k, table in found.items()}
        by_setup = {k: v for k, v in by_setup.items() if v is not None}
        spread = max((abs(v - base) for v in by_setup.values()), default=0.0)
        out.setdefault(model, {})[task] = {"kernels": by_setup, "spread": round(spread, 6)}
    return out


def main_of(data: dict) -> float:
    entries = next(iter(data["scores"].values()))
    return sum(e["main_score"] for e in entries) / len(entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="working folder (run, cache, the build)")
    parser.add_argument("--replays", default="auto")
    parser.add_argument("--jobs", type=int, default=2, help="processes (models shared out; evaluator kernels too)")
    parser.add_argument("--out", type=Path, default=reference_dir())
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    native = native_run(args.work, args.replays, args.jobs)
    cells = _results(native)
    bad = [f"{model} / {task}: {unmeasured(data)}" for (model, task), data in sorted(cells.items()) if unmeasured(data)]
    if bad:
        sys.exit("cells without a measured band (nothing written):\n  " + "\n  ".join(bad))
    bands = evaluator_bands(native, args.work, args.jobs)
    for model, tasks in bands.items():
        vectors.update_meta(vectors.file_of(native, model), evaluators=tasks)
    for (model, task), data in sorted(cells.items()):
        record = stability_of(data)
        spread = bands[model][task]["spread"]
        print(
            f"{model:52} {task:26} {main_of(data):.4f} ±{record['band']:.4f} ({record['method']}, {record.get('refits')} samples"
            f"{', fragile' if record.get('fragile') else ''}); evaluator spread {spread:.4f}"
        )
    staged = args.work / "reference"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(native, staged, ignore=shutil.ignore_patterns("leaderboard.*"))
    leaderboard(staged)
    shutil.rmtree(args.out, ignore_errors=True)
    shutil.copytree(staged, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
