"""maeb.audio.fbank against torchaudio's Kaldi filterbank and the AST feature extractor's torchaudio branch.

transformers' ``ASTFeatureExtractor`` calls ``torchaudio.compliance.kaldi.fbank`` when torchaudio imports
(mteb's environment) and a numpy approximation otherwise (maeb's). ``maeb.audio.fbank.kaldi_fbank`` must match
``kaldi.fbank`` and ``maeb.audio.fbank.ast_features`` the extractor's torchaudio branch to within 1e-6 (on the
same torch build they are bit-identical) on real speech (FSDD digits resampled from 8 kHz with
maeb.audio.resample, Speech Commands at 16 kHz), speech-like signals, tones, noise, silence, clips of one window
(400 samples) and just over, and clips longer than the extractor's 1024 frames.

Both branches of the extractor run in this one process: the module reads its ``is_speech_available`` flag
at construction and at each call, so the tests set it (and count the calls that reach torchaudio, so a
branch that silently fell back would show). torchaudio is installed here without its compiled extensions
(``kaldi.fbank`` is plain torch). Without torchaudio every test fails (a skipped parity test would hide a
missing reference); the real-speech tests likewise fail when the shared data folder is absent.
"""

from __future__ import annotations

import contextlib
import os
import types
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import scipy.signal
import soundfile as sf
import torch
import transformers.models.audio_spectrogram_transformer.feature_extraction_audio_spectrogram_transformer as ast_module

from maeb.audio.fbank import ast_features, kaldi_fbank
from maeb.audio.resample import resample

try:
    import torchaudio.compliance.kaldi as ta_kaldi
except Exception as error:  # ImportError, or OSError from a half-installed build
    ta_kaldi = None
    TORCHAUDIO_ERROR = f"{type(error).__name__}: {error}"
else:
    TORCHAUDIO_ERROR = ""

TOLERANCE = 1e-6
RATE = 16000
AST_ARGS = {"sample_frequency": 16000, "window_type": "hanning", "num_mel_bins": 128}  # what the extractor passes
# one window (400), one sample more, one hop short of and at two frames, a second, and the extractor's
# frame limit: 164080 samples give exactly 1024 frames, 164079 one fewer, 164240 one more
AST_LENGTHS = (400, 401, 559, 560, 16000, 48001, 164079, 164080, 164240, 200000, 480000)


def _need_torchaudio() -> None:
    if ta_kaldi is None:
        pytest.fail(f"torchaudio is needed for the filterbank parity tests and does not import ({TORCHAUDIO_ERROR})")
    if not hasattr(ast_module, "ta_kaldi"):
        pytest.fail("transformers' AST feature extractor did not import torchaudio (is_speech_available() was false)")


def _shared_data() -> Path | None:
    """The workplace's shared data: $MAEB_SHARED_DIR, else ../shared beside the checkout, else /work/shared."""
    here = Path(__file__).resolve()
    for candidate in (os.environ.get("MAEB_SHARED_DIR"), here.parents[3] / "shared", "/work/shared"):
        if candidate and (Path(candidate) / "data").is_dir():
            return Path(candidate) / "data"
    return None


@contextlib.contextmanager
def _branch(torchaudio: bool, calls: list | None = None):
    """The extractor module with its speech flag forced; with torchaudio, its fbank calls are counted."""
    saved_flag = ast_module.is_speech_available
    saved_kaldi = getattr(ast_module, "ta_kaldi", None)
    ast_module.is_speech_available = lambda: torchaudio
    if torchaudio and calls is not None:

        def counted(*args, **kwargs):
            calls.append(kwargs)
            return ta_kaldi.fbank(*args, **kwargs)

        ast_module.ta_kaldi = types.SimpleNamespace(fbank=counted)
    try:
        yield
    finally:
        ast_module.is_speech_available = saved_flag
        if saved_kaldi is not None:
            ast_module.ta_kaldi = saved_kaldi


def _extractor(torchaudio: bool, **settings):
    with _branch(torchaudio):
        return ast_module.ASTFeatureExtractor(**settings)


