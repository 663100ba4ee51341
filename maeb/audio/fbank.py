"""Kaldi log-mel filterbanks as torchaudio computes them, and the AST feature extractor's input on top of them.

transformers' ``ASTFeatureExtractor`` (the AST checkpoints, e.g. MIT/ast-finetuned-audioset-10-10-0.4593)
computes its filterbank with ``torchaudio.compliance.kaldi.fbank`` when torchaudio imports, which is the
case in mteb's environment, and with a numpy approximation otherwise (about 1e-5 away in the features).
maeb must not depend on torchaudio, so this module re-derives torchaudio's computation on plain torch:

* frames of ``int(rate * 25 ms)`` samples every ``int(rate * 10 ms)`` samples, only those that fit
  (``snip_edges``; otherwise the signal is mirrored at both ends); each frame loses its mean, is
  pre-emphasised (``x[j] - 0.97 x[j - 1]``, the first sample against itself), multiplied by a symmetric
  window (Hann for AST, Kaldi's default "povey" is Hann to the power 0.85), zero-padded to the next power
  of two (512) and transformed; the power spectrum is ``|rfft| ** 2``;
* the mel banks are triangles on Kaldi's mel scale ``1127 ln(1 + f / 700)`` between ``low_freq`` (20 Hz) and
  ``high_freq`` (the Nyquist frequency when <= 0, as an offset from it), ``num_bins + 2`` equally spaced mel
  edges, evaluated at the FFT bin frequencies without the Nyquist bin (its weight is zero); torchaudio builds
  them in float32 whatever the waveform's dtype, then casts them;
* the filterbank energies are the matrix product of power spectrum and banks, floored at float32's epsilon
  and logged; the frame energy (``use_energy``) goes first, or last with ``htk_compat``.

Every step is the same torch operation, on the same shapes, strides and dtypes, as torchaudio's, because the
last bits of the FFT, the reductions and the matrix product depend on them: on the same torch build the
output is bit-identical (tests/parity/test_fbank.py). Clips shorter than one window are refused, as by
torchaudio (which asserts; ``ValueError`` here).

``ast_features`` adds what ``ASTFeatureExtractor.__call__`` does around the filterbank: float32 samples,
``max_length`` frames (zero rows appended, or the rest cut), then ``(x - mean) / (2 std)`` in numpy, stacked
into one tensor. Samples past the last kept frame are not read, so long clips cost ``max_length`` frames.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import torch

__all__ = ["kaldi_fbank", "ast_features", "frame_geometry", "WINDOW_TYPES"]

WINDOW_TYPES = ("hamming", "hanning", "povey", "rectangular", "blackman")
FLOAT32_EPSILON = float(np.finfo(np.float32).eps)  # Kaldi's floor on energies, std::numeric_limits<float>::epsilon()


def frame_geometry(
    sample_frequency: float, frame_length: float = 25.0, frame_shift: float = 10.0, round_to_power_of_two: bool = True
) -> tuple[int, int, int]:
    """(window size, window shift, FFT size) in samples. The products are truncated exactly as torchaudio
    evaluates them (rate * milliseconds * 0.001, left to right, then int)."""
    size = int(sample_frequency * frame_length * 0.001)
    shift = int(sample_frequency * frame_shift * 0.001)
    fft_size = (1 if size <= 1 else 1 << (size - 1).bit_length()) if round_to_power_of_two else size
    return size, shift, fft_size


def _epsilon(dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    # torchaudio keeps a float32 scalar tensor and casts it to the waveform's dtype
    return torch.tensor(FLOAT32_EPSILON, dtype=torch.float32).to(device=device, dtype=dtype)


@lru_cache(maxsize=32)
def _window(window_type: str, size: int, blackman_coeff: float, dtype: torch.dtype) -> torch.Tensor:
    """The symmetric analysis window, computed in the waveform's dtype (read-only by convention)."""
    # cached tensors must not be inference tensors, which autograd refuses outside inference mode
    with torch.inference_mode(False):
        return _build_window(window_type, size, blackman_coeff, dtype)


