"""maeb.audio.resample against torchaudio's sinc resampler, the one mteb feeds its models with.

mteb reaches it two ways: ``torchaudio.transforms.Resample`` (its ``AudioCollator`` and several model
wrappers; kernel computed in float64) and ``torchaudio.functional.resample`` (the ImageBind and BioViTA
wrappers; kernel computed in float32). ``maeb.audio.resample.resample(..., like=...)`` reproduces each; both are
checked here to within 1e-6 (in practice the outputs are bit-identical on the same torch build) on real
speech, speech-like, chord and noise signals, from 8, 16, 22.05, 44.1 and 48 kHz to 16 and 48 kHz, at
lengths from 1 sample up, odd lengths, lengths where torchaudio's float32 output-length rounding drops
a sample, and an input long enough to be convolved in several chunks.

torchaudio is installed here without its compiled extensions (``pip install --no-deps torchaudio==2.11.1``,
then ``torchaudio/lib/*.so`` deleted, since they link CUDA): ``import torchaudio.functional`` and
``torchaudio.transforms`` still import, because the package loads its extension lazily and the resampler
is plain Python over torch. Without torchaudio every test here fails (a skipped parity test would hide a
missing reference); the real-speech tests likewise fail when the shared data folder is absent.
"""

from __future__ import annotations

import os
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import pytest
import scipy.signal
import soundfile as sf
import torch

from maeb.audio.resample import resample

try:
    import torchaudio.functional as ta_functional
    import torchaudio.transforms as ta_transforms
except Exception as error:  # ImportError, or OSError from a half-installed build
    ta_functional = ta_transforms = None
    TORCHAUDIO_ERROR = f"{type(error).__name__}: {error}"
else:
    TORCHAUDIO_ERROR = ""

TOLERANCE = 1e-6
SOURCE_RATES = (8000, 16000, 22050, 44100, 48000)
TARGET_RATES = (16000, 48000)
# very short, odd, around one reduced period (441, 147), a few seconds; 180697 is where torchaudio's
# float32 ceiling gives one sample fewer than the exact one at 44.1 kHz -> 16 kHz
LENGTHS = (1, 2, 3, 5, 7, 13, 31, 50, 147, 441, 442, 1001, 4097, 22051, 48001, 180697)
LIKES = ("transforms", "functional")


def _shared_data() -> Path | None:
    """The workplace's shared data: $MAEB_SHARED_DIR, else ../shared beside the checkout, else /work/shared."""
    here = Path(__file__).resolve()
    for candidate in (os.environ.get("MAEB_SHARED_DIR"), here.parents[3] / "shared", "/work/shared"):
        if candidate and (Path(candidate) / "data").is_dir():
            return Path(candidate) / "data"
    return None


def _reference(samples: np.ndarray, orig: int, new: int, like: str) -> np.ndarray:
    if ta_functional is None:
        pytest.fail(f"torchaudio is needed for the resampling parity tests and does not import ({TORCHAUDIO_ERROR})")
    waveform = torch.from_numpy(np.array(samples, dtype=np.float32))  # a writable copy
    if like == "transforms":  # mteb's AudioCollator: Resample(orig, new)(tensor.float()), one module per clip
        return _resample_module(orig, new)(waveform).numpy()
    return ta_functional.resample(waveform, orig, new).numpy()


@cache
def _resample_module(orig: int, new: int):
    """torchaudio.transforms.Resample, built once per pair (its kernel takes longer than most calls)."""
    return ta_transforms.Resample(orig_freq=orig, new_freq=new)


def _max_difference(samples: np.ndarray, orig: int, new: int, like: str) -> float:
    expected = _reference(samples, orig, new, like)
    ours = resample(samples, orig, new, like=like)
    assert ours.dtype == np.float32
    assert ours.shape == expected.shape, f"{orig}->{new}, {samples.size} samples: length {ours.size}, torchaudio {expected.size}"
    return float(np.max(np.abs(ours.astype(np.float64) - expected))) if ours.size else 0.0


def _normalized(x: np.ndarray, peak: float = 0.9) -> np.ndarray:
    return (x * (peak / max(float(np.max(np.abs(x))), 1e-12))).astype(np.float32)


def speech_like(n: int, rate: int, seed: int) -> np.ndarray:
    """A glottal sawtooth on a gliding pitch through three vowel-formant resonators, a syllable envelope,
    and fricative noise bursts: broadband like speech, with energy up to the source Nyquist."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    f0 = 120.0 + 60.0 * np.sin(2 * np.pi * 1.3 * t) + 20.0 * rng.standard_normal()
    glottal = 2.0 * ((np.cumsum(f0) / rate) % 1.0) - 1.0
    voiced = np.zeros(n)
    for centre, bandwidth, gain in ((700.0, 110.0, 1.0), (1220.0, 120.0, 0.6), (2600.0, 160.0, 0.3)):
        radius = np.exp(-np.pi * bandwidth / rate)
        poles = [1.0, -2.0 * radius * np.cos(2 * np.pi * centre / rate), radius**2]
        voiced += gain * scipy.signal.lfilter([1.0 - radius], poles, glottal)
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3.1 * t + rng.uniform(0, 2 * np.pi))
    fricative = rng.standard_normal(n) * (np.sin(2 * np.pi * 2.3 * t) > 0.7)
    return _normalized(voiced * envelope + 0.3 * fricative)


def chords(n: int, rate: int, seed: int) -> np.ndarray:
    """Three chords of four notes with twelve decaying harmonics each (up to ~9 kHz, past the 16 kHz Nyquist)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    x = np.zeros(n)
    for i, root in enumerate((261.63, 196.0, 220.0)):
        part = (t * 3).astype(int) % 3 == i
        for ratio in (1.0, 1.26, 1.498, 2.0):
            f = root * ratio
            for h in range(1, 13):
                if h * f < rate / 2:
                    x += part * np.sin(2 * np.pi * h * f * t + rng.uniform(0, 2 * np.pi)) / h
    return _normalized(x * np.exp(-((t * 3) % 1.0)))


