"""MAEB-lite's vectors as a file: what a run's encoders produced, per model, so that `lite --check`
judges encoders (this machine's vectors against the reference's) apart from evaluators (the
reference's vectors scored on this machine).

One file per model, `vectors/ORG__MODEL.npz` beside the result folders (numpy's compressed format,
read with allow_pickle=False): `keys` (the cache's content keys: a clip's hash, "t:..." for a text),
`vectors` (float32, one row per key), `names` (a clip's file under the MAEB-lite folder, '' for a
text) and `meta`, one JSON string: the model, its family, the cache file, the numeric environment
and, in the committed reference, the evaluator bands (maeb.benchmarks.lite.evaluators).

The encoder stage compares two such files per model: each clip's relative move ||a - b|| / ||a||
and its cosine, against the family's declared Tolerance. Rounding (another CPU's kernels, another
library build) moves a float32 vector by 1e-7 to a few 1e-6; a change of the encoder (other
weights, pooling, length policy) by far more. A cascade (the transcript model) can also jump: a
clip whose transcript differs gets another text's vector; those are counted and named, against the
family's allowance."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...core.errors import MaebError

FORMAT = 1
FOLDER = "vectors"
JUMP = 1e-3  # a relative move beyond this is a discrete change (another transcript), not rounding


@dataclass(frozen=True)
class Tolerance:
    """How far a family's vectors may move between machines, and why."""

    relative: float  # largest ||dv|| / ||v|| of one clip's vector
    cosine: float  # smallest cosine between a clip's two vectors
    jumps: float = 0.0  # share of clips a cascade may map to another intermediate text
    why: str = ""


# declared per family: a few times more than the largest rounding move measured between set-ups
# (docs/reproducibility.md, "The encoder stage"), and orders of magnitude below what a change of the
# encoder makes (1e-2 noise; another pooling)
FLOAT32_NETWORK = Tolerance(
    1e-4,
    0.9999,
    why="a float32 network: another CPU's kernels reorder sums (measured up to 2.3e-6 between the imitated set-ups)",
)
TOLERANCES: dict[str, Tolerance] = {
    "mfcc": Tolerance(1e-5, 0.99999, why="numpy's float64 FFT and filter bank, stored as float32 (measured 1.3e-7)"),
    "openwakeword": Tolerance(
        1e-4,
        0.9999,
        why="ONNX Runtime picks its kernels for the CPU (AVX-512 on a Xeon) and heeds no imitation variable; float32",
    ),
    "resemblyzer": Tolerance(1e-4, 0.9999, why="torch's float32 LSTM (MKL and ATen kernels per CPU; measured 2.3e-6)"),
    "ct2-whisper": Tolerance(1e-4, 0.9999, why="CTranslate2's float32 encoder, its ISA chosen per CPU (measured 2.2e-6)"),
    "transcript": Tolerance(
        1e-4,
        0.9999,
        jumps=0.03,
        why="a cascade: greedy Whisper decoding can pick another token when logits nearly tie, giving another "
        "transcript (a jump, counted and named); clips with the same transcript move by MiniLM's rounding (1.8e-6)",
    ),
}


def tolerance_of(family: str) -> Tolerance:
    """The family's declared tolerance (a float32 network's where none is declared)."""
    return TOLERANCES.get(family, FLOAT32_NETWORK)


@dataclass
class Vectors:
    """One model's vectors by content key, with what the file says of them."""

    keys: list[str]
    matrix: np.ndarray
    names: list[str]
    meta: dict = field(default_factory=dict)

    def by_key(self) -> dict[str, np.ndarray]:
        """The vectors by content key."""
        return dict(zip(self.keys, self.matrix))


def file_of(root: Path, model: str) -> Path:
    """Where a model's vectors live under a MAEB-lite results folder."""
    return Path(root) / FOLDER / (model.replace("/", "__", 1) + ".npz")