def _build_window(window_type: str, size: int, blackman_coeff: float, dtype: torch.dtype) -> torch.Tensor:
    if window_type in ("hanning", "povey"):
        hann = torch.hann_window(size, periodic=False, dtype=dtype)
        return hann if window_type == "hanning" else hann.pow(0.85)
    if window_type == "hamming":
        return torch.hamming_window(size, periodic=False, alpha=0.54, beta=0.46, dtype=dtype)
    if window_type == "rectangular":
        return torch.ones(size, dtype=dtype)
    if window_type == "blackman":
        step = 2 * math.pi / (size - 1)
        n = torch.arange(size, dtype=dtype)
        return (blackman_coeff - 0.5 * torch.cos(step * n) + (0.5 - blackman_coeff) * torch.cos(2 * step * n)).to(dtype)
    raise ValueError(f"window_type must be one of {WINDOW_TYPES}, got {window_type!r}")


def _mel(freq):
    return 1127.0 * (1.0 + freq / 700.0).log() if isinstance(freq, torch.Tensor) else 1127.0 * math.log(1.0 + freq / 700.0)


@lru_cache(maxsize=32)
def _mel_banks(num_bins: int, fft_size: int, sample_frequency: float, low_freq: float, high_freq: float) -> torch.Tensor:
    """(num_bins, fft_size // 2 + 1) float32 triangular weights over the rfft bins, the Nyquist column zero.

    All tensors here are float32 (torchaudio's come out of ``torch.arange`` in the default dtype and are
    combined with Python floats), so the weights carry float32 rounding in the last bits."""
    with torch.inference_mode(False):
        return _build_mel_banks(num_bins, fft_size, sample_frequency, low_freq, high_freq)


def _build_mel_banks(num_bins: int, fft_size: int, sample_frequency: float, low_freq: float, high_freq: float) -> torch.Tensor:
    if num_bins <= 3:
        raise ValueError(f"num_mel_bins must be more than 3, got {num_bins}")
    nyquist = 0.5 * sample_frequency
    if high_freq <= 0.0:
        high_freq += nyquist
    if not (0.0 <= low_freq < nyquist and 0.0 < high_freq <= nyquist and low_freq < high_freq):
        raise ValueError(f"bad mel range: low_freq {low_freq}, high_freq {high_freq}, Nyquist {nyquist}")
    mel_low, mel_high = _mel(low_freq), _mel(high_freq)
    delta = (mel_high - mel_low) / (num_bins + 1)
    # edge i is mel_low + i * delta in float32; bank b rises from edge b to edge b + 1 and falls to edge b + 2
    edges = mel_low + torch.arange(num_bins + 2, dtype=torch.float32) * delta
    left, centre, right = (edges[k : k + num_bins, None] for k in range(3))
    half = fft_size // 2
    bin_mel = _mel((sample_frequency / fft_size) * torch.arange(float(half), dtype=torch.float32))[None, :]
    rising = (bin_mel - left) / (centre - left)
    falling = (right - bin_mel) / (right - centre)
    banks = torch.zeros(num_bins, half + 1, dtype=torch.float32)
    banks[:, :half] = torch.maximum(torch.zeros(1), torch.minimum(rising, falling))
    return banks


