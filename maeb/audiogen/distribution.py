"""FD, KL and IS on PANNs CNN14, as the audio-generation evaluation toolkit of AudioLDM
(audioldm_eval, which AudioLDM 2, Tango and the papers comparing with them report) computes
them. One CNN14 forward per generated clip and per reference clip gives the 2048-d
embedding (FD) and the 527 logits (KL, IS). Choices, each the toolkit's:

- input: mono, DC removed, resampled to 16 kHz, zero-padded to 2 s; the 16 kHz CNN14 checkpoint
  (Cnn14_16k_mAP=0.438), one clip per forward (we batch only clips of equal length, which gives the
  same numbers).
- fd: Frechet distance between Gaussians fitted (mean, unbiased covariance) to the embeddings of
  the generated set and of the reference set; float64; sqrtm of sigma1 @ sigma2, retried with 1e-6
  added to both diagonals when the result is not finite, real part kept when the imaginary part of
  the diagonal is below 1e-3 (as pytorch-fid / the toolkit do; a larger one is an error). When the
  sets are smaller than the feature dimension, both covariances live in the span of the centred
  features, and the same distance is computed exactly in that span (`fd_from_features`) instead of
  on 2048x2048 matrices (a minute of sqrtm on two cores for nothing).
- kl: the toolkit's "KL" (softmax over logits; it calls it AudioGen's formulation): for each
  (generated, reference) pair matched by request key, KL(reference || generated) =
  sum_c q_c (log q_c - log(p_c + 1e-6)), q = softmax(reference logits), p = softmax(generated
  logits), summed over the 527 classes and averaged over pairs. Option kl_activation = "sigmoid"
  gives its "KL_Sigmoid" instead (the same sum over per-class sigmoids).
- is: Inception score of softmax(logits) of the generated set in float64, 10 splits after a
  permutation with seed 2020 (clips ordered by request key first, as the toolkit sorts files); no
  eps (exact log-probabilities, 0 log 0 = 0). With fewer clips than splits, splits = clips.

Reference outputs are cached (cache_dir/mmag-features/<model id>/<digest>.npy, the 2048 embedding
then the 527 logits, float32) so a second system scored on the same data reuses them."""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ..core.errors import CacheError, DataError, MaebError, check_keys
from . import cnn14
from .metric import GeneratedItem, MetricUnavailable

KL_EPS = 1e-6
FD_EPS = 1e-6
IS_SPLITS = 10
IS_SEED = 2020
OPTIONS = {"checkpoint", "seed", "batch_size", "kl_activation", "is_splits", "is_seed"}
PROTOCOL = "p1"  # bump when the clip preparation changes: cached reference outputs then differ


