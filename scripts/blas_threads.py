"""How many BLAS threads should the small evaluator fits use? Times MAEB's linear probe
(LogisticRegression, max_iter=100) and k-means (MiniBatchKMeans, n_init 1) on MAEB-lite-sized data
under the machine's default thread count and under one thread, alternating the two sides so that
load from other processes falls on both alike.

  python scripts/blas_threads.py [--rounds 5]

Prints each side's median seconds and the ratio default / one thread per fit."""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_info, threadpool_limits


def probe(x, y) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unconverged fit is MAEB's protocol
        LogisticRegression(max_iter=100).fit(x, y)


def kmeans(x, y) -> None:
    idx = np.random.default_rng(0).integers(0, len(x), 16384)  # mteb's bootstrap draw size
    MiniBatchKMeans(n_clusters=len(set(y)), batch_size=512, n_init=1, random_state=42).fit_predict(x[idx])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    data = {}
    for dim in (96, 384):  # speech-embedding's and MiniLM's / whisper-tiny's widths
        y = rng.integers(0, 10, 240)
        data[dim] = ((rng.normal(size=(10, dim))[y] + rng.normal(size=(240, dim))) * 30).astype(np.float32), y
    default = max((lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"), default=1)
    print(f"BLAS threads by default: {default}")
    for name, fit in (("probe", probe), ("kmeans", kmeans)):
        for dim, (x, y) in data.items():
            times: dict[int, list[float]] = {default: [], 1: []}
            for r in range(args.rounds):
                for threads in (default, 1) if r % 2 == 0 else (1, default):  # alternate which side goes first
                    with threadpool_limits(threads, user_api="blas"):
                        started = time.perf_counter()
                        fit(x, y)
                        times[threads].append(time.perf_counter() - started)
            a, b = statistics.median(times[default]), statistics.median(times[1])
            print(f"{name:7} dim {dim:4}: {default} threads {a:.3f} s, 1 thread {b:.3f} s, ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
