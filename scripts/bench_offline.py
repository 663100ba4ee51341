"""How long a benchmark of hub tasks takes to fail while offline, before and after the run's
one-time network probe (maeb.data.hub).

  python scripts/bench_offline.py [--before DIR] [--rounds 2] [--json out.json]

Runs `python -m maeb run --model mfcc --benchmark MAEB --task-types clustering` (three hub tasks,
a model that downloads nothing) with empty HF_HOME and cache folders, under three kinds of
"offline": HF_HUB_OFFLINE=1, a host name that does not resolve (this machine's state for the real
hub), and an endpoint whose port refuses connections. --before names a checkout of an older
commit (e.g. `git archive COMMIT | tar -x -C DIR`); its maeb is put first on PYTHONPATH, and the
two sides alternate within each round. Prints the wall time, exit code, the number of tasks the
run's last line reports as failed and that line."""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["-m", "maeb", "run", "--model", "mfcc", "--benchmark", "MAEB", "--task-types", "clustering", "--quiet"]


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scenarios() -> dict[str, dict[str, str]]:
    return {
        "HF_HUB_OFFLINE=1": {"HF_HUB_OFFLINE": "1"},
        "host does not resolve": {"HF_ENDPOINT": "http://hub.invalid"},
        "connection refused": {"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"},
    }


def run_once(source: Path, extra: dict[str, str], timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="maeb-offline-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "MAEB_"))}
        env.update(
            HF_HOME=f"{tmp}/hf",
            MAEB_CACHE_DIR=f"{tmp}/cache",
            PYTHONPATH=str(source),
            **extra,
        )
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, *COMMAND, "--output-dir", f"{tmp}/results"],
                env=env,
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            rc, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc, err = "timeout", (exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        seconds = time.perf_counter() - started
    lines = [line for line in err.splitlines() if line.strip()]
    return {
        "seconds": round(seconds, 2),
        "rc": rc,
        "failed_lines": sum("failed" in ln for ln in lines),
        "last": lines[-1] if lines else "",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="a checkout of the older commit to compare with")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sides = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    out: dict[str, dict[str, list]] = {}
    for round_no in range(args.rounds):
        for name, extra in scenarios().items():
            order = list(sides.items()) if round_no % 2 == 0 else list(reversed(sides.items()))
            for side, source in order:
                result = run_once(source, extra, args.timeout)
                out.setdefault(name, {}).setdefault(side, []).append(result)
                print(f"{name:24} {side:6} {result['seconds']:7.1f} s  exit {result['rc']}  | {result['last'][:150]}", flush=True)
    print("\nmedian seconds:")
    for name, by_side in out.items():
        cells = ", ".join(f"{side} {statistics.median(r['seconds'] for r in runs):.1f}" for side, runs in by_side.items())
        print(f"  {name:24} {cells}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
