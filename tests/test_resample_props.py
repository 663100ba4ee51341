"""Properties of maeb.audio.resample that hold without torchaudio (parity with it is tests/parity/test_resample.py)."""

from __future__ import annotations

import functools
import math
import threading

import numpy as np
import pytest

from maeb.audio import resample as resample_module
from maeb.audio.resample import output_length, resample

PAIRS = [(8000, 16000), (22050, 16000), (44100, 16000), (48000, 16000), (44100, 48000), (16000, 48000), (11025, 16000)]
# rates whose gcd with the target is small: the polyphase path (24,414 Hz is TESS's rate)
ODD_PAIRS = [(24414, 16000), (47999, 16000), (44056, 48000), (8001, 48000), (64000, 22050)]
PAIRS += ODD_PAIRS
LIKES = ("transforms", "functional")


def _tone(freq: float, rate: int, seconds: float = 1.0) -> np.ndarray:
    return np.sin(2 * np.pi * freq * np.arange(int(rate * seconds)) / rate).astype(np.float32)


def _peak_hz(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size)))
    return float(np.argmax(spectrum) * rate / x.size)


@pytest.mark.parametrize("like", LIKES)
def test_equal_rates_return_a_float32_copy(like):
    x = np.random.default_rng(0).standard_normal(1001).astype(np.float32)
    y = resample(x, 16000, 16000, like=like)
    assert y.dtype == np.float32 and np.array_equal(x, y) and y is not x
    assert np.array_equal(resample(x.astype(np.float64), 48000, 48000), x)


@pytest.mark.parametrize(("orig", "new"), PAIRS)
def test_output_length_is_the_ceiling_of_the_ratio(orig, new):
    rng = np.random.default_rng(1)
    for n in [1, 2, 3, 7, 13, 50, 441, 1000, 4097, 22051, *rng.integers(1, 60000, 8).tolist()]:
        expected = math.ceil(n * new / orig)
        assert output_length(n, orig, new) == expected
        assert resample(np.zeros(n, np.float32), orig, new).shape == (expected,)


def test_output_length_keeps_torchaudios_float32_rounding():
    # 180697 * 160 / 441 = 65559.002...: torchaudio takes the ceiling of that ratio as a float32 (65559.0)
    assert output_length(180697, 44100, 16000) == 65559 == math.ceil(180697 * 160 / 441) - 1
    assert resample(np.zeros(180697, np.float32), 44100, 16000).shape == (65559,)
    assert output_length(441000, 44100, 16000) == 160000


def test_empty_and_tiny_inputs():
    assert resample(np.zeros(0, np.float32), 44100, 16000).shape == (0,)
    for n in range(1, 51):
        for orig, new in PAIRS:
            y = resample(np.full(n, 0.25, np.float32), orig, new)
            assert y.shape == (math.ceil(n * new / orig),) and np.all(np.isfinite(y))


