"""Replay MAEB-lite cells on perturbed vectors: how far each score moves, for every task type.

  python scripts/stability_bands.py [--models M ...] [--tasks T ...] [--replays 10] [--eps 1e-7] [--json out.json]

Run MAEB-lite first (`python -m maeb lite`) so the vectors are cached (same --cache-dir). Each
replay multiplies every cached vector by (1 + eps * N(0, 1)) (maeb.run.stability.noise) and scores
the task again with the protocol's own draws; eps = 0 must give the base scores exactly (checked
here for every cell). This is how the types maeb.run.stability records as exact were checked, and
what the default replay count is weighed against (the spread with many replays)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from maeb import tasktypes
from maeb.benchmarks.lite.runner import MODELS
from maeb.core.identity import declared_identity
from maeb.encoders import load_encoder
from maeb.encoders.protocols import DEFAULT_PROTOCOL, get_protocol
from maeb.engine.cache import default_cache_dir
from maeb.run.model import build_embedder, missing_side
from maeb.run.options import RunOptions, resolve
from maeb.run.stability import board_main, replay
from maeb.spec import catalog
from maeb.spec.loader import load_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--tasks", nargs="+", help="default: every MAEB-lite task")
    parser.add_argument("--replays", type=int, default=10)
    parser.add_argument("--eps", type=float, default=1e-7)
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir())
    parser.add_argument("--lite-dir", type=Path)
    parser.add_argument("--protocol", default=DEFAULT_PROTOCOL)
    parser.add_argument("--json", type=Path, help="write every replay's scores here")
    args = parser.parse_args()

    names = args.tasks or [s.name for s in catalog.benchmark_specs(catalog.find_benchmark("MAEB-lite"))]
    protocol = get_protocol(args.protocol)
    cfg = RunOptions(cache_dir=args.cache_dir, show_progress=False, protocol=protocol.name, lite_dir=args.lite_dir)
    rows, dump = [], {}
    print(f"{'model':50} {'task':26} {'type':20} {'base':>7} {'min':>7} {'max':>7} {'band':>7} {'s/fit':>6}")
    for model in args.models:
        meta = catalog.find_model(model)
        encoder = load_encoder(meta, protocol=protocol)
        emb = build_embedder(resolve(meta, cfg), encoder, declared=declared_identity(meta, meta.options, protocol.name))
        for name in names:
            spec = catalog.find_task(name)
            if missing_side(tasktypes.get(spec.type).needs(spec), encoder):
                continue
            emb.begin_task(spec.name)
            data = load_task(spec, emb.ctx)
            started = time.perf_counter()
            base, _ = replay(spec, data, emb, 0.0, 0)
            seconds = time.perf_counter() - started
            again, _ = replay(spec, data, emb, 0.0, 1)
            if json.dumps(base, sort_keys=True) != json.dumps(again, sort_keys=True):
                raise SystemExit(f"{meta.name} / {name}: two unperturbed replays differ; the replay does not reproduce the draws")
            replays = [replay(spec, data, emb, args.eps, seed)[0] for seed in range(args.replays)]
            main, values = board_main(base), [board_main(r) for r in replays]
            band = max(abs(v - main) for v in values)
            print(
                f"{meta.name:50} {name:26} {spec.type:20} {main:7.4f} {min(values):7.4f} {max(values):7.4f} {band:7.4f} {seconds:6.2f}",
                flush=True,
            )
            rows.append((meta.name, name, spec.type, band))
            dump[f"{meta.name} / {name}"] = {"type": spec.type, "base": base, "replays": replays, "seconds": seconds}
        emb.cache.close()
    moved = [r for r in rows if r[3] > 0]
    by_type = {}
    for _, _, kind, band in rows:
        by_type.setdefault(kind, []).append(band)
    print(f"\n{len(moved)} of {len(rows)} cells moved under eps {args.eps:g} x {args.replays} replays")
    for kind, bands in sorted(by_type.items()):
        print(f"  {kind:20} {sum(b > 0 for b in bands)} of {len(bands)} moved; largest band {max(bands):.4f}")
    if args.json:
        args.json.write_text(json.dumps(dump, default=float))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
