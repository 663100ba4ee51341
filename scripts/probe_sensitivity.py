"""How far a task's score moves when its vectors move by float32 rounding.

  python scripts/probe_sensitivity.py --model mfcc --tasks LiteBirdSpecies LiteSpokenDigits [--eps 1e-7] [--seeds 3]

Each vector is multiplied by (1 + eps * N(0, 1)) elementwise, which is the size of the difference
another numpy, BLAS or CPU makes; the task is scored again from the cached vectors (run the task
once first so they are cached). A score that moves by points here is decided by the last bits of
the vectors, so two machines agree on it only when their vectors agree bit for bit: MAEB's linear
probe (LogisticRegression with max_iter=100) stops before converging on unnormalised features."""

from __future__ import annotations

import argparse

import numpy as np

from maeb import catalog
from maeb.cache import default_cache_dir
from maeb.encoders import load_encoder
from maeb.identity import declared_identity
from maeb.protocols import DEFAULT_PROTOCOL, get_protocol
from maeb.runner import RunConfig, build_embedder, evaluate_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tasks", nargs="+", required=True)
    parser.add_argument("--eps", type=float, default=1e-7)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cache-dir", default=str(default_cache_dir()))
    parser.add_argument("--protocol", default=DEFAULT_PROTOCOL)
    args = parser.parse_args()

    meta = catalog.find_model(args.model)
    protocol = get_protocol(args.protocol)
    encoder = load_encoder(meta, protocol=protocol)
    cfg = RunConfig(cache_dir=args.cache_dir, show_progress=False, protocol=protocol.name)
    emb = build_embedder(meta, encoder, declared_identity(meta, meta.options, protocol.name), cfg, protocol)
    exact = emb.audio
    print(f"{'task':28} {'score':>8} {'max |change|':>13}  (eps {args.eps:g}, {args.seeds} seeds, {meta.name})")
    for name in args.tasks:
        spec = catalog.find_task(name)

        def score(spec=spec) -> float:
            scores, *_ = evaluate_task(spec, emb, log=lambda _m: None)
            entries = scores[spec.data.eval_splits[0]]
            return float(np.mean([e["main_score"] for e in entries]))

        emb.audio = exact
        base = score()
        changes = []
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)

            def perturbed(refs, rng=rng):
                x, ok = exact(refs)
                return (x * (1 + args.eps * rng.standard_normal(x.shape))).astype(np.float32), ok

            emb.audio = perturbed
            changes.append(abs(score() - base))
        print(f"{name:28} {base:8.4f} {max(changes):13.4f}")
    emb.cache.close()


if __name__ == "__main__":
    main()
