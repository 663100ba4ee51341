"""Perturbations: declarative, seeded transforms of a clip before the encoder sees it (the
robustness axis). Each is a small frozen dataclass parsed from a string such as `noise:snr=5`,
`reverb:rt60=0.6` or `codec:format=mp3,bitrate=32`, and a pure function of (samples, rate, seed);
a chain applies them in the order given.

Order of operations in maeb.audio.pipeline.load: decode -> mono -> (the dataset's declared rate) -> segment
-> head cut to the window plus the resampler's margin -> resample to the encoder's rate ->
perturbations, in order -> cut to the window -> pad to the encoder's minimum. So a perturbation
sees the clip at the encoder's rate and at most the window plus a few samples, and the encoder
receives exactly as many samples as for the clean clip.

Each step's seed is derived from its `seed` field (the run seed, 0 unless given), its position in
the chain, its canonical string and the clip's content key: the same clip gets the same noise in
every run, and two clips get different noise."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from ..core.errors import SpecError
from ..synth import sounds
from .pipeline import resample

TELEPHONE_RATE = 8000
MP3_BITRATES = {  # (highest, lowest) kbps of libsndfile's LAME mapping, by MPEG version's rates
    (32000, 44100, 48000): (320.0, 32.0),
    (16000, 22050, 24000): (160.0, 8.0),
    (8000, 11025, 12000): (64.0, 8.0),
}
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
OPUS_BITRATES = (256.0, 6.0)  # libsndfile maps compression level 0..1 linearly onto this range


class PerturbError(SpecError):
    """A perturbation string is malformed or cannot be applied to a clip."""


def _num(value: float) -> str:
    return format(float(value), ".10g")


@dataclass(frozen=True)
class Step:
    """Base of every perturbation: `name` is its grammar keyword; canonical() is its identity."""

    name: ClassVar[str] = ""
    uses_pool: ClassVar[bool] = False

    def canonical(self) -> str:
        """The step as "name:key=value,..." with unset fields left out: its part of the chain's canonical string."""
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            parts.append(f"{f.name}={_num(value) if isinstance(value, (int, float)) else value}")
        return self.name + (":" + ",".join(parts) if parts else "")

    def apply(self, samples: np.ndarray, rate: int, seed: int, pool=None) -> np.ndarray:
        """The perturbed clip (float32 samples at `rate`), drawn from `seed`; `pool` gives other clips for babble noise."""
        raise NotImplementedError


def rms(x: np.ndarray) -> float:
    """The root mean square of the samples (0 for an empty clip)."""
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0


@dataclass(frozen=True)
class Noise(Step):
    """Additive noise at `snr` dB over the clip's mean power: white, pink, babble (a sum of
    `talkers` other clips of the task) or events (impulsive sounds from maeb.synth.sounds)."""

    name: ClassVar[str] = "noise"
    KINDS: ClassVar[tuple[str, ...]] = ("white", "pink", "babble", "events")
    snr: float = 10.0
    kind: str = "white"
    talkers: int = 4
    seed: int = 0

    def __post_init__(self):
        if self.kind not in self.KINDS:
            raise PerturbError(f"noise kind {self.kind!r} is not one of {', '.join(self.KINDS)}")
        if self.talkers < 1:
            raise PerturbError(f"noise talkers must be at least 1, not {self.talkers}")
        if not -100 <= self.snr <= 150:  # beyond, the noise drowns the clip or is below float32's resolution
            raise PerturbError(f"noise snr must be between -100 and 150 dB, not {self.snr:g}")

    @property
    def uses_pool(self) -> bool:  # type: ignore[override]
        return self.kind == "babble"

    def canonical(self) -> str:
        # talkers only matters for babble; leaving it out elsewhere keeps one name per meaning
        text = f"noise:snr={_num(self.snr)},kind={self.kind}"
        if self.kind == "babble":
            text += f",talkers={self.talkers}"
        return text + (f",seed={self.seed}" if self.seed else "")

    def apply(self, samples, rate, seed, pool=None):
        rng = np.random.default_rng(seed)
        noise = self._noise(len(samples), rate, rng, pool)
        return add_at_snr(samples, noise, self.snr)

    def _noise(self, n: int, rate: int, rng: np.random.Generator, pool) -> np.ndarray:
        if self.kind == "white":
            return rng.standard_normal(n)
        if self.kind == "pink":
            spectrum = np.fft.rfft(rng.standard_normal(n))
            freqs = np.fft.rfftfreq(n, 1.0 / rate)
            freqs[0] = freqs[1] if n > 2 else 1.0
            return np.fft.irfft(spectrum / np.sqrt(freqs), n)
        if self.kind == "events":
            return event_noise(n, rate, rng)
        if pool is None:
            raise PerturbError("noise kind babble needs the task's clips (a babble pool); none was given")
        return pool.babble(n, rng, self.talkers)


