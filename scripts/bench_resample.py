"""Resampling speed: maeb.resample (torchaudio's sinc resampler, reproduced on torch) against soxr and,
when it imports, torchaudio itself, on the same 60 s of audio per rate pair. The sides alternate within
each round (the order rotates per round) so drifting machine load hits them alike; prints the median
seconds per call, each one's ratio to maeb, and maeb's largest difference from torchaudio.

    python scripts/bench_resample.py --seconds 60 --rounds 7
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import soxr
import torch

from maeb.resample import resample

PAIRS = [(44100, 16000), (48000, 16000), (8000, 16000), (44100, 48000)]


def _audio(seconds: float, rate: int) -> np.ndarray:
    """Speech-band tones and pink-ish noise: content over the whole band, like a recording."""
    rng = np.random.default_rng(rate)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    tones = sum(np.sin(2 * np.pi * f * t) / k for k, f in enumerate((180.0, 440.0, 1250.0, 3100.0), start=1))
    noise = np.cumsum(rng.standard_normal(n)) * 1e-3
    x = tones + noise - np.mean(noise) + 0.05 * rng.standard_normal(n)
    return (0.9 * x / np.max(np.abs(x))).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="audio length per call")
    parser.add_argument("--rounds", type=int, default=7, help="timed calls per side and pair (after one warm-up)")
    args = parser.parse_args()

    sides = {
        "maeb": lambda x, o, n: resample(x, o, n),
        "soxr": lambda x, o, n: soxr.resample(x, o, n),
    }
    try:
        import torchaudio.transforms as ta_transforms

        def torchaudio_side(x, o, n):
            return ta_transforms.Resample(o, n)(torch.from_numpy(x)).numpy()

        sides["torchaudio"] = torchaudio_side
    except Exception as error:  # any failure to import just drops the side
        print(f"torchaudio not benchmarked ({type(error).__name__}: {error})")

    print(f"{args.seconds:g} s of audio, median of {args.rounds} rounds, torch threads {torch.get_num_threads()}")
    header = f"{'pair':>13}" + "".join(f"{name + ' s':>13}" for name in sides)
    header += "".join(f"{name + '/maeb':>16}" for name in sides if name != "maeb") + f"{'max|maeb-ta|':>14}"
    print(header)
    for orig, new in PAIRS:
        x = _audio(args.seconds, orig)
        names = list(sides)
        outputs = {name: sides[name](x, orig, new) for name in names}  # warm-up: kernels, allocator, threads
        times: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(args.rounds):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                start = time.perf_counter()
                sides[name](x, orig, new)
                times[name].append(time.perf_counter() - start)
        median = {name: statistics.median(times[name]) for name in names}
        row = f"{f'{orig}->{new}':>13}" + "".join(f"{median[name]:13.4f}" for name in names)
        row += "".join(f"{median[name] / median['maeb']:16.2f}" for name in names if name != "maeb")
        if "torchaudio" in outputs:
            row += f"{float(np.max(np.abs(outputs['maeb'] - outputs['torchaudio']))):14.2g}"
        else:
            row += f"{'-':>14}"
        print(row)


if __name__ == "__main__":
    main()
