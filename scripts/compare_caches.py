"""How far two embedding caches' vectors of the same clips differ: the measurement behind
maeb.run.stability.EPS, from the caches of two `maeb lite` runs (say native and under an imitated CPU).

  python scripts/compare_caches.py CACHE_DIR_A CACHE_DIR_B

Each model's cache file (embeddings/*.sqlite, the same name in both: the same model and settings)
is read whole; per clip the relative move ||a - b|| / ||a|| of its vector. A move over 1e-3 is a
discrete change (another transcript, another path), counted apart, not rounding."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import numpy as np

JUMP = 1e-3


def vectors(path: Path) -> dict[str, bytes]:
    """A cache file's vectors by clip key (raw float32 bytes)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return dict(db.execute("select key, vec from emb").fetchall())


def compare(a: dict[str, bytes], b: dict[str, bytes]) -> dict:
    """Clips in both, how many are bit-equal, how many jumped, and the largest rounding move."""
    moves = []
    for key in sorted(a.keys() & b.keys()):
        x = np.frombuffer(a[key], dtype=np.float32).astype(np.float64)
        y = np.frombuffer(b[key], dtype=np.float32).astype(np.float64)
        if x.shape == y.shape:
            moves.append(float(np.linalg.norm(x - y) / max(np.linalg.norm(x), 1e-30)))
    m = np.array(moves)
    small = m[m <= JUMP]
    return {
        "clips": len(m),
        "equal": int((m == 0).sum()),
        "jumps": int((m > JUMP).sum()),
        "largest": float(small.max()) if small.size else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    for path in sorted((args.a / "embeddings").glob("*.sqlite")):
        other = args.b / "embeddings" / path.name
        if not other.exists():
            print(f"{path.stem}: not in {args.b}")
            continue
        c = compare(vectors(path), vectors(other))
        print(
            f"{path.stem:64} clips {c['clips']:5} equal {c['equal']:5} jumps {c['jumps']:3} largest |dv|/|v| {c['largest']:.2e}"
        )


if __name__ == "__main__":
    main()
