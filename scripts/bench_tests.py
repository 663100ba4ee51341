"""The suite serial against pytest-xdist, measured as a ratio in one time window (the machine may be
shared, so each wall time alone says little): one fixed set of test files run serially, then with
`-n N --dist loadfile` (as `make test` runs it), then serially again; the ratio is the parallel wall
time over the mean of the two serial ones.

  python scripts/bench_tests.py [--workers 2] [--marker "not heavy"] [--json out.json] [FILE ...]

Without FILEs, ten files of the suite's long tail (none of them slow-marked whole). Prints each
run's wall time, its pytest summary line and the load average before it, then the ratio."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = [
    "tests/test_faults.py",
    "tests/test_cli.py",
    "tests/test_api.py",
    "tests/test_catalog.py",
    "tests/test_generative.py",
    "tests/test_identity.py",
    "tests/test_engine.py",
    "tests/test_cache.py",
    "tests/test_options.py",
    "tests/test_leaderboard.py",
]


def _summary(output: str) -> str:
    """pytest's closing line (e.g. '210 passed, 3 skipped in 95.12s')."""
    lines = [line.strip("= ") for line in output.splitlines() if re.search(r"\b(passed|failed|error)", line)]
    return lines[-1] if lines else "(no summary line)"


def run_once(files: list[str], marker: str, workers: int) -> dict:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marker, *files]
    if workers > 1:
        cmd[4:4] = ["-n", str(workers), "--dist", "loadfile"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    row = {"workers": workers, "wall_s": round(wall, 1), "rc": done.returncode, "load_before": round(load, 2)}
    row["summary"] = _summary(done.stdout + done.stderr)
    label = "serial" if workers <= 1 else f"-n {workers}"
    print(f"{label:>8}: {wall:7.1f} s  load {load:4.1f}  rc {done.returncode}  {row['summary']}")
    sys.stdout.flush()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", default=DEFAULT_FILES)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--marker", default="not heavy")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = [run_once(args.files, args.marker, w) for w in (1, args.workers, 1)]
    serial = (rows[0]["wall_s"] + rows[2]["wall_s"]) / 2
    ratio = rows[1]["wall_s"] / serial
    print(f"parallel / serial: {ratio:.2f} ({rows[1]['wall_s']:.1f} s against {serial:.1f} s, the mean of the two serial runs)")
    if args.json:
        args.json.write_text(json.dumps({"files": args.files, "runs": rows, "ratio": round(ratio, 3)}, indent=2) + "\n")
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
