"""Growth of time and peak memory with work, each measurement in its own process (separate peaks).

  .venv/bin/python scripts/bench_growth.py [--data ../shared/data] [--sizes 1 4 16] [--tries 2]
      [--big 50000] [--dim 1024] [--max-rss-gb 12] [--skip-big] [--skip-dry-run] [--skip-repeat]
      [--json out.json]

Measures, with the cheap `mfcc` model on real clips (FSDD, Speech Commands, read in place; caches
under build/growth/, git-ignored): a clustering task and an audio-to-audio retrieval task at 1x, 4x,
16x the clips, with loading, embedding and evaluation timed apart (retrieval: search and metrics
apart too); the retrieval evaluator on random float32 vectors, up to --big queries x --big
documents of --dim dimensions; `maeb run --model mfcc --benchmark MAEB+ --dry-run`; and a repeated
`maeb run` of three example tasks (results present, then --overwrite from cached vectors) as a
share of the first run. Each child's peak resident memory is its ru_maxrss; the parent kills a
child whose resident memory passes --max-rss-gb, so the big case cannot exhaust a shared machine.

Timings are CPU seconds of the child (process_time, all threads) beside wall seconds: on a shared
machine CPU time moves less with other work. Small cases run --tries times and keep the fastest.
Per-unit ratios are within one run: 1.00 is linear, below is sublinear (fixed costs), above grows
worse than linear."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "growth"
EXAMPLES = ["fsdd_digits.toml", "fsdd_digit_clustering.toml", "speech_commands_a2a.toml"]


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@contextmanager
def _phase(out: dict, name: str):
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    out[f"{name}_s"] = round(time.perf_counter() - wall, 4)
    out[f"{name}_cpu"] = round(time.process_time() - cpu, 4)


# ---------------------------------------------------------------- children (one measurement each)


def _task_spec(kind: str, scale: int, data: Path):
    """The example task on `scale` x its base clips: clustering on FSDD takes (60 clips a take),
    retrieval on a stratified Speech Commands sample (250 clips) with queries growing alongside."""
    from maeb.spec.taskspec import load_spec

    if kind == "clustering":
        spec = load_spec(ROOT / "examples" / "fsdd_digit_clustering.toml")
        steps = [{"op": "filter", "column": "take", "keep": list(range(3 * scale))}]  # 180, 720, 2880 clips
        return replace(spec, data=replace(spec.data, path=str(data / "fsdd")), transforms=steps)
    spec = load_spec(ROOT / "examples" / "speech_commands_a2a.toml")
    steps = [*spec.transforms, {"op": "stratified_subsample", "column": "word", "n": 250 * scale, "seed": 42}]
    derive = {**spec.derive, "max_queries": 50 * scale}
    return replace(spec, data=replace(spec.data, path=str(data / "speech_commands_test")), transforms=steps, derive=derive)


def _timed_retrieval(out: dict, data, emb, top_k: int, k_values) -> None:
    """The retrieval evaluator's own path (iter_search streamed into retrieval_metrics), the time
    spent producing each query's results (search) told apart from scoring them (metrics)."""
    from maeb.tasktypes import retrieval

    spent = {"wall": 0.0, "cpu": 0.0}

    def timed(call):
        wall, cpu = time.perf_counter(), time.process_time()
        value = call()
        spent["wall"] += time.perf_counter() - wall
        spent["cpu"] += time.process_time() - cpu
        return value

    def items(found):
        while (item := timed(lambda: next(found, None))) is not None:
            yield item

    wall, cpu = time.perf_counter(), time.process_time()
    found = timed(lambda: retrieval.iter_search(data, emb, top_k))  # reads vectors before the first item
    retrieval.retrieval_metrics(items(found), data.qrels, k_values)
    out["search_s"], out["search_cpu"] = round(spent["wall"], 4), round(spent["cpu"], 4)
    out["metrics_s"] = round(time.perf_counter() - wall - spent["wall"], 4)
    out["metrics_cpu"] = round(time.process_time() - cpu - spent["cpu"], 4)


def child_task(kind: str, scale: int, data: Path) -> dict:
    import sklearn.metrics  # noqa: F401  (imported first, so that no phase pays for it)
    import torch  # noqa: F401

    from maeb import tasktypes
    from maeb.audio.pipeline import AudioRef
    from maeb.encoders import identity, load_encoder
    from maeb.engine.cache import EmbeddingCache
    from maeb.engine.embed import Embedder
    from maeb.spec.catalog import find_model
    from maeb.spec.loader import load_task

    spec = _task_spec(kind, scale, data)
    meta = find_model("mfcc")
    encoder = load_encoder(meta)
    cache = WORK / f"cache-{kind}-{scale}-{os.getpid()}"
    emb = Embedder(meta, encoder, EmbeddingCache(cache, identity(meta, encoder)), batch_size=16, show_progress=False)
    out: dict = {"case": kind, "scale": scale}
    split = spec.data.eval_splits[0]
    try:
        with _phase(out, "load"):
            tables = load_task(spec, emb.ctx)["default"]
        part = tables[split]
        if kind == "clustering":
            refs = list(part[spec.data.audio_column])
        else:
            refs = [v for _, v in part.corpus if isinstance(v, AudioRef)]
            out["queries"] = len(part.queries)
        out["clips"] = len(refs)
        with _phase(out, "embed"):
            emb.audio(refs)  # a cold cache: every clip decoded and embedded once
        with _phase(out, "evaluate"):  # the task type's evaluate, reading vectors from the cache
            tasktypes.get(spec.type).evaluate(tables, split, emb, spec, tasktypes.TaskState(seed=42))
        if kind == "retrieval":
            _timed_retrieval(out, part, emb, spec.protocol["top_k"], spec.protocol["k_values"])
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    out["peak_rss_mb"] = _peak_mb()
    return out