def white_noise(n: int, rate: int, seed: int) -> np.ndarray:
    return _normalized(np.random.default_rng(seed).standard_normal(n))


def pink_noise(n: int, rate: int, seed: int) -> np.ndarray:
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(n))
    f = np.arange(spectrum.size, dtype=np.float64)
    f[0] = 1.0
    return _normalized(np.fft.irfft(spectrum / np.sqrt(f), n))


SIGNALS = {"speech_like": speech_like, "chords": chords, "white_noise": white_noise, "pink_noise": pink_noise}


@lru_cache(maxsize=512)
def _signal(name: str, n: int, rate: int, seed: int) -> np.ndarray:
    """Each test signal once for both reference variants (read-only)."""
    x = SIGNALS[name](n, rate, seed)
    x.flags.writeable = False
    return x


PAIRS = [(orig, new) for orig in SOURCE_RATES for new in TARGET_RATES if orig != new]


@pytest.mark.parametrize("like", LIKES)
@pytest.mark.parametrize("signal", sorted(SIGNALS))
@pytest.mark.parametrize(("orig", "new"), PAIRS, ids=[f"{o}-{n}" for o, n in PAIRS])
def test_synthetic_signals_match(orig, new, signal, like):
    worst = {}
    for i, n in enumerate(LENGTHS):
        worst[n] = _max_difference(_signal(signal, n, orig, i), orig, new, like)
    assert max(worst.values()) < TOLERANCE, worst


# rate pairs whose dense convolution is costly, where maeb evaluates each phase's window only (the polyphase
# path): real-world rates whose gcd with the target is small. torchaudio builds its whole bank for them (for
# 24,414 -> 16,000 Hz: 30 s and 3.4 GB here, left to scripts/bench_resample.py; 44,056 -> 16,000 Hz: 1.5 s
# per call of torchaudio.functional, so only the Resample module, which keeps its bank, is asked there)
ODD_CASES = [(44056, 16000, "transforms")] + [
    (o, n, like) for o, n in [(64000, 22050), (64000, 44100), (11928, 48000)] for like in LIKES
]
ODD_LENGTHS = (1, 7, 50, 1001, 4097, 22051, 48001)


@pytest.mark.parametrize(("orig", "new", "like"), ODD_CASES, ids=[f"{o}-{n}-{like}" for o, n, like in ODD_CASES])
def test_polyphase_pairs_match(orig, new, like):
    """The polyphase path sums the same products in float64 (torchaudio in float32): equal within 1e-6."""
    from maeb.audio.resample import uses_dense

    assert not uses_dense(orig, new)
    worst = {}
    for i, n in enumerate(ODD_LENGTHS):
        signal = ("speech_like", "white_noise")[i % 2]
        worst[(signal, n)] = _max_difference(_signal(signal, n, orig, i), orig, new, like)
    assert max(worst.values()) < TOLERANCE, worst


@pytest.mark.parametrize("like", LIKES)
@pytest.mark.parametrize("rate", TARGET_RATES)
def test_equal_rates_are_identity(rate, like):
    x = speech_like(4097, rate, seed=3)
    assert np.array_equal(resample(x, rate, rate, like=like), _reference(x, rate, rate, like))


@pytest.mark.parametrize("like", LIKES)
@pytest.mark.parametrize(("orig", "new"), [(44100, 16000), (8000, 48000), (48000, 16000)])
def test_long_input_in_chunks_matches(orig, new, like):
    """Over 2**20 samples the convolution runs in chunks; the seams must not show."""
    n = 1_200_001
    x = pink_noise(n, orig, seed=7) + 0.5 * chords(n, orig, seed=8)
    assert _max_difference(x, orig, new, like) < TOLERANCE


def _real_clips(folder: str, pattern: str, count: int) -> list[tuple[np.ndarray, int]]:
    data = _shared_data()
    if data is None or not (data / folder).is_dir():
        pytest.fail(f"the shared data folder {folder!r} is absent (set MAEB_SHARED_DIR)")
    files = sorted((data / folder).glob(pattern))[:: max(1, len(list((data / folder).glob(pattern))) // count)][:count]
    assert files, f"no {pattern} under {data / folder}"
    clips = []
    for path in files:
        samples, rate = sf.read(path, dtype="float32", always_2d=True)
        clips.append((samples.mean(axis=1).astype(np.float32), rate))
    return clips


@pytest.mark.parametrize("like", LIKES)
@pytest.mark.parametrize(
    ("folder", "pattern"), [("fsdd", "audio/*.wav"), ("speech_commands_test", "audio/**/*.flac")], ids=["fsdd", "speech_commands"]
)
def test_real_speech_matches(folder, pattern, like):
    """Real recordings at their own rate (8 kHz digits, 16 kHz commands) to 16 and 48 kHz, and the same
    samples declared at the other source rates (the waveform stays speech whatever rate it is labelled)."""
    worst = {}
    for samples, rate in _real_clips(folder, pattern, 6):
        for orig in sorted({rate, *SOURCE_RATES}):
            for new in TARGET_RATES:
                if orig != new:
                    for cut in (samples.size, 37, samples.size - 1):
                        key = (orig, new, cut)
                        worst[key] = max(worst.get(key, 0.0), _max_difference(samples[:cut], orig, new, like))
    assert max(worst.values()) < TOLERANCE, {k: v for k, v in worst.items() if v >= TOLERANCE}
