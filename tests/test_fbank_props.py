"""Properties of maeb.audio.fbank that hold without torchaudio (parity with it is tests/parity/test_fbank.py)."""

from __future__ import annotations

import math
import types
import warnings

import numpy as np
import pytest
import torch

from maeb.audio.fbank import WINDOW_TYPES, _mel_banks, ast_features, frame_geometry, kaldi_fbank

RATE = 16000
LOG_FLOOR = math.log(float(np.finfo(np.float32).eps))  # ln(2 ** -23)
AST = {"sample_frequency": RATE, "window_type": "hanning", "num_mel_bins": 128}


def _settings(**overrides):
    """The attributes ast_features reads from an ASTFeatureExtractor (the AudioSet checkpoint's values)."""
    base = {
        "sampling_rate": RATE,
        "num_mel_bins": 128,
        "max_length": 1024,
        "do_normalize": True,
        "mean": -4.2677393,
        "std": 4.5689974,
    }
    return types.SimpleNamespace(**{**base, **overrides})


def _transformers_extractor():
    """transformers' ASTFeatureExtractor; in this environment (no torchaudio) it takes its numpy fallback."""
    from transformers import ASTFeatureExtractor

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="At least one mel filter has all zero values")
        return ASTFeatureExtractor()


def _tone(freq: float, n: int = RATE, amplitude: float = 0.5) -> np.ndarray:
    return (amplitude * np.sin(2 * np.pi * freq * np.arange(n) / RATE)).astype(np.float32)


