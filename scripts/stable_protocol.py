"""The stable protocol against mteb's on MAEB-lite: how much it shrinks the bands, whether it
reorders the models, and what it costs.

  python scripts/stable_protocol.py [--models M ...] [--tasks T ...] [--replays 8] [--cache-dir D]

Run MAEB-lite first (`python -m maeb lite`) so the vectors are cached: mteb-2.26-stable shares
mteb-2.26's vectors. For every probe cell (classification, multilabel) the task is scored under
both protocols from the same vectors, with `--replays` stability replays each (maeb.run.stability:
the band is the largest simulated move of the score under vectors perturbed by 1e-7); then each
task's model order and the Borda order over these tasks are compared. Each side's evaluator time
is measured in the same process, sides alternating."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from maeb import tasktypes
from maeb.analysis.uncertainty import ranks
from maeb.benchmarks.lite.runner import MODELS
from maeb.core.identity import declared_identity
from maeb.encoders import load_encoder
from maeb.encoders.protocols import get_protocol
from maeb.engine.cache import default_cache_dir
from maeb.run.model import build_embedder, missing_side
from maeb.run.options import RunOptions, resolve
from maeb.run.stability import board_main, measure, replay
from maeb.spec import catalog
from maeb.spec.loader import load_task

PROTOCOLS = ("mteb-2.26", "mteb-2.26-stable")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--tasks", nargs="+", help="default: MAEB-lite's classification and multilabel tasks")
    parser.add_argument("--replays", type=int, default=8)
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    parser.add_argument("--lite-dir", type=Path)
    args = parser.parse_args()

    specs = [catalog.find_task(t) for t in args.tasks] if args.tasks else None
    if specs is None:
        specs = [
            s for s in catalog.benchmark_specs(catalog.find_benchmark("MAEB-lite")) if s.type in ("classification", "multilabel")
        ]
    cells: dict[tuple[str, str, str], tuple[float, float]] = {}
    seconds = {p: 0.0 for p in PROTOCOLS}
    for model in args.models:
        meta = catalog.find_model(model)
        embs = {}
        for name in PROTOCOLS:
            protocol = get_protocol(name)
            cfg = RunOptions(cache_dir=args.cache_dir, show_progress=False, protocol=name, lite_dir=args.lite_dir)
            encoder = load_encoder(meta, protocol=protocol)
            embs[name] = build_embedder(resolve(meta, cfg), encoder, declared=declared_identity(meta, meta.options, name))
        for spec in specs:
            if missing_side(tasktypes.get(spec.type).needs(spec), embs[PROTOCOLS[0]].encoder):
                continue
            data = load_task(spec, embs[PROTOCOLS[0]].ctx)
            for name in PROTOCOLS:
                emb = embs[name]
                emb.begin_task(spec.name)
                started = time.perf_counter()
                base, _ = replay(spec, data, emb, 0.0, 0)  # eps 0: the plain evaluation
                spent = time.perf_counter() - started
                seconds[name] += spent
                record = measure(spec, data, emb, base, args.replays, evaluation_seconds=spent)
                cells[(meta.name, spec.name, name)] = (board_main(base), record["band"])
            a, b = (cells[(meta.name, spec.name, p)] for p in PROTOCOLS)
            print(f"{meta.name:50} {spec.name:22} mteb {a[0]:.4f} ±{a[1]:.4f}   stable {b[0]:.4f} ±{b[1]:.4f}", flush=True)
        for emb in embs.values():
            emb.cache.close()

    models = sorted({m for m, _, _ in cells})
    tasks = [s.name for s in specs if any((m, s.name, PROTOCOLS[0]) in cells for m in models)]
    print("\n| Task | " + " | ".join(m.split("/")[-1] for m in models) + " | same order |")
    print("|---|" + "---|" * (len(models) + 1))
    points = {p: np.zeros(len(models)) for p in PROTOCOLS}
    same = 0
    for task in tasks:
        row, order = [], {}
        for p in PROTOCOLS:
            values = np.array([cells.get((m, task, p), (np.nan, 0))[0] for m in models])
            order[p] = values
            present = ~np.isnan(values)
            points[p][present] += present.sum() - ranks(-values[present])
        for m in models:
            a, b = cells.get((m, task, PROTOCOLS[0])), cells.get((m, task, PROTOCOLS[1]))
            row.append("–" if a is None else f"{100 * a[0]:.1f} ±{100 * a[1]:.1f} / {100 * b[0]:.1f} ±{100 * b[1]:.1f}")
        tau = kendalltau(order[PROTOCOLS[0]], order[PROTOCOLS[1]], nan_policy="omit").statistic
        ordered = np.array_equal(np.argsort(-order[PROTOCOLS[0]]), np.argsort(-order[PROTOCOLS[1]]))
        same += ordered
        print(f"| {task} | " + " | ".join(row) + f" | {'yes' if ordered else f'no (tau {tau:.2f})'} |")
    bands = {p: [cells[k][1] for k in cells if k[2] == p] for p in PROTOCOLS}
    print(f"\ncells: {len(bands[PROTOCOLS[0]])}; model order the same on {same} of {len(tasks)} tasks")
    for p in PROTOCOLS:
        moved = sum(b > 0 for b in bands[p])
        print(
            f"{p:18} mean band {100 * np.mean(bands[p]):.2f} points, largest {100 * max(bands[p]):.2f}, {moved} cells with a band > 0; evaluator {seconds[p]:.1f} s"
        )
    borda = {p: ranks(-points[p], "min") for p in PROTOCOLS}
    print(
        "Borda over these tasks: "
        + "; ".join(
            f"{m.split('/')[-1]} {int(borda[PROTOCOLS[0]][i])} -> {int(borda[PROTOCOLS[1]][i])}" for i, m in enumerate(models)
        )
    )


if __name__ == "__main__":
    main()