def _torchaudio_features(extractor, clips) -> torch.Tensor:
    """input_values from the extractor's torchaudio branch (as in mteb's environment)."""
    _need_torchaudio()
    calls: list = []
    clips = [np.array(clip) for clip in clips]  # writable copies (torch warns on read-only arrays)
    with _branch(True, calls):
        values = extractor(clips, sampling_rate=extractor.sampling_rate, return_tensors="pt")["input_values"]
    assert len(calls) == len(clips), "the extractor did not take its torchaudio branch"
    return values


def _numpy_features(clips) -> torch.Tensor:
    """input_values from the extractor's numpy fallback (as in maeb's environment, without torchaudio)."""
    clips = [np.array(clip) for clip in clips]
    with _branch(False), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="At least one mel filter has all zero values")  # the lowest of 128
        extractor = ast_module.ASTFeatureExtractor()
        return extractor(clips, sampling_rate=RATE, return_tensors="pt")["input_values"]


def _difference(ours: torch.Tensor, expected: torch.Tensor) -> float:
    assert ours.dtype == expected.dtype, (ours.dtype, expected.dtype)
    assert ours.shape == expected.shape, (tuple(ours.shape), tuple(expected.shape))
    return float((ours.double() - expected.double()).abs().max()) if ours.numel() else 0.0


# -- signals -------------------------------------------------------------------------------------------


def _normalized(x: np.ndarray, peak: float = 0.9) -> np.ndarray:
    return (x * (peak / max(float(np.max(np.abs(x))), 1e-12))).astype(np.float32)


