"""How a perturbation chain (maeb.audio.perturb) reaches the clips of a run: each clip is wrapped in a
PerturbedRef, whose content key adds the chain's canonical string (and the babble pool it draws
from), so clean and perturbed vectors share a cache without ever meeting; maeb.audio.pipeline.load calls
its perturb() after resampling to the encoder's rate and before the length cut."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np

from ..core.errors import AudioError, MaebError
from .perturb import Chain, PerturbError, rms
from .pipeline import AudioRef, LengthPolicy, load

POOL_CLIPS = 8  # clips a babble pool holds: enough talkers to mix, little memory


class BabblePool:
    """A task's babble material: the POOL_CLIPS clips of lowest content key among the first clips
    the task embeds (so the choice does not depend on their order), decoded clean at the encoder's
    rate on first use. Its digest enters every perturbed key, so a clip shared by two tasks gets
    one vector per pool."""

    def __init__(self, refs: Sequence[AudioRef], policy: LengthPolicy):
        keyed: dict[str, AudioRef] = {}
        for ref in refs:
            try:
                keyed.setdefault(ref.key, ref)
            except MaebError:
                continue  # an unreadable clip is reported where it is embedded, not here
        self.members = [keyed[k] for k in sorted(keyed)[:POOL_CLIPS]]
        self.policy = policy
        self.digest = hashlib.blake2b("|".join(r.key for r in self.members).encode(), digest_size=8).hexdigest()
        self._clips: list[tuple[str, np.ndarray]] | None = None
        self._lock = threading.Lock()

    def clips(self) -> list[tuple[str, np.ndarray]]:
        """The pool's clips as (content key, samples), decoded clean once on first use; clips that cannot be decoded are left out."""
        with self._lock:  # decoding threads perturb in parallel; the pool is decoded once
            if self._clips is None:
                out = []
                for ref in self.members:
                    try:
                        clip = load(ref, self.policy)
                    except AudioError:
                        continue
                    if rms(clip) > 0:
                        out.append((ref.key, clip))
                self._clips = out
            return self._clips

    def without(self, key: str) -> _PoolView:
        """The pool as a clip sees it: without the clip itself."""
        return _PoolView(self, key)


class _PoolView:
    """The pool as one clip sees it: every member but the clip itself."""

    def __init__(self, pool: BabblePool, key: str):
        self.pool, self.key = pool, key

    def babble(self, n: int, rng: np.random.Generator, talkers: int) -> np.ndarray:
        others = [clip for key, clip in self.pool.clips() if key != self.key]
        if not others:
            raise PerturbError(f"clip key {self.key[:12]}: noise kind babble needs other clips of the task; the pool has none")
        picks = rng.choice(len(others), size=min(talkers, len(others)), replace=False)
        out = np.zeros(n)
        for i in sorted(int(p) for p in picks):
            clip = others[i]
            # each talker starts at a random point, is repeated to the clip's length and counts equally
            start = int(rng.integers(len(clip)))
            voice = np.resize(np.roll(clip, -start), n).astype(np.float64)
            out += voice / rms(clip)
        return out


class PerturbedRef(AudioRef):
    """A clip seen through a perturbation chain: same bytes, another content key."""

    __slots__ = ("base", "chain", "pool")

    def __init__(self, base: AudioRef, chain: Chain, pool: BabblePool | None = None):
        super().__init__(base.name, fetch=base.read, start=base.start, end=base.end, decode_rate=base.decode_rate)
        self.path = base.path
        self.base, self.chain, self.pool = base, chain, pool

    @property
    def key(self) -> str:
        """The perturbed clip's content key: the clean key with the chain and the babble pool's digest."""
        if self._key is None:
            pool = f"|pool:{self.pool.digest}" if self.pool is not None else ""
            text = f"{self.base.key}|perturb:{self.chain.canonical()}{pool}"
            self._key = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
        return self._key

    def perturb(self, samples: np.ndarray, rate: int) -> np.ndarray:
        """The decoded clean samples perturbed by the chain (a babble pool without this clip)."""
        view = self.pool.without(self.base.key) if self.pool is not None else None
        return self.chain.apply(samples, rate, self.base.key, view)


def perturbed(refs: Sequence[AudioRef], chain: Chain, pool: BabblePool | None) -> list[AudioRef]:
    """The references wrapped so that decoding applies the chain (a reference already perturbed is kept)."""
    return [r if isinstance(r, PerturbedRef) else PerturbedRef(r, chain, pool) for r in refs]