def add_at_snr(samples: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """samples + noise scaled so that 10 log10(P_signal / P_noise) is snr_db exactly; a silent
    clip has no power to be measured against and is returned unchanged."""
    ps, pn = rms(samples) ** 2, rms(noise) ** 2
    if ps == 0.0 or pn == 0.0:
        return samples.astype(np.float32)
    scale = np.sqrt(ps / (pn * 10 ** (snr_db / 10)))
    return (samples.astype(np.float64) + scale * noise).astype(np.float32)


def event_noise(n: int, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Impulsive event sounds (knocking, clapping, dripping, footsteps) made offline by
    maeb.synth.sounds at its 16 kHz, one kind per clip, resampled to the clip's rate."""
    kind = sorted(sounds.EVENTS)[int(rng.integers(len(sounds.EVENTS)))]
    seconds = max(n / rate, 0.2)
    events = sounds.impulsive(kind, seconds, rng).astype(np.float32)
    if rate != sounds.RATE:
        events = resample(events, sounds.RATE, rate, "soxr-hq")
    return np.resize(events, n).astype(np.float64)


@dataclass(frozen=True)
class Reverb(Step):
    """Convolution with a synthetic room impulse response: a direct path, then exponentially
    decaying Gaussian noise whose energy falls 60 dB in `rt60` seconds, at a direct-to-reverberant
    energy ratio of `drr` dB. The output keeps the input's length and RMS level."""

    name: ClassVar[str] = "reverb"
    rt60: float = 0.5
    drr: float = 0.0
    seed: int = 0

    def __post_init__(self):
        if not 0.05 <= self.rt60 <= 10:
            raise PerturbError(f"reverb rt60 must be between 0.05 and 10 s, not {self.rt60}")

    def canonical(self) -> str:
        return f"reverb:rt60={_num(self.rt60)},drr={_num(self.drr)}" + (f",seed={self.seed}" if self.seed else "")

    def apply(self, samples, rate, seed, pool=None):
        from scipy.signal import fftconvolve

        ir = room_impulse_response(self.rt60, rate, np.random.default_rng(seed), self.drr)
        wet = fftconvolve(samples.astype(np.float64), ir)[: len(samples)]
        level = rms(wet)
        return (wet * (rms(samples) / level if level > 0 else 1.0)).astype(np.float32)


def room_impulse_response(rt60: float, rate: int, rng: np.random.Generator, drr_db: float = 0.0) -> np.ndarray:
    """Unit direct path at 0, diffuse tail from 2.5 ms on, long enough (1.5 x RT60, -90 dB) that
    cutting it changes no measurable decay."""
    n = max(int(np.ceil(1.5 * rt60 * rate)), 2)
    t = np.arange(n) / rate
    # energy decays 60 dB in rt60: amplitude exp(-3 ln(10) t / rt60)
    tail = rng.standard_normal(n) * np.exp(-3.0 * np.log(10.0) * t / rt60)
    tail[: int(0.0025 * rate) + 1] = 0.0
    energy = float(np.sum(tail**2))
    if energy > 0:
        tail *= np.sqrt(10 ** (-drr_db / 10) / energy)
    tail[0] = 1.0
    return tail


def schroeder_rt60(ir: np.ndarray, rate: int, upper_db: float = -5.0, lower_db: float = -35.0) -> float:
    """RT60 by Schroeder backward integration (T30: the fit from -5 to -35 dB, extrapolated to 60)."""
    edc = np.cumsum((ir.astype(np.float64) ** 2)[::-1])[::-1]
    db = 10 * np.log10(edc / edc[0] + 1e-300)
    span = np.flatnonzero((db <= upper_db) & (db >= lower_db))
    slope, _ = np.polyfit(span / rate, db[span], 1)
    return float(-60.0 / slope)


@dataclass(frozen=True)
class Telephone(Step):
    """A telephone channel: resampled to 8 kHz and back (maeb.audio.pipeline.resample, soxr-hq) with a
    300-3400 Hz band-pass (4th-order Butterworth, zero phase) at 8 kHz."""

    name: ClassVar[str] = "telephone"
    low: float = 300.0
    high: float = 3400.0

    def __post_init__(self):
        if not 0 < self.low < min(self.high, 0.45 * TELEPHONE_RATE):
            raise PerturbError(
                f"telephone needs 0 < low < high, and low below {0.45 * TELEPHONE_RATE:g} Hz (the 8 kHz channel), "
                f"not low={self.low:g}, high={self.high:g}"
            )

    def apply(self, samples, rate, seed, pool=None):
        from scipy.signal import butter, sosfiltfilt

        narrow = min(rate, TELEPHONE_RATE)
        x = samples if rate == narrow else resample(samples, rate, narrow, "soxr-hq")
        high = min(self.high, 0.45 * narrow)
        sos = butter(4, [self.low, high], btype="bandpass", fs=narrow, output="sos")
        x = sosfiltfilt(sos, x.astype(np.float64), padlen=min(len(x) - 1, 3 * 13)).astype(np.float32) if len(x) > 1 else x
        if rate != narrow:
            x = resample(x, narrow, rate, "soxr-hq")
        return _fit(x, len(samples))


@dataclass(frozen=True)
class HardClip(Step):
    """Hard clipping at `db` dB relative to the clip's peak (so a quiet recording is distorted as
    much as a loud one; db=-6 clips at half the peak)."""

    name: ClassVar[str] = "clip"
    db: float = -6.0

    def __post_init__(self):
        if not -120 <= self.db <= 0:
            raise PerturbError(f"clip db must be between -120 and 0 (relative to the clip's peak), not {self.db:g}")

    def apply(self, samples, rate, seed, pool=None):
        level = float(np.max(np.abs(samples))) * 10 ** (self.db / 20) if samples.size else 0.0
        return np.clip(samples, -level, level).astype(np.float32)


@dataclass(frozen=True)
class Gain(Step):
    """A level change of `db` dB (no clamping: float samples)."""

    name: ClassVar[str] = "gain"
    db: float = 0.0

    def __post_init__(self):
        if not -120 <= self.db <= 120:  # beyond, float32 samples underflow to silence or overflow
            raise PerturbError(f"gain db must be between -120 and 120, not {self.db:g}")

    def apply(self, samples, rate, seed, pool=None):
        return (samples.astype(np.float64) * 10 ** (self.db / 20)).astype(np.float32)


@dataclass(frozen=True)
class Codec(Step):
    """A lossy round trip through libsndfile: mp3 (LAME, constant `bitrate` kbps, at the MPEG
    rate nearest above the clip's when the clip's is not one), opus (`bitrate` kbps at an Opus
    rate) or vorbis (libsndfile's compression `level`, 0 best to 1 smallest). The decoded clip is
    aligned to the input (an MP3 without a gapless header starts late) and cut to its length."""

    name: ClassVar[str] = "codec"
    FORMATS: ClassVar[tuple[str, ...]] = ("mp3", "opus", "vorbis")
    format: str = "mp3"
    bitrate: float | None = None
    level: float | None = None

    def __post_init__(self):
        if self.format not in self.FORMATS:
            raise PerturbError(f"codec format {self.format!r} is not one of {', '.join(self.FORMATS)}")
        if self.format == "vorbis":
            if self.bitrate is not None:
                raise PerturbError("codec vorbis takes level=0..1 (libsndfile's compression level), not a bitrate")
            if self.level is None or not 0 <= self.level <= 1:
                raise PerturbError(f"codec vorbis needs level between 0 and 1, not {self.level}")
        elif self.bitrate is None or self.level is not None:
            raise PerturbError(f"codec {self.format} needs bitrate=KBPS (and no level)")

    def apply(self, samples, rate, seed, pool=None):
        work = self._rate(rate)
        x = samples if work == rate else resample(samples, rate, work, "soxr-hq")
        y = self._round_trip(np.clip(x, -1.0, 1.0).astype(np.float32), work)
        if work != rate:
            y = resample(y, work, rate, "soxr-hq")
        return _fit(y, len(samples))

    def _rate(self, rate: int) -> int:
        rates = sorted(r for group in MP3_BITRATES for r in group) if self.format == "mp3" else OPUS_RATES
        if self.format == "vorbis" or rate in rates:
            return rate
        return next((r for r in rates if r >= rate), rates[-1])

    def level_for(self, rate: int) -> float:
        """libsndfile's compression level for this codec at `rate` Hz: vorbis's own level, or the
        bitrate mapped onto the format's bitrate range (PerturbError when it lies outside)."""
        if self.format == "vorbis":
            if self.level is None:  # __post_init__ refuses this; the check names it for the type checker
                raise PerturbError("codec vorbis needs level between 0 and 1")
            return float(self.level)
        bitrate = self.bitrate
        if bitrate is None:  # likewise refused by __post_init__
            raise PerturbError(f"codec {self.format} needs bitrate=KBPS (and no level)")
        if self.format == "mp3":
            high, low = next(v for k, v in MP3_BITRATES.items() if rate in k)
        else:
            high, low = OPUS_BITRATES
        if not low <= bitrate <= high:
            raise PerturbError(f"codec {self.format} at {rate} Hz takes bitrate {low:g}-{high:g} kbps, not {bitrate:g}")
        # libsndfile's level maps linearly from the highest bitrate (0) to the lowest (1); LAME
        # rejects exactly 1
        return min((high - bitrate) / (high - low), 0.999)

    def _round_trip(self, x: np.ndarray, rate: int) -> np.ndarray:
        import soundfile as sf

        buf = io.BytesIO()
        kind = {"mp3": ("MP3", "MPEG_LAYER_III"), "opus": ("OGG", "OPUS"), "vorbis": ("OGG", "VORBIS")}[self.format]
        mode = "CONSTANT" if self.format == "mp3" else None
        sf.write(buf, x, rate, format=kind[0], subtype=kind[1], compression_level=self.level_for(rate), bitrate_mode=mode)
        y, _ = sf.read(io.BytesIO(buf.getvalue()), dtype="float32")
        y = y.mean(axis=1) if y.ndim > 1 else y
        return y[_delay(x, y) :]


def _delay(x: np.ndarray, y: np.ndarray) -> int:
    """The lag (0 .. extra samples) at which the decoded y best matches x."""
    extra = len(y) - len(x)
    if extra <= 0:
        return 0
    from scipy.signal import fftconvolve

    n = min(len(x), 1 << 16)
    corr = fftconvolve(y[: n + extra].astype(np.float64), x[:n][::-1].astype(np.float64), mode="valid")
    return int(np.argmax(corr[: extra + 1]))


def _fit(x: np.ndarray, n: int) -> np.ndarray:
    x = x[:n]
    if len(x) < n:
        x = np.pad(x, (0, n - len(x)))
    return np.ascontiguousarray(x, dtype=np.float32)


STEPS: dict[str, type[Step]] = {s.name: s for s in (Noise, Reverb, Telephone, HardClip, Gain, Codec)}


def parse(text: str) -> Step:
    """One perturbation from `name` or `name:key=value,key=value`."""
    name, _, rest = text.strip().partition(":")
    kind = STEPS.get(name.strip())
    if kind is None:
        raise PerturbError(f"unknown perturbation {name.strip()!r} in {text!r}; known: {', '.join(STEPS)}")
    types = {f.name: f for f in fields(kind)}
    values: dict = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, raw = (s.strip() for s in item.partition("="))
        if not eq or key not in types:
            known = ", ".join(types) or "none"
            raise PerturbError(f"perturbation {text!r}: {item!r} is not key=value with a key of {name} ({known})")
        if key in values:
            raise PerturbError(f"perturbation {text!r}: {key} is given twice")
        values[key] = _value(text, key, raw, types[key].default)
    try:
        return kind(**values)
    except PerturbError as exc:
        raise PerturbError(f"perturbation {text!r}: {exc}") from None


def _value(text: str, key: str, raw: str, default):
    if isinstance(default, str):
        return raw
    try:
        number = float(raw)
    except ValueError:
        raise PerturbError(f"perturbation {text!r}: {key} must be a number, not {raw!r}") from None
    if not np.isfinite(number):
        raise PerturbError(f"perturbation {text!r}: {key} must be finite, not {raw!r}")
    if isinstance(default, int) and not isinstance(default, bool):
        if number != int(number):
            raise PerturbError(f"perturbation {text!r}: {key} must be a whole number, not {raw!r}")
        return int(number)
    return number


@dataclass(frozen=True)
class Chain:
    """Perturbations applied in order; canonical() names the chain in cache keys and results."""

    steps: tuple[Step, ...]

    @classmethod
    def parse(cls, specs) -> Chain | None:
        """None for no perturbation (the clean path, unchanged); a string or a list of strings."""
        specs = [specs] if isinstance(specs, str) else list(specs or ())
        steps = tuple(parse(s) for s in specs)
        return cls(steps) if steps else None

    def canonical(self) -> str:
        """The chain as one string without spaces (it names the results folder), e.g. "noise:snr=10,kind=white+gain:db=-6"."""
        return "+".join(s.canonical() for s in self.steps)  # no spaces: it names a results folder

    @property
    def uses_pool(self) -> bool:
        """Whether a step draws from the task's babble pool."""
        return any(s.uses_pool for s in self.steps)

    def check(self, rate: int) -> None:
        """Fail before any clip is embedded when a step cannot run at the encoder's rate."""
        for step in self.steps:
            if isinstance(step, Codec):
                step.level_for(step._rate(rate))

    def describe(self) -> dict:
        """The chain for the result file: its steps, canonical string and where it applies in the pipeline."""
        return {
            "chain": [s.canonical() for s in self.steps],
            "canonical": self.canonical(),
            "order": "after resampling to the encoder's rate, before the length cut",
        }

    def apply(self, samples: np.ndarray, rate: int, clip_key: str, pool=None) -> np.ndarray:
        """The clip after every step in turn; each step's seed comes from its position, itself and the clip's key."""
        out = np.asarray(samples, dtype=np.float32)
        for i, step in enumerate(self.steps):
            out = step.apply(out, rate, step_seed(i, step, clip_key), pool)
        return out


def step_seed(index: int, step: Step, clip_key: str) -> int:
    """The seed of step `index` of a chain on one clip: a hash of the position, the step and the clip's key, so a clip is
    perturbed the same in every run."""
    blob = f"{index}|{step.canonical()}|{clip_key}".encode()
    return int.from_bytes(hashlib.blake2b(blob, digest_size=8).digest(), "little")