@pytest.mark.parametrize("like", LIKES)
@pytest.mark.parametrize(
    ("orig", "new", "freq"), [(44100, 16000, 1000.0), (48000, 16000, 3000.0), (8000, 48000, 440.0), (22050, 48000, 6000.0)]
)
def test_a_sine_keeps_its_frequency_and_level(orig, new, freq, like):
    y = resample(_tone(freq, orig), orig, new, like=like)
    assert abs(_peak_hz(y, new) - freq) <= 2.0
    interior = y[new // 10 : -new // 10]
    assert abs(np.sqrt(np.mean(interior.astype(np.float64) ** 2)) - np.sqrt(0.5)) < 5e-3


@pytest.mark.parametrize(("orig", "new"), PAIRS)
def test_dc_gain_is_one(orig, new):
    y = resample(np.full(orig, 0.5, np.float32), orig, new)
    interior = y[y.size // 4 : 3 * y.size // 4]
    assert np.max(np.abs(interior / 0.5 - 1.0)) < 2e-3


@pytest.mark.parametrize(("orig", "new"), [(44100, 16000), (48000, 16000), (22050, 16000), (32000, 16000)])
def test_content_above_the_new_nyquist_is_attenuated(orig, new):
    # the filter is -6 dB at 0.99 x the new Nyquist and its transition band reaches ~1.3 kHz past it, so
    # tones from 1.3x the new Nyquist up to the old one must come out 40 dB down, and one just above
    # the new Nyquist at least 6 dB down
    def level(freq: float) -> float:
        y = resample(_tone(freq, orig), orig, new)[1600:-1600].astype(np.float64)
        return float(np.sqrt(np.mean(y**2)))

    passband = level(1000.0)
    assert abs(passband - np.sqrt(0.5)) < 5e-3
    assert level(0.5 * new + 300.0) < 0.5 * passband
    for freq in np.linspace(0.65 * new, 0.95 * orig / 2, 4):
        assert level(freq) < 1e-2 * passband, freq


def test_noise_keeps_its_band_and_drops_the_rest():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(441000).astype(np.float32)
    y = resample(x, 44100, 16000).astype(np.float64)
    # a flat spectrum to 22.05 kHz, band-limited to ~7.92 kHz: power scales by about 7920 / 22050
    assert abs(np.var(y) / np.var(x) - 0.99 * 8000 / 22050) < 0.03
    # noise only between 10.4 and 22.05 kHz has nothing to keep at 16 kHz
    spectrum = np.fft.rfft(rng.standard_normal(441000))
    spectrum[np.fft.rfftfreq(441000, 1 / 44100) < 10400] = 0
    high = np.fft.irfft(spectrum, 441000).astype(np.float32)
    assert np.var(resample(high, 44100, 16000).astype(np.float64)) < 1e-3 * np.var(high)


def test_output_is_float32_whatever_the_input_float():
    x = _tone(440.0, 22050, 0.1)
    for dtype in (np.float16, np.float32, np.float64):
        assert resample(x.astype(dtype), 22050, 16000).dtype == np.float32
    with pytest.raises(TypeError):
        resample(np.zeros(10, np.int16), 8000, 16000)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        resample(np.zeros((2, 100), np.float32), 8000, 16000)
    with pytest.raises(ValueError):
        resample(np.zeros(100, np.float32), 8000.5, 16000)
    with pytest.raises(ValueError):
        resample(np.zeros(100, np.float32), 0, 16000)
    with pytest.raises(ValueError):
        resample(np.zeros(100, np.float32), 8000, 16000, like="librosa")


def test_read_only_input_is_accepted_and_left_alone():
    x = _tone(300.0, 8000, 0.5)
    x.flags.writeable = False
    before = x.copy()
    resample(x, 8000, 16000)
    assert np.array_equal(x, before)


def test_deterministic_and_variants_stay_close():
    x = np.random.default_rng(3).standard_normal(50001).astype(np.float32)
    first = resample(x, 22050, 16000)
    assert np.array_equal(first, resample(x, 22050, 16000))
    # the two torchaudio variants differ only in the kernel's precision
    assert np.max(np.abs(first - resample(x, 22050, 16000, like="functional"))) < 1e-4


def test_chunked_convolution_matches_one_pass(monkeypatch):
    x = np.random.default_rng(4).standard_normal(300_001).astype(np.float32)
    whole = resample(x, 44100, 16000)
    monkeypatch.setattr(resample_module, "CHUNK_SAMPLES", 65536)
    monkeypatch.setattr(resample_module, "MIN_CHUNK_FRAMES", 1)
    chunked = resample(x, 44100, 16000)
    assert chunked.shape == whole.shape
    assert np.max(np.abs(chunked - whole)) < 1e-6


def test_threads_get_the_same_output():
    rng = np.random.default_rng(5)
    jobs = [(rng.standard_normal(30011).astype(np.float32), orig, new) for orig, new in PAIRS for _ in range(3)]
    with resample_module._kernels_lock:
        resample_module._kernels.clear()  # the threads race to build the kernels too
    results: dict[int, list[np.ndarray]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(worker: int) -> None:
        try:
            start.wait()
            order = jobs if worker % 2 == 0 else jobs[::-1]
            results[worker] = [resample(x, o, n) for x, o, n in order][:: 1 if worker % 2 == 0 else -1]
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    serial = [resample(x, o, n) for x, o, n in jobs]
    for worker in range(4):
        assert all(np.array_equal(a, b) for a, b in zip(results[worker], serial)), worker


def test_odd_rate_pairs_evaluate_only_each_phases_window():
    """24,414 -> 16,000 Hz reduces to 12,207/8,000: torchaudio's dense bank is 8,000 x 12,223 floats
    (390 MB, 229 ms per 2 s clip), 47,999 -> 16,000 Hz 16,000 x 48,037 (3 GB); what is kept per phase is
    its window, about 20-40 taps."""
    for orig, new in ODD_PAIRS:
        assert not resample_module.uses_dense(orig, new), (orig, new)
    for orig, new in [(8000, 16000), (22050, 16000), (44100, 16000), (48000, 16000), (44100, 32000), (22050, 48000)]:
        assert resample_module.uses_dense(orig, new), (orig, new)  # the published protocol's pairs keep torchaudio's bits
    for orig, new in ODD_PAIRS:
        y = resample(_tone(440.0, orig, 2.0), orig, new)
        assert y.shape == (math.ceil(2 * new),)
        o, n = resample_module._reduced(orig, new)
        kernel = resample_module._kernels[(o, n, "transforms", False)]
        dense_bytes = 4 * n * (2 * resample_module._half_width(o, n) + o)
        assert kernel.matrices.nbytes < min(16e6, dense_bytes), (orig, new, kernel.matrices.nbytes, dense_bytes)


@functools.cache
def _dense_bank(o: int, n: int, like: str) -> tuple[np.ndarray, int]:
    kernel, width = resample_module._build_kernel(o, n, like)
    return kernel[:, 0].numpy().astype(np.float64), width


def _exact(x: np.ndarray, orig: int, new: int, like: str) -> np.ndarray:
    """torchaudio's sums with its own float32 kernel (maeb's dense bank, which tests/parity checks against
    torchaudio bit for bit), computed in float64 one frame at a time: the value each output rounds."""
    o, n = resample_module._reduced(orig, new)
    bank, width = _dense_bank(o, n, like)
    padded = np.zeros(width + x.size + width + o)
    padded[width : width + x.size] = x
    frames = x.size // o + 1
    out = np.concatenate([bank @ padded[f * o : f * o + bank.shape[1]] for f in range(frames)])
    return out[: output_length(x.size, orig, new)]


@pytest.mark.parametrize("like", LIKES)
@pytest.mark.parametrize(("orig", "new"), [(44056, 16000), (64000, 22050), (11928, 48000), (64000, 44100)])
def test_polyphase_outputs_are_the_correctly_rounded_dense_sums(orig, new, like):
    """Each output of the polyphase path is the exact sum of torchaudio's products rounded once to float32
    (within half a float32 step), which torchaudio's float32 convolution misses by a few steps; so the two
    differ by torchaudio's own rounding only."""
    assert not resample_module.uses_dense(orig, new)
    rng = np.random.default_rng(orig)
    worst = 0.0
    period = resample_module._reduced(orig, new)[0]  # input samples per frame of the convolution
    for n in (1, 2, 7, 31, 1001, 4097, 2 * period + 17, 3 * period - 1):
        x = (0.9 * rng.uniform(-1, 1, n)).astype(np.float32)
        exact = _exact(x, orig, new, like)
        ours = resample(x, orig, new, like=like)
        assert ours.shape == exact.shape
        half_step = 0.5 * np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
        assert np.all(np.abs(ours - exact) <= half_step * (1 + 1e-9) + 1e-30), (n, float(np.max(np.abs(ours - exact))))
        worst = max(worst, float(np.max(np.abs(ours - exact))))
    assert worst < 1e-7


@pytest.mark.parametrize("like", LIKES)
def test_polyphase_kernel_holds_the_dense_kernels_values(like):
    """The window taps are computed element by element as torchaudio computes the dense bank: the same
    float32 values, and every tap left out is zero there (float64 kernel) or under 1e-23 (float32 one)."""
    o, n = resample_module._reduced(64000, 22050)
    kernel, width = resample_module._build_kernel(o, n, like)
    dense = kernel[:, 0].numpy()
    poly = resample_module._build_polyphase(o, n, like)
    rebuilt = np.zeros(dense.shape, dtype=np.float64)
    groups, stretch, per_group = poly.matrices.shape
    for j in range(n):
        g, p = divmod(j, per_group)
        taps = poly.starts[g] + width + np.arange(stretch)
        inside = (taps >= 0) & (taps < dense.shape[1])
        rebuilt[j, taps[inside]] = poly.matrices[g, inside, p]
        assert not np.any(poly.matrices[g, ~inside, p])
    kept = rebuilt != 0
    assert np.array_equal(rebuilt[kept], dense[kept].astype(np.float64))
    assert np.max(np.abs(dense[~kept]), initial=0.0) < 1e-23
    assert kept.sum(axis=1).max() <= 2 * width + 4  # a window per phase, not the 2 * width + orig dense taps


def test_polyphase_output_does_not_depend_on_where_a_call_starts_or_ends(monkeypatch):
    """The head cut and maeb.audio.stream resample a piece of a clip and keep what its margins make exact:
    the same bits as the whole clip, here for chunked calls and for every prefix."""
    rng = np.random.default_rng(6)
    for orig, new in [(24414, 16000), (44056, 48000)]:
        x = (0.5 * rng.standard_normal(orig * 6)).astype(np.float32)
        whole = resample(x, orig, new)
        reach = resample_module._half_width(*resample_module._reduced(orig, new)) + 2
        for cut in rng.integers(orig // 2, x.size, 8).tolist():
            safe = int((cut - reach) * new / orig) - 1
            assert np.array_equal(resample(x[:cut], orig, new)[:safe], whole[:safe]), (orig, new, cut)
        monkeypatch.setattr(resample_module, "CHUNK_OUTPUT", 3001)
        assert np.array_equal(resample(x, orig, new), whole)
        monkeypatch.undo()
