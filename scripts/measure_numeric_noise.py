"""How much do the vectors of the same clips differ between BLAS kernels, CPU instruction sets and
thread counts? The size of eps for maeb.run.stability's replays.

  python scripts/measure_numeric_noise.py [--lite-dir DIR] [--models ...] [--tasks ...] [--clips 40]

Each configuration (an environment: OPENBLAS_CORETYPE, thread counts, CTranslate2's and torch's
instruction set) embeds the same MAEB-lite clips with each model in a fresh process and a fresh
cache; the vectors are compared with the native configuration's, element by element (relative
difference |a - b| / max(|a|, |b|) over the elements whose magnitude is above 1e-3 of the vector's
largest) and vector by vector (||a - b|| / ||a||). A vector that moves by more than 1e-3 in norm
is counted apart: that is not rounding but a discrete change (a transcript that reads otherwise)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from maeb.benchmarks.lite.runner import MODELS
from maeb.run.numeric_env import IMITATE

CONFIGS = {
    "native": {},
    "openblas-Haswell": {"OPENBLAS_CORETYPE": "Haswell"},
    "openblas-Prescott": {"OPENBLAS_CORETYPE": "Prescott"},
    "one-thread": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MAEB_TORCH_THREADS": "1"},
    "ct2-avx2": {"CT2_FORCE_CPU_ISA": "AVX2"},
    "torch-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    # ONNX Runtime heeds no instruction-set variable: its graph fusions and thread count are what a
    # set-up here can change (another CPU also changes its kernels, which nothing here imitates)
    "ort-no-fusion": {"MAEB_ORT_OPTIMIZATION": "disable"},
    "ort-basic-fusion": {"MAEB_ORT_OPTIMIZATION": "basic"},
    "ort-2-threads": {"MAEB_ORT_THREADS": "2"},
    # every library's instruction set imitated together (scripts/parity.py --imitate; lite --check's set-ups)
    **{f"imitate-{name}": setup for name, setup in IMITATE.items()},
}
WORDS = Path(__file__).resolve().parent.parent / "maeb" / "benchmarks" / "lite" / "words.txt"
TASKS = ["LiteSpokenDigits", "LiteSoundEvents", "LiteInstrumentFamily", "LiteLanguageID"]


def ort_settings() -> None:
    """Every ONNX Runtime session of this process built with MAEB_ORT_OPTIMIZATION's graph
    optimisation level and MAEB_ORT_THREADS intra-op threads (an ONNX model's set-up)."""
    level, threads = os.environ.get("MAEB_ORT_OPTIMIZATION"), os.environ.get("MAEB_ORT_THREADS")
    if not (level or threads):
        return
    import onnxruntime as ort

    original = ort.InferenceSession

    def session(path, sess_options=None, *rest, **kwargs):
        options = sess_options or ort.SessionOptions()
        if level:
            options.graph_optimization_level = {
                "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            }[level]
        if threads:
            options.intra_op_num_threads = int(threads)
        return original(path, options, *rest, **kwargs)

    ort.InferenceSession = session


def worker(args) -> None:
    """Embed the clips with every model into a fresh cache; save the vectors."""
    ort_settings()
    if os.environ.get("MAEB_TORCH_THREADS"):
        import torch

        torch.set_num_threads(int(os.environ["MAEB_TORCH_THREADS"]))
    from maeb.core.identity import declared_identity
    from maeb.encoders import load_encoder
    from maeb.encoders.protocols import get_protocol
    from maeb.run.model import build_embedder
    from maeb.run.numeric_env import numeric_env, summary
    from maeb.run.options import RunOptions, context_of, resolve
    from maeb.spec import catalog
    from maeb.spec.loader import load_task

    out = Path(args.out)
    with tempfile.TemporaryDirectory() as cache:
        cfg = RunOptions(cache_dir=Path(cache), show_progress=False, lite_dir=Path(args.lite_dir))
        ctx = context_of(cfg)
        refs = {}
        for name in args.tasks:
            spec = catalog.find_task(name)
            for tables in load_task(spec, ctx).values():
                for table in tables.values():
                    chosen = list(table[spec.data.audio_column])[: args.clips]
                    refs.update({r.key: r for r in chosen})
        keys = sorted(refs)
        protocol = get_protocol("mteb-2.26")
        for model in args.models:
            meta = catalog.find_model(model)
            encoder = load_encoder(meta, protocol=protocol)
            emb = build_embedder(
                resolve(meta, cfg, ctx=ctx), encoder, declared=declared_identity(meta, meta.options, protocol.name)
            )
            x, _ = emb.audio([refs[k] for k in keys])
            np.save(out / f"{meta.folder}.npy", x, allow_pickle=False)
            if getattr(encoder, "embed_text", None) is not None and "text" in meta.modalities:
                # the text side: captions built from MAEB-lite's words (the same texts in every configuration)
                words = [w for w in WORDS.read_text().split() if w.isalpha()]
                texts = [" ".join(words[i : i + 1 + i % 5]) for i in range(min(len(words), args.clips * 4))]
                np.save(out / f"{meta.folder}.text.npy", emb.text(texts), allow_pickle=False)
            emb.cache.close()
        (out / "env.json").write_text(json.dumps({"summary": summary(numeric_env()), "keys": keys}))


def compare(a: np.ndarray, b: np.ndarray) -> dict:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    norms = np.linalg.norm(a64, axis=1)
    per_vector = np.linalg.norm(a64 - b64, axis=1) / np.maximum(norms, 1e-30)
    jumps = per_vector > 1e-3
    keep = ~jumps
    scale = np.abs(a64[keep]).max(axis=1, keepdims=True)
    big = np.abs(a64[keep]) > 1e-3 * scale
    rel = (np.abs(a64[keep] - b64[keep]) / np.maximum(np.abs(a64[keep]), np.abs(b64[keep])).clip(1e-30))[big]
    moved = rel[rel > 0]
    return {
        "vectors": len(a),
        "identical_vectors": int((per_vector == 0).sum()),
        "discrete_changes": int(jumps.sum()),
        "element_rel_median_of_moved": float(np.median(moved)) if moved.size else 0.0,
        "element_rel_max": float(rel.max()) if rel.size else 0.0,
        "vector_rel_max": float(per_vector[keep].max()) if keep.any() else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lite-dir", default=os.environ.get("MAEB_LITE_DIR", str(Path.home() / ".cache/maeb/maeb-lite")))
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--tasks", nargs="+", default=TASKS)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--clips", type=int, default=40, help="clips per task split")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    configs = ["native", *[c for c in args.configs if c != "native"]]
    with tempfile.TemporaryDirectory() as root:
        envs = {}
        for name in configs:
            out = Path(root) / name
            out.mkdir()
            env = {**os.environ, "HF_HOME": str(Path(root) / "hf"), **CONFIGS[name]}
            cmd = [
                sys.executable,
                __file__,
                "--worker",
                name,
                "--out",
                str(out),
                "--lite-dir",
                args.lite_dir,
                "--clips",
                str(args.clips),
            ]
            cmd += ["--models", *args.models, "--tasks", *args.tasks]
            subprocess.run(cmd, env=env, check=True)
            envs[name] = json.loads((out / "env.json").read_text())
            print(f"{name}: {envs[name]['summary']}", flush=True)
        print(f"\n{len(envs['native']['keys'])} clips of {', '.join(args.tasks)}")
        print(
            f"{'configuration':18} {'model':52} {'same':>5} {'jumps':>5} {'median rel':>11} {'max rel':>9} {'max |dv|/|v|':>12}"
        )
        for name in configs[1:]:
            for path in sorted((Path(root) / "native").glob("*.npy")):
                c = compare(np.load(path), np.load(Path(root) / name / path.name))
                print(
                    f"{name:18} {path.stem:52} {c['identical_vectors']:5d} {c['discrete_changes']:5d} "
                    f"{c['element_rel_median_of_moved']:11.2e} {c['element_rel_max']:9.2e} {c['vector_rel_max']:12.2e}"
                )


if __name__ == "__main__":
    main()
