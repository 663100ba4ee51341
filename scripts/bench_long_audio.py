"""Peak memory and time of embedding one long recording, head cut against windowed (maeb.audio.windows).

Each (clip, policy) runs in a fresh process, so its peak resident memory is its own:

    .venv/bin/python scripts/bench_long_audio.py --minutes 10 120 --model maeb/mfcc-stats

The clips are written once to --workdir (a 2-hour 16 kHz 16-bit WAV is 230 MB): noise with a
tone that changes every minute. The table gives the peak RSS over the process's baseline after
imports and the model load, the wall time and the windows embedded."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

CHILD = r"""
import json, resource, sys, time
from maeb import catalog
from maeb.audio.pipeline import AudioRef
from maeb.engine.cache import EmbeddingCache
from maeb.engine.embed import Embedder
from maeb.encoders import identity, load_encoder
from maeb.audio.windows import parse

path, model, policy, cache, batch = sys.argv[1:6]
meta = catalog.find_model(model)
encoder = load_encoder(meta)
emb = Embedder(meta, encoder, EmbeddingCache(cache, identity(meta, encoder)), window=parse(policy),
              batch_size=int(batch), show_progress=False)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
vectors, ok = emb.audio([AudioRef("long", path=path)])
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"peak_mb": (peak - base) / 1024, "seconds": seconds, "audio_seconds": emb.stats.audio_seconds,
                  "ok": bool(ok.all()), "dim": int(vectors.shape[1])}))
"""


def write_clip(path: Path, minutes: float, rate: int) -> None:
    """Noise plus a tone that changes each minute, written a minute at a time (no 2-hour array here)."""
    rng = np.random.default_rng(0)
    with sf.SoundFile(path, "w", samplerate=rate, channels=1, subtype="PCM_16") as out:
        for minute in range(int(np.ceil(minutes))):
            n = int(rate * min(60.0, (minutes - minute) * 60.0))
            t = np.arange(n) / rate
            freq = 200.0 * (1 + minute % 10)
            out.write((0.3 * np.sin(2 * np.pi * freq * t) + 0.05 * rng.standard_normal(n)).astype(np.float32))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, nargs="+", default=[10.0, 120.0])
    parser.add_argument("--rate", type=int, default=16000, help="the clips' sampling rate")
    parser.add_argument("--model", default="maeb/mfcc-stats")
    parser.add_argument("--policies", nargs="+", default=["head", "mean", "max:window=10,hop=5"])
    parser.add_argument("--batch-size", type=int, default=16, help="windows (clips) per encoder batch")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="maeb-long-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for minutes in args.minutes:
        clip = work / f"clip_{minutes:g}min_{args.rate}.wav"
        if not clip.exists():
            write_clip(clip, minutes, args.rate)
        for policy in args.policies:
            cache = tempfile.mkdtemp(dir=work, prefix="cache-")  # a fresh cache: every run embeds
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(clip), args.model, policy, str(cache), str(args.batch_size)],
                capture_output=True,
                text=True,
            )
            if out.returncode:
                print(out.stderr.strip().splitlines()[-1], file=sys.stderr)
                return 1
            row = {"minutes": minutes, "file_mb": clip.stat().st_size / 2**20, "policy": policy, **json.loads(out.stdout)}
            rows.append(row)
            print(
                f"{minutes:6g} min ({row['file_mb']:6.1f} MB file)  {policy:22s} peak +{row['peak_mb']:7.1f} MB  "
                f"{row['seconds']:7.1f} s  audio embedded {row['audio_seconds']:7.0f} s",
                flush=True,
            )
    (work / "bench_long_audio.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
