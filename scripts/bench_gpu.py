"""Device check of maeb's GPU path, in one prepared run of a few minutes on one GPU with no network.

It builds random checkpoints from transformers configs (a Whisper-medium-sized and a
wav2vec2-large-sized encoder; no download), writes synthetic tone clips with maeb.mock (a mix of
durations and of 16 and 44.1 kHz files, so decoding and resampling run in the background
threads), and embeds them through maeb's own Embedder, wrappers and cache, once per precision
and batching. Per configuration it prints clips/s, the share of wall time spent outside the
encoder forward, peak GPU memory and out-of-memory back-offs, and writes them as JSON.

    python scripts/bench_gpu.py --device cuda --wheelhouse .wheelhouse --out "$OUT/bench_gpu.json"
    python scripts/bench_gpu.py --device cpu --small        # here: tiny configs, a few clips

The GPU machine lacks soundfile and soxr (and may have an older transformers): --wheelhouse
unpacks them from the folder scripts/gpu_wheelhouse.sh fills into a temporary folder put first on
sys.path, before maeb is imported. Figures are wall-clock and noisy on a shared machine."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the working tree's maeb, not an installed one

# total seconds of audio per batch for --batch-seconds: whisper pads every clip to 30 s, so
# 960 s is 32 clips; wav2vec2 batches 960 one-second clips or 32 of 30 s
DEFAULT_BATCHINGS = ("size:16", "seconds:960")
SMALL_BATCHINGS = ("size:4", "seconds:60")
DURATIONS = ((1.0, 0.30), (3.0, 0.25), (5.0, 0.20), (10.0, 0.15), (20.0, 0.07), (30.0, 0.03))  # (s, share)
SMALL_DURATIONS = ((0.5, 0.5), (1.0, 0.3), (2.0, 0.2))


def install_wheelhouse(folder: Path) -> list[str]:
    """Unpack what this Python lacks from the wheelhouse into a temporary folder put first on
    sys.path (these wheels hold no .data parts, so unpacking is installing; no pip or index is
    needed); transformers and its pins too if the one here predates 4.56."""
    import zipfile

    missing = [name for name in ("soundfile", "soxr", "cffi", "pycparser") if importlib.util.find_spec(name) is None]
    wheels = [w for w in sorted(folder.glob("*.whl")) if w.name.split("-")[0].lower() in missing]
    try:
        from importlib.metadata import version

        major, minor = (int(p) for p in version("transformers").split(".")[:2])
        old = (major, minor) < (4, 56)
    except Exception:
        old = True
    if old:
        wheels += sorted((folder / "transformers").glob("*.whl"))
    if not wheels:
        return []
    target = Path(tempfile.mkdtemp(prefix="maeb-wheels-"))
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    return [w.name for w in wheels]


def write_clips(folder: Path, n: int, durations, seed: int = 0) -> list:
    """n tone clips of durations drawn from `durations` ((seconds, share) pairs); every other clip
    at 44.1 kHz, so the default protocol's resampler runs in the decode threads."""
    import numpy as np
    import soundfile as sf

    from maeb.audio.pipeline import AudioRef
    from maeb.mock import tone

    rng = np.random.default_rng(seed)
    seconds, shares = zip(*durations)
    folder.mkdir(parents=True, exist_ok=True)
    refs = []
    for i in range(n):
        length = float(rng.choice(seconds, p=np.array(shares) / sum(shares)))
        rate = 44100 if i % 2 else 16000
        path = folder / f"tone_{i:05d}.wav"
        sf.write(path, tone(float(rng.uniform(100, 4000)), length, rate, seed=i), rate)
        refs.append(AudioRef(path.name, path=str(path)))
    return refs


