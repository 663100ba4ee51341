"""How close a full `maeb run` comes to the bare encoder forward (the floor), per model family.

For each model and one task (a hub-layout folder of a real MAEB task definition on real recordings,
scripts/bench_data.py):

1. plan: the task runs in this process through maeb's runner with the encoder's `embed_audio`
   replaced by a recorder that keeps each batch the engine hands it (already decoded, resampled
   and cut: maeb's own batch plan over the task's unique clips) and returns random vectors. Its
   evaluation time is the engine without the forward: data loading, probing, decoding and
   resampling, cache writes, the evaluator (on random vectors).
2. floor: the real `embed_audio` over the recorded batches, only the forward calls timed, in a
   process of its own (which also times the model load, reported on its own).
3. full: `python -m maeb run` of the same task in a fresh process on a fresh cache (no
   embeddings; the dataset converted once beforehand, as after a download, and timed on its own):
   wall seconds, and the result's in-process evaluation_time, forward_seconds, embed_wall_seconds.

Floor and full alternate which runs first per repeat. The share outside the forward is
(evaluation_time - floor) / evaluation_time; the target is evaluation_time <= 1.10 x floor on CPU.
Model load is measured on its own (the floor excludes it, the full run's wall includes it).

    .venv/bin/python scripts/bench_floor.py --quick                  # small FSDD, every family
    .venv/bin/python scripts/bench_floor.py --models mfcc wav2vec2-base --task FSDD --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_data
import bench_models
import numpy as np
import parity

from maeb.encoders import load_encoder
from maeb.run.options import RunOptions
from maeb.run.runner import run
from maeb.spec.catalog import find_model
from maeb.spec.taskspec import load_spec

ROOT = parity.ROOT
# the offline models `maeb list models` shows as runnable here (weights in installed packages);
# the generative transcriber has no embed_audio and is not an embedding model
OFFLINE = ["mfcc", "speech-embedding", "resemblyzer", "whisper-tiny.en", "whisper-tiny.en-fast", "transcript-minilm-fast"]
MODELS = list(bench_models.FAMILIES) + OFFLINE


class Recorder:
    """Stands in for embed_audio: keeps each batch (copies of the decoded clips) in call order."""

    def __init__(self):
        self.batches: list[list[np.ndarray]] = []
        self.rng = np.random.default_rng(0)

    def __call__(self, clips):
        self.batches.append([np.array(c, copy=True) for c in clips])
        return self.rng.standard_normal((len(clips), 16)).astype(np.float32)


def model_meta(key: str, models: dict, work: Path):
    if key in bench_models.FAMILIES:
        family, _ = bench_models.FAMILIES[key]
        return find_model(str(parity.write_model_entry(family, models[key], work / f"{key}.toml")))
    return find_model(key)


def plan(meta, encoder, spec, work: Path) -> tuple[list[list[np.ndarray]], dict]:
    """maeb's batches for this task (decoded), and the engine's timings without the forward."""
    recorder = Recorder()
    encoder.embed_audio = recorder  # an instance attribute shadows the method; removed below
    try:
        cfg = RunOptions(output_dir=None, cache_dir=work / "cache", show_progress=False, overwrite=True)
        summary = run(meta, [spec], cfg, log=lambda m: None, encoder=encoder)
    finally:
        del encoder.embed_audio
        bench_data.fresh_embeddings(work / "cache")
    payload = summary.results[0].payload
    return recorder.batches, {"eval_s": payload["evaluation_time"], **payload["maeb"]["embedding"]}


def floor(encoder, batches) -> float:
    """Seconds in the forward calls alone, over pre-decoded batches."""
    total = 0.0
    for clips in batches:
        t0 = time.perf_counter()
        encoder.embed_audio(clips)
        total += time.perf_counter() - t0
    return total


def floor_worker(job: dict) -> None:
    """The floor in a process of its own that does nothing else (so the plan pass's leftovers stay
    out). Measured under load: small-batch forwards (wav2vec2, resemblyzer) still ran 3-10x slower
    here than the same batches inside `maeb run`, cause not found; for those families read the
    "in-run outside" column (forward and the rest timed in one process)."""
    t0 = time.perf_counter()
    encoder = load_encoder(find_model(job["entry"]))
    load_s = time.perf_counter() - t0
    with open(job["batches"], "rb") as fh:
        batches = pickle.load(fh)
    floor(encoder, batches[:1])  # warm-up (first-call allocations); the full run has its own
    Path(job["out"]).write_text(json.dumps({"load_s": load_s, "floor_s": floor(encoder, batches)}))


def run_floor(entry: str, batches: Path, work: Path) -> dict:
    job = {"entry": entry, "batches": str(batches), "out": str(work / "floor.json")}
    (work / "floor-job.json").write_text(json.dumps(job))
    start = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--floor-worker", str(work / "floor-job.json")], cwd=ROOT, check=True)
    return {**json.loads((work / "floor.json").read_text()), "wall_s": time.perf_counter() - start}


def full_run(entry: str, spec_file: Path, work: Path, python: str) -> dict:
    """`maeb run` in a fresh process, its cache holding the converted dataset and no embeddings."""
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    out, cache = work / f"out-{time.monotonic_ns()}", work / "cache"
    bench_data.fresh_embeddings(cache)

    errors, wall = parity.run_maeb(
        python, entry, {spec_file.stem: spec_file}, out, cache, {**os.environ, **env}, [], work / "maeb.log"
    )
    if errors:
        raise SystemExit(f"bench_floor: maeb run failed: {errors} (log {work / 'maeb.log'})")
    result = json.loads(parity.find_result(out, spec_file.stem).read_text())
    emb = result["maeb"]["embedding"]
    bench_data.fresh_embeddings(cache)
    return {
        "wall_s": wall,
        "eval_s": result["evaluation_time"],
        "forward_s": emb["forward_seconds"],
        "embed_wall_s": emb["embed_wall_seconds"],
    }


def measure(key: str, models: dict, spec_file: Path, work: Path, repeats: int, python: str, turn: int) -> dict:
    meta = model_meta(key, models, work)
    entry = str(work / f"{key}.toml") if key in bench_models.FAMILIES else key
    batches, engine = plan(meta, load_encoder(meta), load_spec(spec_file), work)
    with open(work / f"{key}-batches.pkl", "wb") as fh:
        pickle.dump(batches, fh)
    floors, fulls = [], []
    for r in range(repeats):
        for side in ("floor", "full") if (turn + r) % 2 == 0 else ("full", "floor"):
            if side == "floor":
                floors.append(run_floor(entry, work / f"{key}-batches.pkl", work))
            else:
                fulls.append(full_run(entry, spec_file, work, python))
    med = lambda xs: statistics.median(xs)  # noqa: E731
    f = med([x["floor_s"] for x in floors])
    e = med([x["eval_s"] for x in fulls])
    return {
        "model": key,
        "family": meta.family,
        "batches": len(batches),
        "clips": sum(len(b) for b in batches),
        "load_s": med([x["load_s"] for x in floors]),
        "floor_s": f,
        "full_eval_s": e,
        "full_wall_s": med([x["wall_s"] for x in fulls]),
        "full_forward_s": med([x["forward_s"] for x in fulls]),
        "full_embed_wall_s": med([x["embed_wall_s"] for x in fulls]),
        # paired per repeat: floor and full of the same repeat
        "outside_share": med([1 - fl["floor_s"] / x["eval_s"] for fl, x in zip(floors, fulls)]),
        "ratio": med([x["eval_s"] / fl["floor_s"] for fl, x in zip(floors, fulls)]),
        "engine_no_forward_eval_s": engine["eval_s"],
        "engine_no_forward_embed_wall_s": engine["embed_wall_seconds"],
        "floors": floors,
        "fulls": fulls,
    }


def print_table(rows: list[dict], task: str, size: str, out=sys.stdout) -> None:
    w = out.write
    w(f"\ntask {task} ({size}); seconds, medians over repeats\n")
    w(f"{'model':<22} {'family':<15} {'clips':>5} {'batch':>5} {'load':>5} {'floor':>7} {'full ev':>7} {'full wall':>9} ")
    w(f"{'fwd in run':>10} {'embed wall':>10} {'no-fwd ev':>9} {'no-fwd emb':>10} {'outside':>7} {'ratio':>6} ")
    w(f"{'in run':>7} target\n")
    for r in rows:
        # the share outside the forward as the run itself measured it: both parts under the same load
        in_run = 1 - r["full_forward_s"] / r["full_eval_s"]
        hit = "ok" if r["ratio"] <= 1.10 else "MISS"
        w(f"{r['model']:<22} {r['family']:<15} {r['clips']:>5} {r['batches']:>5} {r['load_s']:5.1f} {r['floor_s']:7.2f} ")
        w(f"{r['full_eval_s']:7.2f} {r['full_wall_s']:9.1f} {r['full_forward_s']:10.2f} {r['full_embed_wall_s']:10.2f} ")
        w(f"{r['engine_no_forward_eval_s']:9.2f} {r['engine_no_forward_embed_wall_s']:10.2f} {r['outside_share']:7.1%} ")
        w(f"{r['ratio']:6.2f} {in_run:7.1%} {hit}\n")
    w("floor: forward calls alone over maeb's batches of the unique clips (own process); full ev / wall: `maeb run`\n")
    w("on a fresh cache, its evaluation_time / the whole process; fwd in run, embed wall: its forward_seconds and\n")
    w("embed_wall_seconds; no-fwd ev / emb: the same task with a recorder instead of the forward (the engine's own\n")
    w("cost); outside: share of full ev outside the floor; ratio: full ev / floor (target <= 1.10); in run: share of\n")
    w("full ev outside the run's own forward_seconds; load: load_encoder in the floor's process (not in the floor)\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    p.add_argument("--task", choices=list(bench_data.TASKS), default="FSDD")
    p.add_argument("--size", choices=["quick", "full"], help="task size (default full; --quick: quick)")
    p.add_argument("--repeats", type=int, help="floor and full runs per model (default 2; --quick: 1)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--build-dir", default=str(ROOT / ".bench"))
    p.add_argument("--shared-data", default=str(bench_data.DEFAULT_SHARED))
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--table", metavar="JSON", help="print the table of a run saved with --json, and stop")
    p.add_argument("--floor-worker", metavar="JOB", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.floor_worker:
        floor_worker(json.loads(Path(args.floor_worker).read_text()))
        return 0
    if args.table:
        saved = json.loads(Path(args.table).read_text())
        print_table(saved["rows"], saved["task"], saved["size"])
        return 0
    size = args.size or ("quick" if args.quick else "full")
    repeats = args.repeats or (1 if args.quick else 2)
    build = Path(args.build_dir).resolve()
    t0 = time.perf_counter()
    folder = bench_data.build(build / "data", [args.task], size, Path(args.shared_data))[args.task]
    models = bench_models.build(build / "checkpoints", [m for m in args.models if m in bench_models.FAMILIES])
    work = Path(tempfile.mkdtemp(prefix="floor-", dir=build))
    spec_file = parity.write_task_spec(bench_data.task_data(args.task), folder, work / f"{args.task}.toml")
    t1 = time.perf_counter()  # the dataset conversion once (as after a download), timed on its own
    bench_data.prepare_maeb(sys.executable, spec_file, work / "cache")
    prep_s = time.perf_counter() - t1
    rows = []
    for i, key in enumerate(args.models):
        rows.append(measure(key, models, spec_file, work, repeats, sys.executable, i))
        r = rows[-1]
        print(
            f"[floor] {key}: floor {r['floor_s']:.2f} s, full eval {r['full_eval_s']:.2f} s, ratio {r['ratio']:.2f}", flush=True
        )
    print_table(rows, args.task, size)
    print(f"dataset conversion (once per dataset, in no run above): {prep_s:.1f} s")
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"task": args.task, "size": size, "rows": rows}, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
