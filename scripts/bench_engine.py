"""Engine speed on real clips (FSDD, Speech Commands), as ratios and rates measured in one run.

  python scripts/bench_engine.py [--data ../shared/data] [--clips 300] [--json out.json]

Reports: decode+resample clips/s (background threads vs one thread); clips/s per offline encoder;
the share of embedding wall time spent outside the encoder forward pass; how long a second,
identical run takes relative to the first; what same-length batching gains for a group-norm
encoder on Speech Commands; peak resident memory."""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from maeb.audio.pipeline import LengthPolicy, decoded_batches, plan_batches
from maeb.data.sources import load_audiofolder
from maeb.encoders import identity, load_encoder
from maeb.engine.cache import EmbeddingCache
from maeb.engine.embed import Embedder
from maeb.run.options import RunOptions
from maeb.run.runner import run
from maeb.spec.catalog import find_model
from maeb.spec.taskspec import load_spec

ROOT = Path(__file__).resolve().parents[1]


def decode_rate(refs, workers: int) -> float:
    policy = LengthPolicy(16000)
    batches = plan_batches([0] * len(refs), 16)
    t0 = time.perf_counter()
    n = sum(len(clips) for _, clips in decoded_batches(refs, batches, policy, workers=workers))
    return n / (time.perf_counter() - t0)


def encoder_rate(model: str, refs, cache_root: Path) -> dict:
    meta = find_model(model)
    encoder = load_encoder(meta)
    emb = Embedder(meta, encoder, EmbeddingCache(cache_root / model, identity(meta, encoder)), batch_size=16, show_progress=False)
    t0 = time.perf_counter()
    emb.audio(refs)
    wall = time.perf_counter() - t0
    s = emb.stats
    return {
        "model": model,
        "clips": len(refs),
        "clips_per_s": round(len(refs) / wall, 1),
        "outside_forward_share": round(1 - s.forward_seconds / wall, 3),
        "audio_seconds_per_wall_second": round(s.audio_seconds / wall, 1),
    }


def repeat_ratio(data: Path, cache_root: Path, out_root: Path) -> dict:
    spec = load_spec(ROOT / "examples" / "fsdd_digits.toml")
    spec = replace(spec, data=replace(spec.data, path=str(data / "fsdd")))
    meta = find_model("whisper-tiny.en-fast")
    cfg = RunOptions(output_dir=out_root, cache_dir=cache_root / "repeat", show_progress=False, overwrite=True)
    first = run(meta, [spec], cfg, log=lambda m: None).wall_seconds
    second = run(meta, [spec], cfg, log=lambda m: None).wall_seconds
    return {
        "task": spec.name,
        "model": meta.name,
        "first_s": round(first, 2),
        "second_s": round(second, 2),
        "ratio": round(second / first, 4),
    }


def batching_gain(data: Path) -> dict:
    """Group-norm wav2vec2-base-sized encoder (random weights): same-length batches vs one clip at a time."""
    import torch
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2Model

    from maeb.encoders import ModelMeta

    refs = load_audiofolder(data / "speech_commands_test")["audio"][500:564]
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        Wav2Vec2Model(Wav2Vec2Config(feat_extract_norm="group")).save_pretrained(tmp)
        Wav2Vec2FeatureExtractor().save_pretrained(tmp)
        meta = ModelMeta(name="bench/w2v2-base-random", family="hf-ssl", revision="0", options={"path": tmp})
        encoder = load_encoder(meta)
        rates = {}
        for mode, size in (("single", 1), ("same_length", 16)):
            encoder.batching = mode
            with tempfile.TemporaryDirectory() as cache:
                emb = Embedder(meta, encoder, EmbeddingCache(cache, {"mode": mode}), batch_size=size, show_progress=False)
                t0 = time.perf_counter()
                vecs, _ = emb.audio(refs)
                rates[mode] = (len(refs) / (time.perf_counter() - t0), vecs)
    same = np.abs(rates["single"][1] - rates["same_length"][1]).max()
    return {
        "clips": len(refs),
        "single_clips_per_s": round(rates["single"][0], 2),
        "same_length_clips_per_s": round(rates["same_length"][0], 2),
        "speedup": round(rates["same_length"][0] / rates["single"][0], 2),
        "max_abs_difference": float(same),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--clips", type=int, default=300, help="FSDD clips per encoder")
    parser.add_argument(
        "--models", nargs="+", default=["mfcc", "speech-embedding", "resemblyzer", "whisper-tiny.en-fast", "whisper-tiny.en"]
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not (args.data / "fsdd" / "metadata.csv").exists():
        print(f"no FSDD under {args.data}; pass --data", file=sys.stderr)
        return 2
    refs = load_audiofolder(args.data / "fsdd")["audio"]
    report: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        report["decode_resample_clips_per_s"] = {
            "threads": round(decode_rate(refs, workers=None), 1),
            "one_thread": round(decode_rate(refs, workers=1), 1),
            "clips": len(refs),
        }
        print(json.dumps({"decode": report["decode_resample_clips_per_s"]}), flush=True)
        subset = refs[:: max(1, len(refs) // args.clips)][: args.clips]
        report["encoders"] = []
        for model in args.models:
            row = encoder_rate(model, subset, tmp)
            report["encoders"].append(row)
            print(json.dumps(row), flush=True)
        report["repeat_run"] = repeat_ratio(args.data, tmp, tmp / "results")
        print(json.dumps({"repeat": report["repeat_run"]}), flush=True)
        report["same_length_batching"] = batching_gain(args.data)
        print(json.dumps({"batching": report["same_length_batching"]}), flush=True)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps({"peak_rss_mb": report["peak_rss_mb"]}))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