def _noise(n: int, seed: int = 0, scale: float = 0.1) -> np.ndarray:
    return (scale * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


def _fbank(x: np.ndarray, **args) -> torch.Tensor:
    return kaldi_fbank(torch.from_numpy(np.array(x))[None], **{**AST, **args})


def _centre_hz(num_bins: int, low: float = 20.0, high: float = RATE / 2) -> np.ndarray:
    """Kaldi's mel-bank centres, from the mel scale 1127 ln(1 + f / 700) (float64, independently of maeb)."""
    mel = lambda f: 1127.0 * np.log1p(f / 700.0)  # noqa: E731
    centres = mel(low) + (np.arange(num_bins) + 1) * (mel(high) - mel(low)) / (num_bins + 1)
    return 700.0 * np.expm1(centres / 1127.0)


def test_frame_geometry():
    assert frame_geometry(16000) == (400, 160, 512)
    assert frame_geometry(8000) == (200, 80, 256)
    assert frame_geometry(16000, frame_length=26.0, round_to_power_of_two=False) == (416, 160, 416)
    assert frame_geometry(44100) == (1102, 441, 2048)


@pytest.mark.parametrize("n", [400, 401, 559, 560, 16000, 48001])
def test_frame_counts_and_shapes(n):
    x = _noise(n)
    assert _fbank(x).shape == (1 + (n - 400) // 160, 128)
    assert _fbank(x, snip_edges=False).shape == ((n + 80) // 160, 128)
    assert _fbank(x, use_energy=True).shape == (1 + (n - 400) // 160, 129)
    assert kaldi_fbank(torch.from_numpy(x)).shape == (1 + (n - 400) // 160, 23)  # Kaldi's defaults, a 1-D waveform


def test_ast_features_shape_dtype_and_padding():
    lengths = [400, 401, 16000, 164080, 200000]
    clips = [_noise(n, seed=i) for i, n in enumerate(lengths)]
    values = ast_features(clips, _settings())
    assert values.shape == (len(clips), 1024, 128) and values.dtype == torch.float32
    raw = ast_features(clips, _settings(do_normalize=False))
    for row, n in zip(raw, lengths):
        frames = min(1024, 1 + (n - 400) // 160)
        assert torch.all(row[frames:] == 0) and torch.all(row[:frames] != 0)
        assert torch.equal(row[:frames], _fbank(clips[lengths.index(n)])[:frames])
    # padded rows normalise to (0 - mean) / (2 std)
    assert torch.allclose(values[0, 1:], torch.tensor((0 + 4.2677393) / (2 * 4.5689974)))
    small = ast_features(clips[:2], _settings(num_mel_bins=64, max_length=7))
    assert small.shape == (2, 7, 64)


def test_a_tone_peaks_in_the_band_of_its_frequency():
    centres = _centre_hz(128)
    for freq in (150.0, 440.0, 1000.0, 2500.0, 5000.0, 7000.0):
        energies = _fbank(_tone(freq)).mean(0).numpy()
        peak = int(np.argmax(energies))
        nearest = int(np.argmin(np.abs(centres - freq)))
        assert abs(peak - nearest) <= 1, (freq, peak, nearest, centres[peak])
        # the tone stands far above the bands an octave away
        far = np.abs(np.log2(centres / freq)) > 1
        assert energies[peak] - energies[far].max() > 5.0, freq


def test_silence_and_dc_give_the_log_floor():
    for x in (np.zeros(16000, np.float32), np.full(16000, 0.3, np.float32)):
        features = _fbank(x)  # a constant loses its mean in every frame
        assert torch.allclose(features, torch.tensor(LOG_FLOOR), atol=1e-6) and features.max() <= LOG_FLOOR + 1e-6
    values = ast_features([np.zeros(16000, np.float32)], _settings())[0, :98]  # 98 frames, then padding
    assert torch.allclose(values, torch.tensor((LOG_FLOOR + 4.2677393) / (2 * 4.5689974)), atol=1e-6)
    energy = _fbank(np.zeros(16000, np.float32), use_energy=True)[:, 0]
    assert torch.all(energy == 0.0)  # the frame energy is floored at energy_floor = 1 (log 0)


def _edges_hz(num_bins: int, low: float = 20.0, high: float = RATE / 2) -> np.ndarray:
    mel = lambda f: 1127.0 * np.log1p(f / 700.0)  # noqa: E731
    return 700.0 * np.expm1((mel(low) + np.arange(num_bins + 2) * (mel(high) - mel(low)) / (num_bins + 1)) / 1127.0)


def test_banks_are_triangles_and_the_empty_ones_hold_no_fft_bin():
    bin_hz = np.arange(257) * RATE / 512
    for bins in (23, 64, 128):
        banks = _mel_banks(bins, 512, 16000.0, 20.0, 0.0).numpy()
        assert banks.shape == (bins, 257) and banks.dtype == np.float32
        assert np.all(banks >= 0) and np.all(banks <= 1) and np.all(banks[:, -1] == 0)
        edges = _edges_hz(bins)
        inside = (bin_hz[None, :] > edges[:-2, None] + 1e-3) & (bin_hz[None, :] < edges[2:, None] - 1e-3)
        assert np.all((banks > 0) == inside)  # positive exactly strictly between a bank's outer edges
    # at 128 banks, bank 3 (63 to 93 Hz) falls between the FFT bins at 62.5 and 93.75 Hz: its energy is the floor
    assert np.flatnonzero(_mel_banks(128, 512, 16000.0, 20.0, 0.0).sum(1) == 0).tolist() == [3]
    assert np.all(_fbank(_noise(16000))[:, 3].numpy() == np.float32(LOG_FLOOR))


def test_banks_agree_with_transformers_kaldi_mel_filters():
    from transformers.audio_utils import mel_filter_bank

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bins in (23, 64, 128):
            reference = mel_filter_bank(
                num_frequency_bins=257,
                num_mel_filters=bins,
                min_frequency=20,
                max_frequency=8000,
                sampling_rate=16000,
                norm=None,
                mel_scale="kaldi",
                triangularize_in_mel_space=True,
            )
            assert np.max(np.abs(_mel_banks(bins, 512, 16000.0, 20.0, 0.0).numpy() - reference.T)) < 1e-4


def test_close_to_transformers_numpy_fallback():
    """The extractor's numpy path (float64, its own mel filters) is an independent implementation of the same
    features: within 1e-3 after normalisation (about 1e-2 in log energy; typically 1e-5)."""
    extractor = _transformers_extractor()
    clips = [_noise(48001, 1), _tone(1000.0, 30000), _noise(164240, 2, scale=0.5), np.zeros(800, np.float32)]
    ours = ast_features(clips, extractor)
    reference = extractor(clips, sampling_rate=RATE, return_tensors="pt")["input_values"]
    assert ours.shape == reference.shape and ours.dtype == reference.dtype
    assert float((ours - reference).abs().max()) < 1e-3
    assert float((ours - reference).abs().mean()) < 1e-5


def test_doubling_the_amplitude_adds_log_four():
    x = _noise(16000, 3) + _tone(700.0, 16000, 0.2)
    base = _fbank(x)
    clear = base > LOG_FLOOR + 3.0  # away from the epsilon floor (the empty bank 3, a few quiet low-band frames)
    assert clear.float().mean() > 0.95
    gap = (_fbank(2 * x) - base)[clear]
    assert torch.allclose(gap, torch.tensor(math.log(4.0)), atol=1e-4)


def test_raw_frame_energy_is_the_log_energy_of_the_mean_removed_frame():
    x = _noise(4000, 4, scale=0.3)
    frames = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), 400)[::160]
    frames = frames - frames.mean(1, keepdims=True)
    expected = np.maximum(np.log((frames**2).sum(1)), 0.0)
    features = _fbank(x, use_energy=True)
    assert np.allclose(features[:, 0].numpy(), expected, atol=1e-5)
    last = _fbank(x, use_energy=True, htk_compat=True)
    assert torch.equal(last[:, -1], features[:, 0]) and torch.equal(last[:, :-1], features[:, 1:])


def test_power_and_log_options_relate():
    x = _noise(8000, 5)
    log_power = _fbank(x)
    power = _fbank(x, use_log_fbank=False)
    assert torch.allclose(power.clamp_min(float(np.finfo(np.float32).eps)).log(), log_power, atol=1e-5)
    centred = _fbank(x, subtract_mean=True)
    assert torch.allclose(centred, log_power - log_power.mean(0), atol=1e-5)


def test_deterministic_and_independent_of_the_batch():
    clips = [_noise(20000, 6), _tone(300.0, 5000), _noise(170000, 7)]
    first = ast_features(clips, _settings())
    assert torch.equal(first, ast_features(clips, _settings()))
    assert torch.equal(first[1], ast_features([clips[1]], _settings())[0])
    assert torch.equal(first.flip(0), ast_features(clips[::-1], _settings()))


def test_long_clips_read_only_the_kept_frames():
    x = _noise(30 * RATE, 8)
    cut = (1024 - 1) * 160 + 400
    assert torch.equal(ast_features([x], _settings()), ast_features([x[:cut]], _settings()))
    assert torch.equal(ast_features([x], _settings(do_normalize=False))[0], _fbank(x)[:1024])


def test_dtypes():
    x = _noise(4000, 9)
    assert _fbank(x).dtype == torch.float32
    assert kaldi_fbank(torch.from_numpy(x.astype(np.float64))[None], **AST).dtype == torch.float64
    assert ast_features([x.astype(np.float64)], _settings()).dtype == torch.float32
    assert torch.equal(ast_features([x.astype(np.float64)], _settings()), ast_features([x], _settings()))
    with pytest.raises(TypeError):
        kaldi_fbank(torch.zeros(1, 1000, dtype=torch.int16))
    with pytest.raises(TypeError):
        kaldi_fbank(np.zeros((1, 1000), np.float32))


def test_every_window_type_runs_and_differs():
    x = _noise(4000, 10) + _tone(1234.0, 4000)
    outputs = {w: _fbank(x, window_type=w) for w in WINDOW_TYPES}
    for w, out in outputs.items():
        assert out.shape == (23, 128) and torch.all(torch.isfinite(out)), w
    names = sorted(outputs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not torch.equal(outputs[a], outputs[b]), (a, b)


def test_short_and_bad_inputs_are_refused():
    settings = _settings()
    for n in (0, 1, 399):
        with pytest.raises(ValueError):
            ast_features([np.zeros(n, np.float32)], settings)
        with pytest.raises(ValueError):
            _fbank(np.zeros(n, np.float32))
    with pytest.raises(ValueError):
        ast_features([np.zeros((2, 1000), np.float32)], settings)
    with pytest.raises(ValueError):
        ast_features([], settings)
    with pytest.raises(ValueError):
        _fbank(_noise(1000), window_type="kaiser")
    with pytest.raises(ValueError):
        _fbank(_noise(1000), num_mel_bins=3)
    with pytest.raises(ValueError):
        _fbank(_noise(1000), low_freq=9000.0)
    with pytest.raises(NotImplementedError):
        _fbank(_noise(1000), vtln_warp=0.9)
    with pytest.raises(ValueError):
        kaldi_fbank(torch.zeros(2, 1000), channel=2)
    assert _fbank(_noise(1000), min_duration=0.5).shape == (0,)


def test_read_only_clips_are_left_alone():
    x = _noise(5000, 11)
    x.flags.writeable = False
    before = x.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no torch warning about non-writable arrays
        ast_features([x], _settings())
    assert np.array_equal(x, before)


def test_gradients_flow_after_cached_banks_were_built_in_inference_mode():
    from maeb.audio import fbank as fbank_module

    fbank_module._mel_banks.cache_clear()
    fbank_module._window.cache_clear()
    ast_features([_noise(2000, 12)], _settings())  # builds the banks and window under inference_mode
    waveform = torch.from_numpy(_noise(2000, 13))[None].requires_grad_()
    kaldi_fbank(waveform, **AST).sum().backward()
    assert waveform.grad is not None and torch.all(torch.isfinite(waveform.grad))
