"""The Ray path against the plain path on MAEB-lite: wall time of the plain run, of --ray with one
worker and with two local workers, alternating, each from an empty cache and results folder.

  python scripts/bench_ray.py [--models mfcc ...] [--rounds 2] [--tasks LiteSpokenDigits ...] [--json out.json]

Reports each run's seconds, the median per mode, the speedup from 1 to 2 workers and the overhead
of the Ray path (1 worker) over the plain path. The local Ray instance is started once (its start
is reported apart: a cluster is started once for many runs); each Ray run still starts its
workers and loads the model in them. On 2 cores expect little speedup: the driver's evaluation
and the workers share the same cores."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from maeb.benchmarks.lite.build import build
from maeb.run.distributed import run_on_ray
from maeb.run.options import RunOptions
from maeb.run.runner import run
from maeb.spec import catalog


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["mfcc"])
    parser.add_argument("--tasks", nargs="+", help="MAEB-lite tasks (default: all)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import ray

    work = Path(tempfile.mkdtemp(prefix="maeb-bench-ray-"))
    lite = work / "lite"
    build(lite, seed=0, log=lambda m: None)
    specs = catalog.benchmark_specs(catalog.find_benchmark("MAEB-lite"))
    if args.tasks:
        specs = [s for s in specs if s.name in args.tasks]
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 * 1024 * 1024, _node_ip_address="127.0.0.1")
    ray_start = time.perf_counter() - t0
    modes = {
        "plain": lambda meta, cfg: run(meta, specs, cfg, log=lambda m: None),
        "ray-1": lambda meta, cfg: run_on_ray(meta, specs, cfg, log=lambda m: None, workers=1),
        "ray-2": lambda meta, cfg: run_on_ray(meta, specs, cfg, log=lambda m: None, workers=2),
    }
    # untimed warm-up: the first run in a process compiles the models' numba code (librosa)
    for name in args.models:
        cfg = RunOptions(output_dir=None, cache_dir=work / "warm-up", show_progress=False, strict_modalities=False, lite_dir=lite)
        run(catalog.find_model(name), specs[:1], cfg, log=lambda m: None)
    report = {"ray_start_seconds": round(ray_start, 2), "tasks": len(specs), "models": {}}
    print(f"local Ray instance started in {ray_start:.1f} s; {len(specs)} MAEB-lite tasks")
    try:
        for name in args.models:
            meta = catalog.find_model(name)
            seconds: dict[str, list[float]] = {mode: [] for mode in modes}
            scores = {}
            for round_ in range(args.rounds):
                order = list(modes) if round_ % 2 == 0 else list(reversed(modes))  # alternate, so drift hits all
                for mode in order:
                    root = work / f"{meta.folder}-{mode}-{round_}"
                    cfg = RunOptions(
                        output_dir=root / "results",
                        cache_dir=root / "cache",
                        show_progress=False,
                        strict_modalities=False,
                        lite_dir=lite,
                    )
                    t0 = time.perf_counter()
                    summary = modes[mode](meta, cfg)
                    seconds[mode].append(time.perf_counter() - t0)
                    scores[mode] = {r.task: json.dumps(r.scores, sort_keys=True) for r in summary.results}
                    for worker in getattr(summary, "workers", []):
                        print(f"  {worker.line()}")
                    shutil.rmtree(root)
                    print(f"{meta.name} {mode} round {round_ + 1}: {seconds[mode][-1]:.1f} s", flush=True)
            median = {mode: statistics.median(v) for mode, v in seconds.items()}
            row = {
                "seconds": {m: [round(x, 2) for x in v] for m, v in seconds.items()},
                "median_seconds": {m: round(v, 2) for m, v in median.items()},
                "speedup_1_to_2_workers": round(median["ray-1"] / median["ray-2"], 3),
                "ray_1_overhead_vs_plain": round(median["ray-1"] / median["plain"] - 1, 3),
                "ray_2_vs_plain": round(median["plain"] / median["ray-2"], 3),
                "scores_identical": scores["plain"] == scores["ray-1"] == scores["ray-2"],
            }
            report["models"][meta.name] = row
            print(
                f"{meta.name}: plain {median['plain']:.1f} s, ray 1 worker {median['ray-1']:.1f} s, "
                f"ray 2 workers {median['ray-2']:.1f} s; speedup 1->2 workers x{row['speedup_1_to_2_workers']:.2f}; "
                f"Ray path overhead (1 worker vs plain) {100 * row['ray_1_overhead_vs_plain']:+.0f}%; "
                f"scores identical: {row['scores_identical']}"
            )
    finally:
        ray.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