def child_vectors(n_queries: int, n_docs: int, dim: int) -> dict:
    """The retrieval evaluator on given random vectors (one relevant document per query); the peak
    includes the vectors themselves (n_queries + n_docs rows of float32)."""
    import numpy as np
    import torch  # noqa: F401

    from maeb.audio.pipeline import AudioRef
    from maeb.data.sources import RetrievalData
    from maeb.tasktypes import retrieval

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n_queries + n_docs, dim), dtype=np.float32)
    refs = [AudioRef(str(i), path=str(i)) for i in range(n_queries + n_docs)]

    class Given:  # an embedder handing back fixed vectors: the search's only input
        similarity = "cosine"

        def audio(self, items):
            return vectors[[int(r.name) for r in items]], np.ones(len(items), dtype=bool)

    queries = [(f"q{i}", refs[i]) for i in range(n_queries)]
    corpus = [(f"d{j}", refs[n_queries + j]) for j in range(n_docs)]
    relevant = rng.integers(0, n_docs, n_queries)
    data = RetrievalData(corpus, queries, {f"q{i}": {f"d{relevant[i]}": 1} for i in range(n_queries)}, None)
    out: dict = {"case": "vectors", "queries": n_queries, "clips": n_docs, "dim": dim, "peak_inputs_mb": _peak_mb()}
    _timed_retrieval(out, data, Given(), 1000, retrieval.K_VALUES)
    out["peak_rss_mb"] = _peak_mb()
    return out


# ---------------------------------------------------------------- parent


def _rss_gb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def spawn(args: list[str], max_rss_gb: float) -> dict:
    """One child; its last stdout line is its JSON. Killed (and reported so) past max_rss_gb."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    while proc.poll() is None:
        if _rss_gb(proc.pid) > max_rss_gb:
            proc.kill()
            proc.wait()
            return {"killed": f"resident memory passed {max_rss_gb} GB", "wall_s": time.perf_counter() - t0}
        time.sleep(0.1)
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        return {"failed": proc.returncode, "stderr": stderr[-2000:]}
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    out = json.loads(lines[-1]) if lines else {"failed": "no result line"}
    out["child_wall_s"] = round(time.perf_counter() - t0, 2)
    return out


def fastest(args: list[str], tries: int, max_rss_gb: float) -> dict:
    """The child run `tries` times; each timing its fastest, the peak its largest."""
    runs = [spawn(args, max_rss_gb) for _ in range(tries)]
    bad = [r for r in runs if "failed" in r or "killed" in r]
    if bad:
        return bad[0]
    best = dict(runs[0])
    for key in best:
        if key.endswith(("_s", "_cpu")):
            best[key] = min(r[key] for r in runs)
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    return best


def _per_unit(rows: list[dict], key: str, unit) -> list[float]:
    base = rows[0][key] / unit(rows[0])
    return [(r[key] / unit(r)) / base if base else float("nan") for r in rows]


def table(title: str, rows: list[dict], columns: list[tuple[str, object]]) -> list[str]:
    """Wall and CPU seconds per phase, and CPU seconds per unit of work relative to the smallest
    size; a verdict per phase from the largest size's ratio."""
    lines = [
        f"\n{title}",
        " | ".join(
            ["queries", "clips", "peak MB"] + [f"{n} wall/cpu s" for n, _ in columns] + [f"{n} /unit" for n, _ in columns]
        ),
    ]
    ratios = {name: _per_unit(rows, f"{name}_cpu", unit) for name, unit in columns}
    for i, r in enumerate(rows):
        cells = [str(r.get("queries", "-")), str(r["clips"]), f"{r['peak_rss_mb']:.0f}"]
        cells += [f"{r[f'{n}_s']:.2f}/{r[f'{n}_cpu']:.2f}" for n, _ in columns]
        cells += [f"{ratios[n][i]:.2f}" for n, _ in columns]
        lines.append(" | ".join(cells))
    for name, _ in columns:
        last = ratios[name][-1]
        verdict = "linear or better" if last <= 1.5 else f"WORSE than linear ({last:.2f}x the smallest size's time per unit)"
        lines.append(f"  {name}: {verdict}")
    return lines