def gaussian_stats(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, unbiased covariance) of (n, d) features in float64."""
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"gaussian_stats needs (n >= 2, d) features, got shape {x.shape}")
    return x.mean(axis=0), np.atleast_2d(np.cov(x, rowvar=False))


def frechet_distance(mu1, sigma1, mu2, sigma2, eps: float = FD_EPS) -> float:
    """||mu1 - mu2||^2 + tr(sigma1 + sigma2 - 2 sqrt(sigma1 sigma2)), in float64."""
    from scipy import linalg

    mu1, mu2 = np.atleast_1d(np.asarray(mu1, np.float64)), np.atleast_1d(np.asarray(mu2, np.float64))
    s1, s2 = np.atleast_2d(np.asarray(sigma1, np.float64)), np.atleast_2d(np.asarray(sigma2, np.float64))
    if mu1.shape != mu2.shape or s1.shape != s2.shape or s1.shape != (mu1.size, mu1.size):
        raise ValueError(f"frechet_distance: mismatched shapes {mu1.shape} {s1.shape} / {mu2.shape} {s2.shape}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linalg.LinAlgWarning)  # ill-conditioning is handled below
        covmean = linalg.sqrtm(s1 @ s2)
        if not np.isfinite(covmean).all() or _imaginary(covmean) > 1e-3:
            # a (nearly) singular product: the usual FID remedy, a small offset on both diagonals
            offset = np.eye(s1.shape[0]) * eps
            covmean = linalg.sqrtm((s1 + offset) @ (s2 + offset))
    if _imaginary(covmean) > 1e-3:
        raise MaebError(
            f"Frechet distance: sqrtm has an imaginary part {_imaginary(covmean):.3g}; the covariances are degenerate"
        )
    covmean = np.real(covmean)
    diff = mu1 - mu2
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2.0 * np.trace(covmean))


def _imaginary(matrix) -> float:
    return float(np.abs(np.diagonal(matrix).imag).max()) if np.iscomplexobj(matrix) else 0.0


def fd_from_features(x: np.ndarray, y: np.ndarray, eps: float = FD_EPS, reduce: bool | None = None) -> float:
    """frechet_distance(gaussian_stats(x), gaussian_stats(y)). When n + m < d (reduce None) or
    reduce is True, both covariances are written in an orthonormal basis Q of the span of the
    centred features: sigma = Q S Q^T, so their traces and tr sqrt(sigma1 sigma2) are those of the
    small S1, S2 and the distance is unchanged."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    mu_x, mu_y = x.mean(axis=0), y.mean(axis=0)
    if reduce is None:
        reduce = len(x) + len(y) < x.shape[1]
    if not reduce:
        return frechet_distance(*gaussian_stats(x), *gaussian_stats(y), eps=eps)
    q, _ = np.linalg.qr(np.concatenate([x - mu_x, y - mu_y]).T)  # (d, n + m)
    _, s1 = gaussian_stats((x - mu_x) @ q)
    _, s2 = gaussian_stats((y - mu_y) @ q)
    zero = np.zeros(q.shape[1])
    diff = mu_x - mu_y
    return float(diff @ diff) + frechet_distance(zero, s1, zero, s2, eps=eps)


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _xlogy(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """p * log q with 0 where p is 0 (0 log 0 = 0)."""
    out = np.zeros_like(p)
    mask = p > 0
    out[mask] = p[mask] * np.log(q[mask])
    return out


def kl_divergence(generated_logits, reference_logits, activation: str = "softmax", eps: float = KL_EPS) -> np.ndarray:
    """Per pair KL(reference || generated) = sum_c q (log q - log(p + eps)) over classes, float64;
    q, p the softmax (or per-class sigmoid) of the reference and generated logits."""
    gen, ref = np.asarray(generated_logits, np.float64), np.asarray(reference_logits, np.float64)
    if gen.shape != ref.shape:
        raise ValueError(f"kl_divergence: {gen.shape} generated vs {ref.shape} reference logits")
    if activation == "softmax":
        p, q = _softmax(gen), _softmax(ref)
    elif activation == "sigmoid":
        p, q = 1.0 / (1.0 + np.exp(-gen)), 1.0 / (1.0 + np.exp(-ref))
    else:
        raise ValueError(f"unknown KL activation {activation!r}; use softmax or sigmoid")
    return (_xlogy(q, q) - q * np.log(p + eps)).sum(axis=-1)


def inception_score(probs: np.ndarray, splits: int = IS_SPLITS, seed: int | None = IS_SEED) -> tuple[float, float]:
    """(mean, std) over splits of exp(E_x KL(p(y|x) || p(y))) for (n, classes) probabilities; rows
    permuted with RandomState(seed) first (None: kept in order)."""
    p = np.asarray(probs, np.float64)
    n = len(p)
    if n == 0 or not 1 <= splits <= n:
        raise ValueError(f"inception_score: {splits} splits of {n} clips")
    if seed is not None:
        p = p[np.random.RandomState(seed).permutation(n)]
    scores = []
    for i in range(splits):
        chunk = p[i * n // splits : (i + 1) * n // splits]
        marginal = np.broadcast_to(chunk.mean(axis=0, keepdims=True), chunk.shape)
        kl = (_xlogy(chunk, chunk) - _xlogy(chunk, marginal)).sum(axis=1)
        scores.append(float(np.exp(kl.mean())))
    return float(np.mean(scores)), float(np.std(scores))


def reference_digest(samples: np.ndarray, rate: int) -> str:
    """Content address of a reference clip: its float32 samples and rate."""
    digest = hashlib.blake2b(np.ascontiguousarray(samples, dtype=np.float32).tobytes(), digest_size=16)
    digest.update(f"rate={int(rate)}".encode())
    return digest.hexdigest()


class CNN14Scores:
    """The "cnn14" scorer group: fd and is (set level), kl (mean over matched pairs). Options:
    checkpoint ("panns-cnn14-16k" default, "random", or a .pth path), seed (for "random"),
    batch_size, kl_activation (softmax|sigmoid), is_splits, is_seed. After result(): per_clip
    (key -> {"kl": ...}) and extras (is_std, is_splits used, clip counts)."""

    name = "cnn14"
    level = "set"

    def __init__(self, keys, options, device="cpu", cache_dir=None) -> None:
        options = dict(options or {})
        check_keys("cnn14 scorer options", options, OPTIONS)
        self.keys = tuple(keys)
        self.device = device
        self.batch_size = int(options.get("batch_size", 8))
        self.kl_activation = options.get("kl_activation", "softmax")
        if self.kl_activation not in ("softmax", "sigmoid"):
            raise MaebError(f"cnn14 scorer: kl_activation {self.kl_activation!r} is not softmax or sigmoid")
        self.is_splits = int(options.get("is_splits", IS_SPLITS))
        self.is_seed = options.get("is_seed", IS_SEED)
        checkpoint = str(options.get("checkpoint", "panns-cnn14-16k"))
        try:
            self.model, self.identity = cnn14.load_shared(checkpoint, int(options.get("seed", 0)), device, cache_dir)
        except DataError as exc:  # the released weights cannot be fetched here
            raise MetricUnavailable(f"cnn14: {exc}") from exc
        self.model_id = f"cnn14-16k-{self.identity['revision'][:16]}-{PROTOCOL}"
        self.cache = Path(cache_dir) / "mmag-features" / self.model_id if cache_dir is not None else None
        self.generated: dict[str, np.ndarray] = {}  # key -> 2048 embedding + 527 logits
        self.references: dict[str, np.ndarray] = {}
        self.forwards = {"generated": 0, "reference": 0}  # clips through the network
        self.per_clip: dict[str, dict[str, float]] = {}
        self.extras: dict[str, float] = {}

    def provenance(self) -> dict:
        """The CNN14 checkpoint and settings, as results record them."""
        return {
            "model": "PANNs Cnn14_16k",
            "checkpoint": self.identity["checkpoint"],
            "revision": self.identity["revision"],
            "stand_in": self.identity["stand_in"],
            "protocol": f"audioldm_eval: fd on the 2048 embedding (eps {FD_EPS}), kl {self.kl_activation} "
            f"KL(ref||gen) eps {KL_EPS} summed over classes, mean over pairs; is softmax, "
            f"{self.is_splits} splits, seed {self.is_seed}",
            "kl_activation": self.kl_activation,
            "is_splits": self.is_splits,
            "sample_rate": cnn14.SAMPLE_RATE,
        }

    def update(self, items: list[GeneratedItem]) -> None:
        """CNN14 features and logits of a batch of generated clips and their references."""
        for item in items:
            if item.request.key in self.generated:
                raise DataError(f"clip {item.request.key!r}: given twice to the cnn14 scorer")
        waves = [cnn14.prepare(item.audio, item.rate) for item in items]
        outputs = self._forward(waves, "generated")
        for item, row in zip(items, outputs):
            self.generated[item.request.key] = row
        self._update_references([item for item in items if item.reference is not None])

    def _forward(self, waves: list[np.ndarray], side: str) -> np.ndarray:
        if not waves:
            return np.zeros((0, cnn14.EMBED_DIM + cnn14.N_CLASSES), np.float32)
        emb, logits = cnn14.infer(self.model, waves, self.device, self.batch_size)
        self.forwards[side] += len(waves)
        return np.concatenate([emb, logits], axis=1)

    def _update_references(self, items: list[GeneratedItem]) -> None:
        """The reference recordings' features (items without a reference are left out), each
        computed once by the digest of its samples and kept in the feature cache."""
        refs = [(item, item.reference, item.reference_rate or item.rate) for item in items if item.reference is not None]
        digests = [reference_digest(samples, rate) for _, samples, rate in refs]
        todo: dict[str, tuple[np.ndarray, int]] = {}  # digest -> one reference with that digest, and its rate
        found: dict[str, np.ndarray] = {}
        for (_, samples, rate), digest in zip(refs, digests):
            row = self._cached(digest)
            if row is not None:
                found[digest] = row
            else:
                todo.setdefault(digest, (samples, rate))
        waves = [cnn14.prepare(samples, rate) for samples, rate in todo.values()]
        for digest, row in zip(todo, self._forward(waves, "reference")):
            found[digest] = row
            self._store(digest, row)
        for (item, _, _), digest in zip(refs, digests):
            self.references[item.request.key] = found[digest]

    def _cached(self, digest: str) -> np.ndarray | None:
        if self.cache is None or not (self.cache / f"{digest}.npy").is_file():
            return None
        try:
            row = np.load(self.cache / f"{digest}.npy", allow_pickle=False)
        except (OSError, ValueError):
            return None  # an unreadable entry is recomputed and rewritten
        return row if row.shape == (cnn14.EMBED_DIM + cnn14.N_CLASSES,) and np.isfinite(row).all() else None

    def _store(self, digest: str, row: np.ndarray) -> None:
        if self.cache is None:
            return
        path = self.cache / f"{digest}.npy"
        try:
            self.cache.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.cache, prefix=f".{digest}.", suffix=".npy")
            with os.fdopen(fd, "wb") as handle:
                np.save(handle, row.astype(np.float32), allow_pickle=False)
            os.replace(tmp, path)  # a reader never sees a half-written entry
        except OSError as exc:
            raise CacheError(f"cannot write the CNN14 reference cache {path} ({exc})") from exc

    def result(self) -> dict[str, float]:
        """FD, KL and IS of the generated set against the references."""
        if not self.generated:
            raise MetricUnavailable("cnn14: no generated clips were scored")
        keys = sorted(self.generated)
        gen = np.stack([self.generated[k] for k in keys])
        out: dict[str, float] = {}
        if {"kl", "fd"} & set(self.keys):
            missing = [k for k in keys if k not in self.references]
            if missing:
                raise MetricUnavailable(
                    f"cnn14: kl/fd need the reference recording of every clip; {len(missing)} of {len(keys)} "
                    f"have none (first: {', '.join(missing[:3])})"
                )
            ref = np.stack([self.references[k] for k in keys])
        if "kl" in self.keys:
            per_pair = kl_divergence(gen[:, cnn14.EMBED_DIM :], ref[:, cnn14.EMBED_DIM :], self.kl_activation)
            self.per_clip = {k: {"kl": float(v)} for k, v in zip(keys, per_pair)}
            out["kl"] = float(per_pair.mean())
        if "fd" in self.keys:
            if len(keys) < 2:
                raise MetricUnavailable(f"cnn14: fd needs at least 2 clips per set, got {len(keys)}")
            # every reference once: several generated clips may share one recording
            unique_refs = {reference.tobytes(): reference for reference in ref}
            if len(unique_refs) < 2:
                raise MetricUnavailable("cnn14: fd needs at least 2 distinct reference clips")
            out["fd"] = fd_from_features(gen[:, : cnn14.EMBED_DIM], np.stack(list(unique_refs.values()))[:, : cnn14.EMBED_DIM])
        if "is" in self.keys:
            splits = min(self.is_splits, len(keys))
            mean, std = inception_score(_softmax(gen[:, cnn14.EMBED_DIM :]), splits, self.is_seed)
            out["is"] = mean
            self.extras.update({"is_std": std, "is_splits_used": float(splits)})
        self.extras.update({"n_generated": float(len(keys)), "n_references": float(len(self.references))})
        return out