def speech_like(n: int, seed: int) -> np.ndarray:
    """A glottal sawtooth on a gliding pitch through three formant resonators, a syllable envelope and
    fricative noise bursts."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / RATE
    f0 = 120.0 + 60.0 * np.sin(2 * np.pi * 1.3 * t) + 20.0 * rng.standard_normal()
    glottal = 2.0 * ((np.cumsum(f0) / RATE) % 1.0) - 1.0
    voiced = np.zeros(n)
    for centre, bandwidth, gain in ((700.0, 110.0, 1.0), (1220.0, 120.0, 0.6), (2600.0, 160.0, 0.3)):
        radius = np.exp(-np.pi * bandwidth / RATE)
        poles = [1.0, -2.0 * radius * np.cos(2 * np.pi * centre / RATE), radius**2]
        voiced += gain * scipy.signal.lfilter([1.0 - radius], poles, glottal)
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3.1 * t + rng.uniform(0, 2 * np.pi))
    fricative = rng.standard_normal(n) * (np.sin(2 * np.pi * 2.3 * t) > 0.7)
    return _normalized(voiced * envelope + 0.3 * fricative)


def tones(n: int, seed: int) -> np.ndarray:
    """A 1 kHz tone at -6 dBFS plus a gliding one (50 Hz to 7.9 kHz), and a little DC."""
    t = np.arange(n) / RATE
    glide = np.sin(2 * np.pi * np.cumsum(np.geomspace(50.0, 7900.0, n)) / RATE + seed)
    return (0.5 * np.sin(2 * np.pi * 1000.0 * t) + 0.3 * glide + 0.05).astype(np.float32)


def white_noise(n: int, seed: int) -> np.ndarray:
    return (0.1 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


def loud_noise(n: int, seed: int) -> np.ndarray:
    return _normalized(np.random.default_rng(seed).standard_normal(n), peak=1.0)


def pink_noise(n: int, seed: int) -> np.ndarray:
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(n))
    f = np.arange(spectrum.size, dtype=np.float64)
    f[0] = 1.0
    return _normalized(np.fft.irfft(spectrum / np.sqrt(f), n), peak=0.3)


def quiet_noise(n: int, seed: int) -> np.ndarray:
    """Near the float32 epsilon floor in the top bands."""
    return (1e-5 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


def silence(n: int, seed: int) -> np.ndarray:
    return np.zeros(n, dtype=np.float32)


def dc(n: int, seed: int) -> np.ndarray:
    """A constant: every frame loses its mean, so only rounding is left."""
    return np.full(n, 0.25 + 0.01 * seed, dtype=np.float32)


SIGNALS = {f.__name__: f for f in (speech_like, tones, white_noise, loud_noise, pink_noise, quiet_noise, silence, dc)}


@cache
def _signal(name: str, n: int, seed: int = 0) -> np.ndarray:
    x = SIGNALS[name](n, seed)
    x.flags.writeable = False
    return x


@cache
def _real_clips(folder: str, pattern: str, count: int) -> tuple[np.ndarray, ...]:
    """``count`` recordings spread over the folder, mono float32 at 16 kHz (maeb.audio.resample from their rate)."""
    data = _shared_data()
    if data is None or not (data / folder).is_dir():
        pytest.fail(f"the shared data folder {folder!r} is absent (set MAEB_SHARED_DIR)")
    paths = sorted((data / folder).glob(pattern))
    assert paths, f"no {pattern} under {data / folder}"
    clips = []
    for path in paths[:: max(1, len(paths) // count)][:count]:
        samples, rate = sf.read(path, dtype="float32", always_2d=True)
        mono = samples.mean(axis=1).astype(np.float32)
        clips.append(resample(mono, rate, RATE) if rate != RATE else mono)
    return tuple(clips)


REAL = {"fsdd": ("fsdd", "audio/*.wav"), "speech_commands": ("speech_commands_test", "audio/**/*.flac")}


# -- kaldi_fbank against torchaudio.compliance.kaldi.fbank ------------------------------------------------

KALDI_CASES = {
    "ast": AST_ARGS,
    "kaldi_defaults": {},
    "ast_64_bins": {**AST_ARGS, "num_mel_bins": 64},
    "no_snip_edges": {**AST_ARGS, "snip_edges": False},
    "no_snip_edges_povey": {"snip_edges": False, "frame_shift": 12.5},
    "energy_first": {**AST_ARGS, "use_energy": True},
    "energy_last_windowed": {"use_energy": True, "htk_compat": True, "raw_energy": False, "energy_floor": 0.0},
    "hamming_magnitude": {"window_type": "hamming", "use_power": False, "num_mel_bins": 40},
    "blackman_linear": {"window_type": "blackman", "use_log_fbank": False, "blackman_coeff": 0.4},
    "rectangular_bare": {"window_type": "rectangular", "preemphasis_coefficient": 0.0, "remove_dc_offset": False},
    "no_power_of_two": {"frame_length": 26.0, "round_to_power_of_two": False, "num_mel_bins": 30},
    "band_limits": {**AST_ARGS, "low_freq": 64.0, "high_freq": -400.0},
    "high_freq_absolute": {"low_freq": 0.0, "high_freq": 3800.0, "num_mel_bins": 24},
    "subtract_mean": {**AST_ARGS, "subtract_mean": True},
    "eight_khz": {"sample_frequency": 8000, "window_type": "hanning", "num_mel_bins": 40},
    "min_duration": {**AST_ARGS, "min_duration": 0.5},
}
KALDI_LENGTHS = (400, 401, 559, 560, 4097, 16000, 48001)


def _kaldi_difference(waveform: torch.Tensor, args: dict) -> float:
    _need_torchaudio()
    try:
        expected = ta_kaldi.fbank(waveform, **args)
    except AssertionError:  # the window does not fit: ours must refuse too
        with pytest.raises(ValueError):
            kaldi_fbank(waveform, **args)
        return 0.0
    ours = kaldi_fbank(waveform, **args)
    if not args.get("use_log_fbank", True):  # linear energies: the tolerance is relative
        scale = expected.abs().clamp_min(1.0)
        return _difference(ours / scale, expected / scale)
    return _difference(ours, expected)


@pytest.mark.parametrize("case", sorted(KALDI_CASES))
def test_kaldi_fbank_matches_torchaudio(case):
    args = KALDI_CASES[case]
    worst = {}
    for name in SIGNALS:
        for i, n in enumerate(KALDI_LENGTHS):
            waveform = torch.from_numpy(_signal(name, n, i).copy())[None]
            worst[(name, n)] = _kaldi_difference(waveform, args)
    assert max(worst.values()) <= TOLERANCE, {k: v for k, v in worst.items() if v > TOLERANCE}


@pytest.mark.parametrize("source", sorted(REAL))
def test_kaldi_fbank_matches_torchaudio_on_real_speech(source):
    worst = {}
    for i, clip in enumerate(_real_clips(*REAL[source], 8)):
        for case in ("ast", "kaldi_defaults", "no_snip_edges", "energy_first"):
            worst[(i, case)] = _kaldi_difference(torch.from_numpy(clip.copy())[None], KALDI_CASES[case])
    assert max(worst.values()) <= TOLERANCE, worst


def test_kaldi_fbank_keeps_float64_and_the_second_channel():
    _need_torchaudio()
    stereo = torch.from_numpy(np.stack([_signal("speech_like", 8000, 1), _signal("pink_noise", 8000, 2)]).astype(np.float64))
    for args in (AST_ARGS, {"use_energy": True}, {"channel": 1, "snip_edges": False}):
        expected = ta_kaldi.fbank(stereo, **args)
        ours = kaldi_fbank(stereo, **args)
        assert ours.dtype == torch.float64
        assert _difference(ours, expected) <= TOLERANCE


def test_kaldi_fbank_dither_draws_the_same_noise():
    _need_torchaudio()
    waveform = torch.from_numpy(_signal("speech_like", 16000, 3).copy())[None]
    torch.manual_seed(11)
    expected = ta_kaldi.fbank(waveform, dither=1e-3, **AST_ARGS)
    torch.manual_seed(11)
    ours = kaldi_fbank(waveform, dither=1e-3, **AST_ARGS)
    assert _difference(ours, expected) <= TOLERANCE


# -- ast_features against ASTFeatureExtractor(...)["input_values"], torchaudio branch --------------------

EXTRACTORS = {
    "ast_audioset": {},  # MIT/ast-finetuned-audioset-10-10-0.4593's preprocessor_config.json is the default
    "unnormalized": {"do_normalize": False},
    "small": {"num_mel_bins": 64, "max_length": 100, "mean": -3.5, "std": 3.25},
    "eight_khz": {"sampling_rate": 8000, "num_mel_bins": 40, "max_length": 300},
}


@pytest.mark.parametrize("setting", sorted(EXTRACTORS))
@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_ast_features_match_the_torchaudio_branch(name, setting):
    extractor = _extractor(True, **EXTRACTORS[setting])
    # one batch mixing every length, as the encoder hands them over
    clips = [_signal(name, n, i) for i, n in enumerate(AST_LENGTHS)]
    expected = _torchaudio_features(extractor, clips)
    ours = ast_features(clips, extractor)
    assert ours.shape == (len(clips), extractor.max_length, extractor.num_mel_bins)
    assert _difference(ours, expected) <= TOLERANCE


@pytest.mark.parametrize("source", sorted(REAL))
def test_ast_features_match_the_torchaudio_branch_on_real_speech(source):
    extractor = _extractor(True)
    clips = list(_real_clips(*REAL[source], 24))
    # mteb's AST wrapper pads short clips to 401 samples; a cut and a tiled (long) clip too
    clips += [np.pad(clips[0][:300], (0, 101)), clips[1][:400], np.tile(clips[2], 200000 // clips[2].size + 1)]
    expected = _torchaudio_features(extractor, clips)
    assert _difference(ast_features(clips, extractor), expected) <= TOLERANCE


def test_ast_features_take_float64_and_read_only_clips_as_the_extractor_does():
    extractor = _extractor(True)
    clips = [_signal("speech_like", 16000, 5).astype(np.float64) * 1.1, _signal("tones", 9000, 6)]  # second read-only
    expected = _torchaudio_features(extractor, clips)
    assert _difference(ast_features(clips, extractor), expected) <= TOLERANCE


@pytest.mark.parametrize("n", [0, 1, 100, 399])
def test_clips_shorter_than_a_window_are_refused_by_both(n):
    extractor = _extractor(True)
    clip = _signal("white_noise", max(n, 1), 0)[:n]
    with pytest.raises(AssertionError):  # torchaudio asserts the window fits
        _torchaudio_features(extractor, [clip])
    with pytest.raises(ValueError):
        ast_features([clip], extractor)


def test_the_numpy_fallback_is_not_the_reference():
    """The branch switch works, and the fallback (what maeb's environment gets from transformers alone) is
    measurably, if slightly, off the torchaudio features."""
    extractor = _extractor(True)
    clips = [_signal("speech_like", 48001, 7), _signal("pink_noise", 16000, 8), *_real_clips(*REAL["speech_commands"], 4)]
    reference = _torchaudio_features(extractor, clips)
    fallback = _numpy_features(clips)
    gap = _difference(fallback, reference)
    assert 1e-6 < gap < 1e-2, gap
    assert _difference(ast_features(clips, extractor), reference) <= TOLERANCE
