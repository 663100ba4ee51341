"""Three offline text-to-audio "systems" that bracket what MMAG's scorers can tell apart: the
oracle renders the scene script itself (the reference recording), resynth renders the same script
with another voice and instrument (same timing, other timbre), noise returns seeded pink noise
(no structure at all). They need no weights; the scene renderer is maeb.synth.scenes."""

from __future__ import annotations

import hashlib

import numpy as np

from ..core.errors import ModelError
from ..synth import scenes, sounds
from .request import Capabilities

RATE = 16000
NOISE_RMS = 0.05


def _fit(clip: np.ndarray, duration: float) -> np.ndarray:
    """Exactly `duration` seconds: a script of another length is cut or padded with silence."""
    n = int(round(duration * RATE))
    return np.pad(clip[:n], (0, max(0, n - len(clip)))).astype(np.float32)


class _ScriptSystem:
    sample_rate = RATE
    voice_map: dict | None = None
    instrument_map: dict | None = None

    def __init__(self, meta=None, device="cpu", **options):
        self.options = options

    def config(self) -> dict:
        return {
            # the renderer's name before it moved to maeb.synth.scenes: part of the cache identity
            "renderer": "maeb.benchmarks.mmag_lite.scenes",
            "generator_version": scenes.GENERATOR_VERSION,
            "voice_map": self.voice_map,
            "instrument_map": {str(k): v for k, v in (self.instrument_map or {}).items()} or None,
            **self.options,
        }

    def synthesize(self, requests: list) -> list[np.ndarray]:
        out = []
        for request in requests:
            script = (request.structured or {}).get("script")
            if not isinstance(script, dict):
                raise ModelError(
                    f"{type(self).__name__}: request {request.key!r} has no structured['script'] to render; it needs MMAG-lite requests"
                )
            audio, _ = scenes.render(script, self.voice_map, self.instrument_map)
            out.append(_fit(audio, request.duration))
        return out


class OracleSystem(_ScriptSystem):
    """The reference itself: renders request.structured["script"] exactly as the build did."""

    capabilities = Capabilities(
        accepts=("caption", "transcript", "voice_prompt", "timestamped_caption", "structured"), needs_structured=True
    )


class ResynthSystem(_ScriptSystem):
    """The same script in the other gender's voice and another instrument of the same family."""

    capabilities = Capabilities(accepts=("caption", "transcript", "timestamped_caption", "structured"), needs_structured=True)

    def __init__(self, meta=None, device="cpu", **options):
        super().__init__(meta, device, **options)
        self.voice_map = dict(scenes.OTHER_GENDER)
        self.instrument_map = dict(scenes.OTHER_INSTRUMENT)


class NoiseSystem:
    """Pink noise at a fixed level, seeded by the request's key and seed: a floor every scorer
    should put last."""

    sample_rate = RATE
    capabilities = Capabilities(accepts=("caption",))

    def __init__(self, meta=None, device="cpu", **options):
        self.options = options

    def config(self) -> dict:
        """What identifies the system's audio: the noise and its level."""
        return {"noise": "pink", "rms": NOISE_RMS, **self.options}

    def synthesize(self, requests: list) -> list[np.ndarray]:
        """Seeded pink noise of each request's duration."""
        out = []
        for request in requests:
            digest = hashlib.blake2b(f"{request.key}\0{int(request.seed)}".encode(), digest_size=8).digest()
            rng = np.random.default_rng(int.from_bytes(digest, "big"))
            noise = sounds.coloured_noise("pink", float(request.duration), rng).astype(np.float64)
            noise *= NOISE_RMS / (np.sqrt(np.mean(noise**2)) + 1e-12)
            out.append(_fit(noise, request.duration))
        return out