def read_cache(path: Path, keys: set[str] | None = None) -> dict[str, np.ndarray]:
    """A cache file's vectors (all, or those of `keys`), read-only."""
    try:
        with sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT key, vec FROM emb").fetchall()
    except sqlite3.Error as exc:
        raise MaebError(f"cannot read the embedding cache {path} ({exc})") from exc
    return {k: np.frombuffer(v, dtype=np.float32) for k, v in rows if keys is None or k in keys}


def write(path: Path, vectors: dict[str, np.ndarray], names: dict[str, str], meta: dict) -> Path:
    """Write a vectors file atomically (a temporary file renamed), rows sorted by key."""
    keys = sorted(vectors)
    if not keys:
        raise MaebError(f"no vectors to write to {path}")
    matrix = np.stack([np.asarray(vectors[k], dtype=np.float32) for k in keys])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(
                handle,
                keys=np.array(keys),
                vectors=matrix,
                names=np.array([names.get(k, "") for k in keys]),
                meta=np.array(json.dumps({"format": FORMAT, **meta}, sort_keys=True, default=str)),
            )
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # a plain file's mode, not mkstemp's private one
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read(path: Path, hint: str = "regenerate it") -> Vectors:
    """A vectors file (MaebError naming it and what is wrong when it cannot be read or is not in
    the format: hint says what to do, the reference's "regenerate it", a run's "rerun")."""
    if not zipfile.is_zipfile(path):  # (np.load of other bytes tries them as a pickle and says so)
        raise MaebError(
            f"vectors file {path} cannot be read (not a numpy .npz archive: truncated, empty or another file); {hint}"
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = [str(k) for k in data["keys"]]
            stored = data["vectors"]
            names = [str(n) for n in data["names"]]
            meta = json.loads(str(data["meta"]))
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:  # a truncated or empty file too
        raise MaebError(f"vectors file {path} cannot be read ({type(exc).__name__}: {exc}); {hint}") from exc
    # float32 as written, float64 tolerated; text parses, complex loses its imaginary part and ints
    # are no encoder's output: each would be compared as if it were the vectors
    if stored.dtype.kind != "f":
        raise MaebError(f"vectors file {path}: the vectors are {stored.dtype}, not floating point; {hint}")
    matrix = np.asarray(stored, dtype=np.float32)
    if not isinstance(meta, dict):
        raise MaebError(f"vectors file {path}: its meta is a JSON {type(meta).__name__}, not an object; {hint}")
    family = meta.get("family", "")
    if not isinstance(family, str):
        raise MaebError(f"vectors file {path}: its family is {family!r}, not a name (its tolerance is the family's); {hint}")
    if matrix.ndim != 2 or len(keys) != len(matrix):
        raise MaebError(f"vectors file {path}: {len(keys)} keys for a matrix of shape {matrix.shape}; {hint}")
    if len(names) != len(keys):
        raise MaebError(f"vectors file {path}: {len(names)} names for {len(keys)} keys; {hint}")
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise MaebError(f"vectors file {path}: the key {twice} appears more than once; {hint}")
    return Vectors(keys, matrix, names, meta)


def update_meta(path: Path, **entries) -> None:
    """Add entries to a vectors file's meta (the evaluator bands, measured after the run)."""
    v = read(path)
    write(path, v.by_key(), dict(zip(v.keys, v.names)), {**v.meta, **entries})


def clip_names(lite_dir: Path) -> dict[str, str]:
    """The content key of every audio file under the MAEB-lite folder, to its path there."""
    from ...audio.pipeline import AudioRef

    root = Path(lite_dir)
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() in (".wav", ".flac", ".mp3", ".ogg") and path.is_file():
            name = str(path.relative_to(root))
            out.setdefault(AudioRef(name, path=str(path)).key, name)
    return out


@dataclass
class EncoderVerdict:
    """One model's vectors on this machine against the reference's."""

    model: str
    family: str
    tolerance: Tolerance
    compared: int = 0
    missing: list[str] = field(default_factory=list)  # reference keys this run has no vector for (tasks it did not run)
    largest: float = 0.0  # largest relative move of a clip that did not jump
    largest_name: str = ""
    smallest_cosine: float = 1.0
    jumps: list[str] = field(default_factory=list)  # clips whose vector changed discretely
    bad_shape: str = ""
    non_finite: list[str] = field(default_factory=list)  # clips whose vector holds NaN or inf (in either file)

    @property
    def allowed_jumps(self) -> int:
        """How many jumps the family's allowance admits over the compared clips."""
        return int(math.floor(self.tolerance.jumps * self.compared))

    @property
    def problem(self) -> str:
        """Why the vectors are beyond the family's tolerance ('' when within)."""
        t = self.tolerance
        if self.bad_shape:
            return self.bad_shape
        if self.non_finite:
            return f"{len(self.non_finite)} vectors hold NaN or inf (first: {self.non_finite[0]})"
        if not self.compared:  # (some missing are a run of some tasks; other clips are the inputs stage's)
            first = f" (first: {self.missing[0]})" if self.missing else ""
            return f"none of the reference's {len(self.missing)} clips and texts has a vector in the run{first}"
        if self.largest > t.relative:
            return f"largest relative difference {self.largest:.2e} (clip {self.largest_name}) over the tolerance {t.relative:g}"
        if self.smallest_cosine < t.cosine:
            return f"smallest cosine {self.smallest_cosine:.6f} under the tolerance {t.cosine}"
        if len(self.jumps) > self.allowed_jumps:
            return (
                f"{len(self.jumps)} clips changed discretely (over the allowance of {self.allowed_jumps}: "
                f"{t.jumps:.0%} of {self.compared}): {', '.join(self.jumps[:5])}" + (" ..." if len(self.jumps) > 5 else "")
            )
        return ""

    def summary(self) -> str:
        """One line: what was compared and how far apart it is."""
        jumped = f", {len(self.jumps)} jumped (allowed {self.allowed_jumps})" if self.tolerance.jumps else ""
        unused = f"; {len(self.missing)} of the reference's not in this run (tasks not run)" if self.missing else ""
        return (
            f"{self.compared} vectors, largest relative difference {self.largest:.2e} (tolerance {self.tolerance.relative:g}), "
            f"smallest cosine {self.smallest_cosine:.7f} (tolerance {self.tolerance.cosine}){jumped}{unused}"
        )


def compare(reference: Vectors, run: Vectors, model: str, family: str) -> EncoderVerdict:
    """The encoder stage for one model: every reference vector against the run's of the same key."""
    tol = tolerance_of(family)
    verdict = EncoderVerdict(model, family, tol)
    mine = run.by_key()
    names = dict(zip(reference.keys, reference.names))
    if reference.matrix.shape[1] != run.matrix.shape[1]:
        verdict.bad_shape = f"{run.matrix.shape[1]}-d vectors in the run, {reference.matrix.shape[1]}-d in the reference"
        return verdict
    for key, a in zip(reference.keys, reference.matrix):
        b = mine.get(key)
        if b is None:
            verdict.missing.append(names.get(key) or key)
            continue
        verdict.compared += 1
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        if not (np.isfinite(a64).all() and np.isfinite(b64).all()):  # NaN compares as no move at all
            verdict.non_finite.append(names.get(key) or key)
            continue
        norm_a, norm_b = float(np.linalg.norm(a64)), float(np.linalg.norm(b64))
        move = float(np.linalg.norm(a64 - b64)) / max(norm_a, 1e-30)
        cosine = float(a64 @ b64) / max(norm_a * norm_b, 1e-30) if norm_a and norm_b else float(norm_a == norm_b)
        if tol.jumps and move > JUMP:  # a cascade's other intermediate text: counted, not a rounding move
            verdict.jumps.append(names.get(key) or key)
            continue
        if move > verdict.largest:
            verdict.largest, verdict.largest_name = move, names.get(key) or key
        verdict.smallest_cosine = min(verdict.smallest_cosine, cosine)
    return verdict
