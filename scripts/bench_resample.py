"""Resampling speed per 2 s clip over a grid of real-world rate pairs: maeb.audio.resample (torchaudio's sinc
resampler reproduced on torch and numpy) as it runs now, the dense convolution it used for every pair
before (torchaudio's own formulation; where its kernel fits in memory), soxr, and torchaudio itself when it
imports (.venv-parity). The sides alternate within each round (the order rotates per round) so drifting
machine load hits them alike; prints the median milliseconds per call, which path maeb took, and the
largest difference between maeb and the dense convolution (and torchaudio).

    python scripts/bench_resample.py                      # the grid, 2 s clips, 7 rounds
    python scripts/bench_resample.py --random 40 --no-before   # plus 40 random integer rates in 8-96 kHz
    python scripts/bench_resample.py --seconds 60 --pairs 44100:16000 24414:16000
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import soxr
import torch

from maeb.audio import resample as rs

SOURCES = (8000, 11025, 12000, 16000, 22050, 22254, 24000, 24414, 32000, 37800, 44056, 44100, 47999, 48000, 64000, 88200, 96000)
TARGETS = (16000, 22050, 24000, 32000, 44100, 48000)  # the rates models take (speech, CLAP, EnCodec, PANNs, music)
BEFORE_LIMIT = 100_000_000  # dense kernels above this many floats are not built (float64 temporaries of several GB)
TARGET_MS = 5.0


def _audio(seconds: float, rate: int) -> np.ndarray:
    """Speech-band tones and pink-ish noise: content over the whole band, like a recording."""
    rng = np.random.default_rng(rate)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    tones = sum(np.sin(2 * np.pi * f * t) / k for k, f in enumerate((180.0, 440.0, 1250.0, 3100.0), start=1))
    noise = np.cumsum(rng.standard_normal(n)) * 1e-3
    x = tones + noise - np.mean(noise) + 0.05 * rng.standard_normal(n)
    return (0.9 * x / np.max(np.abs(x))).astype(np.float32)


def _dense(x: np.ndarray, orig_rate: int, new_rate: int) -> np.ndarray:
    """The path every pair took before: torchaudio's dense strided convolution (kernel built once)."""
    orig, new = rs._reduced(orig_rate, new_rate)
    key = ("dense", orig, new)
    if key not in _DENSE:
        _DENSE.clear()  # one at a time: they can be hundreds of MB
        _DENSE[key] = rs._build_kernel(orig, new, "transforms")
    return rs._dense(x, orig, new, _DENSE[key], rs.output_length(x.size, orig, new))


_DENSE: dict = {}


def _dense_floats(orig: int, new: int) -> int:
    return new * (2 * rs._half_width(orig, new) + orig)


def _pairs(args) -> list[tuple[int, int]]:
    if args.pairs:
        return [tuple(int(v) for v in p.split(":")) for p in args.pairs]
    pairs = [(o, n) for o in SOURCES for n in TARGETS if o != n]
    rng = np.random.default_rng(args.seed)
    for o in rng.integers(8000, 96001, args.random).tolist():
        pairs += [(int(o), n) for n in (16000, 48000)]
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="audio length per call (default 2)")
    parser.add_argument("--rounds", type=int, default=7, help="timed calls per side and pair (after one warm-up)")
    parser.add_argument("--pairs", nargs="*", metavar="ORIG:NEW", help="these pairs instead of the grid")
    parser.add_argument("--random", type=int, default=0, metavar="N", help="also N random source rates in 8-96 kHz")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-before", action="store_true", help="skip the dense convolution (the slow side)")
    args = parser.parse_args()

    sides = {"maeb": lambda x, o, n: rs.resample(x, o, n), "soxr": lambda x, o, n: soxr.resample(x, o, n)}
    if not args.no_before:
        sides["before"] = _dense
    try:
        import torchaudio.transforms as ta_transforms

        modules: dict = {}

        def torchaudio_side(x, o, n):
            if (o, n) not in modules:
                modules.clear()
                modules[(o, n)] = ta_transforms.Resample(o, n)
            return modules[(o, n)](torch.from_numpy(x)).numpy()

        sides["torchaudio"] = torchaudio_side
    except Exception as error:  # any failure to import just drops the side
        print(f"torchaudio not benchmarked ({type(error).__name__}: {error})")

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start")
    print(
        f"{args.seconds:g} s clips, median ms per call of {args.rounds} rounds after a warm-up (which builds the kernel), "
        f"torch threads {torch.get_num_threads()}; dense where it costs <= {rs.DENSE_MACS} multiply-adds per output second"
    )
    names = list(sides)
    print(
        f"{'pair':>13} {'reduced':>13} {'path':>6}"
        + "".join(f"{name + ' ms':>14}" for name in names)
        + f"{'max|maeb-before|':>18}{'max|maeb-ta|':>14}"
    )
    worst = (0.0, None)
    for orig, new in _pairs(args):
        o, n = rs._reduced(orig, new)
        path = "dense" if rs.uses_dense(orig, new) else "poly"
        x = _audio(args.seconds, orig)
        usable = [s for s in names if s not in ("before", "torchaudio") or _dense_floats(o, n) <= BEFORE_LIMIT]
        outputs = {name: sides[name](x, orig, new) for name in usable}  # warm-up: kernels, allocator, threads
        times: dict[str, list[float]] = {name: [] for name in usable}
        # single-threaded sides alternate with each other, then the sides that run torch's thread team (whose
        # threads spin for a while after each call and would be timed as load on the next side)
        for group in (["maeb", "soxr"], [s for s in usable if s in ("before", "torchaudio")]):
            time.sleep(0.05)
            for round_ in range(args.rounds if group else 0):
                shift = round_ % len(group)
                for name in group[shift:] + group[:shift]:
                    start = time.perf_counter()
                    sides[name](x, orig, new)
                    times[name].append(time.perf_counter() - start)
        median = {name: 1000 * statistics.median(times[name]) for name in usable}
        if median["maeb"] > worst[0]:
            worst = (median["maeb"], (orig, new))
        cells = ""
        for name in names:
            if name in median:
                cells += f"{median[name]:14.2f}"
            else:
                gb = _dense_floats(o, n) * 8 / 1e9
                cells += f"{'(' + format(gb, '.0f') + ' GB)':>14}"
        diffs = ""
        for other in ("before", "torchaudio"):
            if other in outputs:
                diffs += f"{float(np.max(np.abs(outputs['maeb'] - outputs[other]))):{18 if other == 'before' else 14}.2g}"
            else:
                diffs += f"{'-':>{18 if other == 'before' else 14}}"
        print(f"{f'{orig}->{new}':>13} {f'{o}/{n}':>13} {path:>6}" + cells + diffs, flush=True)
    verdict = "meets" if worst[0] <= TARGET_MS * args.seconds / 2 else "misses"
    print(f"slowest maeb pair: {worst[1][0]}->{worst[1][1]} at {worst[0]:.2f} ms ({verdict} {TARGET_MS:g} ms per 2 s clip)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("(N GB): the dense kernel's float64 temporaries; that side was not run. Differences are in float32 samples.")


if __name__ == "__main__":
    main()