def build_checkpoints(folder: Path, small: bool, w2v_norms) -> dict[str, tuple[str, str]]:
    """name -> (family, path) of random checkpoints saved from configs."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2Model,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperModel,
    )

    torch.manual_seed(0)
    ids = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, vocab_size=64)
    if small:
        whisper = WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=128, **ids)
        w2v = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
        w2v.update(conv_dim=(32, 32), conv_stride=(5, 4), conv_kernel=(10, 4), num_conv_pos_embeddings=16)
        w2v.update(num_conv_pos_embedding_groups=2)
    else:  # whisper-medium's encoder; the decoder is cut to one small layer (maeb uses the encoder only)
        whisper = WhisperConfig(d_model=1024, encoder_layers=24, encoder_attention_heads=16, encoder_ffn_dim=4096, **ids)
        w2v = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    whisper.update({"decoder_layers": 1, "decoder_attention_heads": 2, "decoder_ffn_dim": 64, "max_target_positions": 32})
    out = {}
    path = folder / "whisper"
    WhisperModel(whisper).save_pretrained(path)
    WhisperFeatureExtractor(feature_size=80).save_pretrained(path)
    out["whisper-medium-random" if not small else "whisper-tiny-random"] = ("hf-whisper", str(path))
    for w2v_norm in w2v_norms:  # group: batched by identical length; layer: in mteb's call order, 32 a batch
        path = folder / f"wav2vec2-{w2v_norm}"
        norm = dict(feat_extract_norm=w2v_norm, do_stable_layer_norm=w2v_norm == "layer")
        Wav2Vec2Model(Wav2Vec2Config(**w2v, **norm)).save_pretrained(path)
        Wav2Vec2FeatureExtractor(return_attention_mask=True, do_normalize=True).save_pretrained(path)
        out[("wav2vec2-large-random" if not small else "wav2vec2-tiny-random") + f"-{w2v_norm}norm"] = ("hf-ssl", str(path))
    return out


def load(family: str, path: str, device: str, dtype: str | None):
    from maeb.encoders import ModelMeta, load_encoder
    from maeb.encoders.protocols import get_protocol

    meta = ModelMeta(name=f"bench/{Path(path).name}", family=family, revision="random", options={"path": path})
    options = {"dtype": dtype} if dtype else {}
    return meta, load_encoder(meta, device=device, protocol=get_protocol("mteb-2.26"), **options)


def measure(meta, encoder, refs, batching: str, device: str, cache_root: Path, workers: int | None) -> dict:
    """Embed every clip once (a fresh cache) and report the figures of the run."""
    import numpy as np

    from maeb.encoders import identity
    from maeb.engine.cache import EmbeddingCache
    from maeb.engine.embed import Embedder

    kind, value = batching.split(":")
    sizes = {"batch_size": int(value)} if kind == "size" else {"batch_seconds": float(value)}
    cache = EmbeddingCache(Path(tempfile.mkdtemp(dir=cache_root)), identity(meta, encoder, device=device))
    emb = Embedder(meta, encoder, cache, workers=workers, show_progress=False, **sizes)
    calls: list[int] = []
    forward = encoder.embed_audio
    encoder.embed_audio = lambda clips: (calls.append(len(clips)), forward(clips))[1]
    torch = sys.modules["torch"]
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    try:
        vectors, ok = emb.audio(refs)
    finally:
        encoder.embed_audio = forward
        cache.close()
    wall = time.perf_counter() - started
    s = emb.stats
    return {
        "batching": batching,
        "clips": int(ok.sum()),
        "audio_seconds": round(s.audio_seconds, 1),
        "wall_s": round(wall, 2),
        "clips_per_s": round(ok.sum() / wall, 1),
        "audio_s_per_s": round(s.audio_seconds / wall, 1),
        "outside_forward_share": round(max(0.0, 1 - s.forward_seconds / s.embed_wall_seconds), 3),
        "batches": len(calls),
        "mean_batch": round(float(np.mean(calls)), 1) if calls else 0,
        "oom_backoffs": s.oom_backoffs,
        "peak_gpu_mib": round(torch.cuda.max_memory_allocated() / 2**20) if cuda else None,
        "_vectors": vectors,
    }


def cosine_min(a, b) -> float:
    import numpy as np

    num = (a * b).sum(1)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return float(np.min(num / np.maximum(den, 1e-12)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--small", action="store_true", help="tiny configs and a few short clips (a CPU check)")
    ap.add_argument("--clips", type=int, help="clips to embed per configuration (default 384; 24 with --small)")
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16", "fp16"])
    ap.add_argument("--batchings", nargs="+", help=f"size:N or seconds:S (default {' '.join(DEFAULT_BATCHINGS)})")
    ap.add_argument("--w2v-norm", nargs="+", choices=["group", "layer"], default=["group", "layer"])
    ap.add_argument("--models", nargs="+", help="only these (whisper, wav2vec2)")
    ap.add_argument("--workers", type=int, help="decode threads (default: maeb's, up to 4)")
    ap.add_argument("--wheelhouse", type=Path, help="install missing packages from this folder first")
    ap.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    installed = install_wheelhouse(args.wheelhouse) if args.wheelhouse else []

    import torch
    import transformers

    from maeb.core.errors import MaebError
    from maeb.encoders import PRECISIONS, device_precision_problem

    transformers.utils.logging.disable_progress_bar()

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "device": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else platform.processor() or "cpu",
        "cpu_count": os.cpu_count(),
        "installed_from_wheelhouse": installed,
    }
    print(json.dumps(env), flush=True)
    batchings = args.batchings or (SMALL_BATCHINGS if args.small else DEFAULT_BATCHINGS)
    rows = []
    with tempfile.TemporaryDirectory(prefix="maeb-bench-gpu-") as tmp:
        work = Path(tmp)
        refs = write_clips(
            work / "clips", args.clips or (24 if args.small else 384), SMALL_DURATIONS if args.small else DURATIONS
        )
        models = build_checkpoints(work / "models", args.small, args.w2v_norm)
        print(f"data and checkpoints ready in {time.perf_counter() - t0:.1f} s", flush=True)
        header = f"{'model':34} {'prec':5} {'batching':13} {'clips/s':>8} {'audio s/s':>9} {'outside':>7} {'batch':>6} {'peak MiB':>8} {'oom':>3}"
        print(header, flush=True)
        for name, (family, path) in models.items():
            if args.models and not any(m in name for m in args.models):
                continue
            reference = {}
            for precision in args.precisions:
                problem = device_precision_problem(PRECISIONS[precision], args.device)
                if problem:
                    print(f"{name}: {precision} skipped: {problem}", flush=True)
                    continue
                meta, encoder = load(family, path, args.device, PRECISIONS[precision])
                if encoder.config().get("dtype") != PRECISIONS[precision]:
                    raise SystemExit(f"{name}: asked for {PRECISIONS[precision]}, loaded {encoder.config().get('dtype')}")
                measure(meta, encoder, refs[:8], batchings[0], args.device, work, args.workers)  # warm-up
                for batching in batchings:
                    row = {"model": name, "precision": precision, "batch_order": getattr(encoder, "batch_order", "length")}
                    try:
                        row.update(measure(meta, encoder, refs, batching, args.device, work, args.workers))
                    except MaebError as exc:  # e.g. one clip that does not fit: record it, go on
                        rows.append({**row, "batching": batching, "error": str(exc)})
                        print(f"{name:34} {precision:5} {batching:13} error: {exc}", flush=True)
                        continue
                    vectors = row.pop("_vectors")
                    reference.setdefault(batching, vectors)
                    row["cosine_min_vs_first_precision"] = round(cosine_min(vectors, reference[batching]), 5)
                    rows.append(row)
                    peak = row["peak_gpu_mib"] if row["peak_gpu_mib"] is not None else "-"
                    print(
                        f"{name:34} {precision:5} {batching:13} {row['clips_per_s']:8.1f} {row['audio_s_per_s']:9.1f} "
                        f"{row['outside_forward_share']:7.1%} {row['mean_batch']:6.1f} {peak!s:>8} {row['oom_backoffs']:3d}",
                        flush=True,
                    )
                del encoder
                if args.device.startswith("cuda"):
                    torch.cuda.empty_cache()
    total = round(time.perf_counter() - t0, 1)
    print(f"total {total} s", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"env": env, "rows": rows, "total_s": total}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
