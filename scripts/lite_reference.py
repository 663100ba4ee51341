"""Regenerate the committed MAEB-lite reference (results/maeb-lite) with each cell's band.

  python scripts/lite_reference.py --work /tmp/lite-ref [--replays auto]

The native run: `python -m maeb lite --stability-replays auto` in a fresh process with a fresh cache
and the machine's default threads (what `make lite` runs). Each cell's band comes from its replays
alone (maeb.run.stability: the scoring repeated on vectors moved by the size of another CPU's
rounding, clips sharing a vector moved apart); runs under imitated CPUs are not folded in, so that
`lite --check` under them (scripts/parity.py --imitate, the README's set-ups) is a test out of
sample. A cell whose band is not measured stops the script. Then the leaderboards are rewritten.

The native folder under --work is reused when it is complete (rerun to resume)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from maeb.benchmarks.lite.check import _results, stability_of, unmeasured
from maeb.benchmarks.lite.runner import leaderboard, reference_dir


def run_lite(folder: Path, work: Path, replays: str) -> None:
    if (folder / "leaderboard.json").exists():
        print(f"{folder.name}: reusing {folder}", flush=True)
        return
    cache = work / f"cache-{folder.name}"
    shutil.rmtree(cache, ignore_errors=True)
    cmd = [sys.executable, "-m", "maeb", "lite", "--quiet", "--output-dir", str(folder), "--cache-dir", str(cache)]
    cmd += ["--dir", str(work / "lite-data"), "--stability-replays", replays]
    print(" ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, env={**os.environ, "HF_HOME": str(work / "hf")}, check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(cache, ignore_errors=True)


def main_of(data: dict) -> float:
    entries = next(iter(data["scores"].values()))
    return sum(e["main_score"] for e in entries) / len(entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="working folder (run, cache, the build)")
    parser.add_argument("--replays", default="auto")
    parser.add_argument("--out", type=Path, default=reference_dir())
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    native = args.work / "native"
    run_lite(native, args.work, args.replays)
    cells = _results(native)
    bad = [f"{model} / {task}: {unmeasured(data)}" for (model, task), data in sorted(cells.items()) if unmeasured(data)]
    if bad:
        sys.exit("cells without a measured band (nothing written):\n  " + "\n  ".join(bad))
    for (model, task), data in sorted(cells.items()):
        record = stability_of(data)
        print(f"{model:52} {task:26} {main_of(data):.4f} ±{record['band']:.4f} ({record['method']}, {record['replays']} replays)")
    staged = args.work / "reference"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(native, staged, ignore=shutil.ignore_patterns("leaderboard.*"))
    leaderboard(staged)
    shutil.rmtree(args.out, ignore_errors=True)
    shutil.copytree(staged, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