def repeat_runs(python: str) -> dict:
    """The same `maeb run` three times in fresh processes: cold (nothing cached), again (results
    present), again with --overwrite (every evaluator reruns from cached vectors)."""
    folder = WORK / "repeat"
    shutil.rmtree(folder, ignore_errors=True)
    base = [python, "-m", "maeb", "run", "--model", "whisper-tiny.en-fast", "--quiet", "--tasks"]
    base += [str(ROOT / "examples" / name) for name in EXAMPLES]
    base += ["--output-dir", str(folder / "results"), "--cache-dir", str(folder / "cache")]
    out = {}
    for name, extra in (("first", []), ("results_present", []), ("overwrite", ["--overwrite"])):
        t0 = time.perf_counter()
        proc = subprocess.run(base + extra, cwd=ROOT, capture_output=True, text=True)
        out[f"{name}_s"] = round(time.perf_counter() - t0, 2)
        if proc.returncode != 0:
            out["failed"] = f"{name}: exit {proc.returncode}: {proc.stderr[-1000:]}"
            break
    shutil.rmtree(folder, ignore_errors=True)
    if "failed" not in out:
        out["results_present_share"] = round(out["results_present_s"] / out["first_s"], 4)
        out["overwrite_share"] = round(out["overwrite_s"] / out["first_s"], 4)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--tries", type=int, default=2, help="runs of each small case; the fastest counts")
    parser.add_argument("--big", type=int, default=50_000, help="queries and documents of the largest vector case")
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--max-rss-gb", type=float, default=12.0, help="a child past this resident memory is killed")
    parser.add_argument("--skip-big", action="store_true", help="vector cases up to --big / 4 only")
    parser.add_argument("--skip-dry-run", action="store_true")
    parser.add_argument("--skip-repeat", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        out = child_vectors(*map(int, rest)) if kind == "vectors" else child_task(kind, int(rest[0]), args.data)
        print(json.dumps(out), flush=True)
        return 0
    if not (args.data / "fsdd" / "metadata.csv").exists():
        print(f"no FSDD under {args.data}; pass --data", file=sys.stderr)
        return 2
    WORK.mkdir(parents=True, exist_ok=True)
    me = [sys.executable, str(Path(__file__).resolve()), "--data", str(args.data)]
    spawn([*me, "--child", "clustering", "1"], args.max_rss_gb)  # warm-up: files into the page cache
    report: dict = {}
    lines: list[str] = []
    clips = lambda r: r["clips"]  # noqa: E731
    pairs = lambda r: r["queries"] * r["clips"]  # noqa: E731
    queries = lambda r: r["queries"]  # noqa: E731
    phases = {
        "clustering": [("load", clips), ("embed", clips), ("evaluate", clips)],
        "retrieval": [("load", clips), ("embed", clips), ("evaluate", pairs), ("search", pairs), ("metrics", queries)],
    }
    for kind, columns in phases.items():
        rows = [fastest([*me, "--child", kind, str(s)], args.tries, args.max_rss_gb) for s in args.sizes]
        for row in rows:
            print(json.dumps(row), flush=True)
        report[kind] = rows
        if not any("failed" in r or "killed" in r for r in rows):
            unit = "clips" if kind == "clustering" else "clips; evaluate and search per query x document; metrics per query"
            lines += table(f"{kind} at {' / '.join(f'{s}x' for s in args.sizes)} (per unit: {unit})", rows, columns)
    sides = [args.big // 16, args.big // 4] + ([] if args.skip_big else [args.big])
    rows = []
    for n in sides:
        tries = args.tries if n < args.big else 1  # the big case takes minutes
        rows.append(fastest([*me, "--child", "vectors", str(n), str(n), str(args.dim)], tries, args.max_rss_gb))
        print(json.dumps(rows[-1]), flush=True)
    report["vectors"] = rows
    if not any("failed" in r or "killed" in r for r in rows):
        title = (
            f"retrieval evaluator on random {args.dim}-d float32 vectors, top 1000 (per unit: search per pair, metrics per query)"
        )
        lines += table(title, rows, [("search", pairs), ("metrics", queries)])
    if not args.skip_dry_run:
        t0 = time.perf_counter()
        command = [sys.executable, "-m", "maeb", "run", "--model", "mfcc", "--benchmark", "MAEB+", "--dry-run"]
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        report["dry_run"] = {"seconds": round(time.perf_counter() - t0, 2), "rc": proc.returncode}
        lines.append(f"\ndry run on MAEB+ (mfcc): {report['dry_run']['seconds']} s wall, exit {proc.returncode}")
    if not args.skip_repeat:
        report["repeat"] = repeat_runs(sys.executable)
        lines.append(f"\nrepeated run of {len(EXAMPLES)} example tasks (whisper-tiny.en-fast): {json.dumps(report['repeat'])}")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