def _frames(signal: torch.Tensor, size: int, shift: int, snip_edges: bool) -> torch.Tensor:
    """(frames, size) overlapping view of a 1-D signal (strides (shift, 1) over the signal or its padded copy)."""
    n = signal.shape[0]
    if snip_edges:
        count = 1 + (n - size) // shift
    else:
        # Kaldi mirrors the signal at both ends, repeating the edge sample: [x2 x1 x0 | x0 x1 ... | ... x1 x0]
        count = (n + shift // 2) // shift
        pad = size // 2 - shift // 2
        head = signal[:pad].flip(0) if pad > 0 else None
        body = signal if pad >= 0 else signal[-pad:]
        signal = torch.cat([part for part in (head, body, signal.flip(0)) if part is not None])
    return signal.unfold(0, size, shift)[:count]


def _log_energy(frames: torch.Tensor, epsilon: torch.Tensor, energy_floor: float) -> torch.Tensor:
    energy = torch.maximum(frames.pow(2).sum(1), epsilon).log()
    if energy_floor == 0.0:
        return energy
    return torch.maximum(energy, torch.tensor(math.log(energy_floor), dtype=frames.dtype, device=frames.device))


def kaldi_fbank(
    waveform: torch.Tensor,
    *,
    blackman_coeff: float = 0.42,
    channel: int = -1,
    dither: float = 0.0,
    energy_floor: float = 1.0,
    frame_length: float = 25.0,
    frame_shift: float = 10.0,
    high_freq: float = 0.0,
    htk_compat: bool = False,
    low_freq: float = 20.0,
    min_duration: float = 0.0,
    num_mel_bins: int = 23,
    preemphasis_coefficient: float = 0.97,
    raw_energy: bool = True,
    remove_dc_offset: bool = True,
    round_to_power_of_two: bool = True,
    sample_frequency: float = 16000.0,
    snip_edges: bool = True,
    subtract_mean: bool = False,
    use_energy: bool = False,
    use_log_fbank: bool = True,
    use_power: bool = True,
    vtln_high: float = -500.0,
    vtln_low: float = 100.0,
    vtln_warp: float = 1.0,
    window_type: str = "povey",
) -> torch.Tensor:
    """``torchaudio.compliance.kaldi.fbank`` with the same arguments and defaults: a (frames, num_mel_bins
    [+ 1 with use_energy]) tensor in the waveform's floating dtype and device.

    ``waveform`` is (channels, samples) as for torchaudio (``channel`` -1 or 0 picks the first row), or
    (samples,). ``dither`` draws from torch's global generator exactly as torchaudio does, so the same seed
    gives the same noise. VTLN warping (``vtln_warp`` != 1) is not implemented; ``vtln_low`` and
    ``vtln_high`` are accepted and, as in torchaudio without warping, ignored."""
    if not isinstance(waveform, torch.Tensor):
        raise TypeError(f"kaldi_fbank takes a torch.Tensor, got {type(waveform).__name__}")
    if not waveform.is_floating_point():
        raise TypeError(f"kaldi_fbank takes a floating-point waveform, got {waveform.dtype}")
    if vtln_warp != 1.0:
        raise NotImplementedError("VTLN warping (vtln_warp != 1.0) is not implemented")
    if window_type not in WINDOW_TYPES:
        raise ValueError(f"window_type must be one of {WINDOW_TYPES}, got {window_type!r}")
    if waveform.dim() == 2:
        row = max(channel, 0)
        if row >= waveform.shape[0]:
            raise ValueError(f"channel {channel} does not exist in a waveform of {waveform.shape[0]} channels")
        signal = waveform[row]
    elif waveform.dim() == 1 and channel in (-1, 0):
        signal = waveform
    else:
        raise ValueError(f"waveform must be (channels, samples) or (samples,), got shape {tuple(waveform.shape)}")
    dtype, device = signal.dtype, signal.device
    size, shift, fft_size = frame_geometry(sample_frequency, frame_length, frame_shift, round_to_power_of_two)
    if not 2 <= size <= signal.shape[0]:
        raise ValueError(f"the window of {size} samples must be at least 2 and fit in the {signal.shape[0]} samples given")
    if shift <= 0:
        raise ValueError(f"frame_shift gives a shift of {shift} samples")
    if fft_size % 2:
        raise ValueError(f"the FFT size {fft_size} is odd: use round_to_power_of_two or change frame_length")
    if not 0.0 <= preemphasis_coefficient <= 1.0:
        raise ValueError(f"preemphasis_coefficient must lie in [0, 1], got {preemphasis_coefficient}")
    if sample_frequency <= 0:
        raise ValueError(f"sample_frequency must be positive, got {sample_frequency}")
    if signal.shape[0] < min_duration * sample_frequency:
        return torch.empty(0, device=device, dtype=dtype)

    epsilon = _epsilon(dtype, device)
    frames = _frames(signal, size, shift, snip_edges)
    if dither != 0.0:
        frames = frames + torch.randn(frames.shape, device=device, dtype=dtype) * dither
    if remove_dc_offset:
        frames = frames - torch.mean(frames, dim=1).unsqueeze(1)
    energy = _log_energy(frames, epsilon, energy_floor) if use_energy and raw_energy else None
    if preemphasis_coefficient != 0.0:
        previous = torch.cat((frames[:, :1], frames[:, :-1]), dim=1)
        frames = frames - preemphasis_coefficient * previous
    frames = frames * _window(window_type, size, blackman_coeff, dtype).to(device).unsqueeze(0)
    if fft_size != size:
        frames = torch.nn.functional.pad(frames.unsqueeze(0), (0, fft_size - size), mode="constant", value=0).squeeze(0)
    if use_energy and not raw_energy:
        energy = _log_energy(frames, epsilon, energy_floor)

    spectrum = torch.fft.rfft(frames).abs()
    if use_power:
        spectrum = spectrum.pow(2.0)
    banks = _mel_banks(int(num_mel_bins), fft_size, float(sample_frequency), float(low_freq), float(high_freq))
    features = torch.mm(spectrum, banks.to(device=device, dtype=dtype).T)
    if use_log_fbank:
        features = torch.maximum(features, epsilon).log()
    if energy is not None:  # set exactly when use_energy
        parts = (features, energy.unsqueeze(1)) if htk_compat else (energy.unsqueeze(1), features)
        features = torch.cat(parts, dim=1)
    if subtract_mean:
        features = features - torch.mean(features, dim=0).unsqueeze(0)
    return features


def ast_features(clips: Sequence[np.ndarray], extractor) -> torch.Tensor:
    """``extractor(clips, sampling_rate=extractor.sampling_rate, return_tensors="pt")["input_values"]`` as an
    ``ASTFeatureExtractor`` computes it with torchaudio installed: (len(clips), max_length, num_mel_bins),
    float32 for the usual Python-float mean and std.

    The extractor's own settings are used (``sampling_rate``, ``num_mel_bins``, ``max_length``,
    ``do_normalize``, ``mean``, ``std``); each clip is 1-D and at least one window long (400 samples at
    16 kHz, where torchaudio's assertion would stop the extractor). Runs on the CPU."""
    if len(clips) == 0:
        raise ValueError("ast_features needs at least one clip")
    rate = extractor.sampling_rate
    bins, max_length = int(extractor.num_mel_bins), int(extractor.max_length)
    size, shift, _ = frame_geometry(rate)
    keep = (max_length - 1) * shift + size  # samples that reach the first max_length frames
    features = []
    with torch.inference_mode():
        for i, clip in enumerate(clips):
            samples = np.asarray(clip, dtype=np.float32)
            if samples.ndim != 1:
                raise ValueError(f"clip {i} has shape {samples.shape}; ast_features takes mono 1-D clips")
            if samples.shape[0] < size:
                raise ValueError(f"clip {i} has {samples.shape[0]} samples, fewer than one {size}-sample window")
            # a copy: torch warns on read-only arrays, and the frames view must not alias the caller's
            waveform = torch.tensor(samples[:keep])
            fbank = kaldi_fbank(waveform[None], sample_frequency=rate, window_type="hanning", num_mel_bins=bins)
            out = np.zeros((max_length, bins), dtype=np.float32)
            kept = min(max_length, fbank.shape[0])
            out[:kept] = fbank[:kept].numpy()
            features.append(out)
    if extractor.do_normalize:
        # in numpy like the extractor, so the scalars are promoted the way numpy promotes them
        features = [(values - extractor.mean) / (extractor.std * 2) for values in features]
    return torch.from_numpy(np.array(features))
