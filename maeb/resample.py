"""Band-limited resampling that reproduces torchaudio's sinc resampler without depending on torchaudio.

mteb resamples audio with torchaudio at its defaults (``sinc_interp_hann``, ``lowpass_filter_width=6``,
``rolloff=0.99``); maeb has to hand encoders the same samples, but torchaudio's PyPI builds pull a CUDA
torch, so this module re-derives the same computation on plain torch:

* the rates are reduced by their gcd; ``orig`` and ``new`` below are the reduced rates;
* the filter cuts at ``base = min(orig, new) * rolloff`` and has ``width = ceil(6 * orig / base)``
  input samples on each side; phase ``j`` of ``new`` evaluates a Hann-windowed sinc at
  ``t = clamp((k / orig - j / new) * base, -6, 6)`` for taps ``k = -width .. width + orig - 1``, i.e.
  ``sinc(pi t) * cos(pi t / 12) ** 2 * base / orig``;
* the input is zero-padded by ``width`` on the left and ``width + orig`` on the right and convolved with
  stride ``orig`` (output frame ``f``, phase ``j`` is sample ``f * new + j``); the result is cut to
  ``ceil(new * length / orig)``, where torchaudio evaluates that ratio as a float32, so inputs whose
  exact ratio lies just above an integer come out one sample shorter than the exact ceiling (from an
  output length of about 65k samples on for 44.1 kHz input). torchaudio raises on an empty input;
  here it gives an empty output.

mteb reaches torchaudio in two ways that differ in the kernel's precision, beyond 1e-6 for some rates:
``torchaudio.transforms.Resample`` (mteb's ``AudioCollator``, used by most models, and a few model
wrappers) computes the kernel in float64 and rounds it to float32, while ``torchaudio.functional.resample``
(used by the ImageBind and BioViTA wrappers) computes it in the waveform's dtype, float32.
``like="transforms"`` (the default) or ``like="functional"`` picks which one to reproduce; both are
reproduced operation for operation, so on the same torch build the output is normally bit-identical.

Kernels are cached per reduced rate pair (``new * (orig + 2 * width)`` floats: 0.3 MB for 44.1 -> 16 kHz,
but gigabytes for rates with a tiny gcd, as in torchaudio) and the convolution runs over chunks of about
a million input samples, so long recordings cost the output, one padded copy of the input and a few MB;
threads may call ``resample`` concurrently.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Literal

import numpy as np
import torch

__all__ = ["resample", "output_length"]

Like = Literal["transforms", "functional"]

LOWPASS_FILTER_WIDTH = 6
ROLLOFF = 0.99

# input samples per convolution call (each output frame consumes ``orig`` of them and yields ``new`` samples);
# inputs up to this size take one call shaped exactly like torchaudio's
CHUNK_SAMPLES = 1 << 20
# for rates whose reduced ``orig`` is huge, a floor on the frames per call
MIN_CHUNK_FRAMES = 1024
KERNEL_CACHE_SIZE = 32

_kernels: OrderedDict[tuple[int, int, str], tuple[torch.Tensor, int]] = OrderedDict()
_kernels_lock = threading.Lock()


def _reduced(orig_rate: int, new_rate: int) -> tuple[int, int]:
    for name, rate in (("orig_rate", orig_rate), ("new_rate", new_rate)):
        if int(rate) != rate or rate <= 0:
            raise ValueError(f"{name} must be a positive integer, got {rate!r}")
    orig, new = int(orig_rate), int(new_rate)
    gcd = math.gcd(orig, new)
    return orig // gcd, new // gcd


def _half_width(orig: int, new: int) -> int:
    """Input samples the filter reaches on each side of an output instant."""
    return math.ceil(LOWPASS_FILTER_WIDTH * orig / (min(orig, new) * ROLLOFF))


def _build_kernel(orig: int, new: int, like: str) -> tuple[torch.Tensor, int]:
    """The (new, 1, 2 * width + orig) float32 polyphase bank for reduced rates, plus ``width``.

    The arithmetic follows torchaudio's step for step, including each intermediate dtype, because the
    float32 rounding of every step shows up in the last bits of the kernel (and, for the float32 variant,
    up to ~2e-5 away from the float64 one)."""
    lw = LOWPASS_FILTER_WIDTH
    base = min(orig, new) * ROLLOFF
    width = _half_width(orig, new)
    if like == "functional":
        # everything in the waveform's dtype
        dtype = torch.float32
        phases = torch.arange(0, -new, -1, dtype=dtype) / new
    else:
        # the Resample module asks for no dtype: the tap grid is float64, but the phase grid is an integer
        # arange divided by an int, which torch returns in the default dtype (float32) before promotion
        dtype = torch.float64
        phases = (torch.arange(0, -new, -1, dtype=torch.int64) / new).to(torch.float32).to(dtype)
    taps = torch.arange(-width, width + orig, dtype=dtype) / orig
    t = (phases[:, None] + taps[None, :]) * base
    t = t.clamp(-lw, lw)
    hann = torch.cos(t * math.pi / lw / 2) ** 2
    t = t * math.pi
    sinc = torch.where(t == 0, torch.ones((), dtype=dtype), torch.sin(t) / t)
    bank = sinc * (hann * (base / orig))
    return bank.to(torch.float32).unsqueeze(1).contiguous(), width


def _kernel(orig: int, new: int, like: str) -> tuple[torch.Tensor, int]:
    key = (orig, new, like)
    with _kernels_lock:
        hit = _kernels.get(key)
        if hit is not None:
            _kernels.move_to_end(key)
            return hit
        # built under the lock: a few ms for usual rates, and concurrent first calls build it once
        built = _build_kernel(orig, new, like)
        _kernels[key] = built
        while len(_kernels) > KERNEL_CACHE_SIZE:
            _kernels.popitem(last=False)
        return built


def output_length(length: int, orig_rate: int, new_rate: int) -> int:
    """Samples ``resample`` returns for ``length`` input samples: torchaudio's float32 ceiling of
    ``length * new / orig`` (which can be one below the exact ceiling for long inputs)."""
    orig, new = _reduced(orig_rate, new_rate)
    if orig == new:
        return int(length)
    if length <= 0:
        return 0
    frames = length // orig + 1  # frames the padded convolution yields
    ratio = np.float32(new * length / orig)  # python divides in float64; torch.as_tensor keeps float32
    return min(int(np.ceil(ratio)), frames * new)


def resample(samples: np.ndarray, orig_rate: int, new_rate: int, *, like: Like = "transforms") -> np.ndarray:
    """Resample mono float32 ``samples`` from ``orig_rate`` to ``new_rate`` as torchaudio does at its
    defaults (see the module docstring); ``like`` picks ``torchaudio.transforms.Resample`` (mteb's audio
    collator) or ``torchaudio.functional.resample``. Returns a new float32 array; equal rates copy."""
    if like not in ("transforms", "functional"):
        raise ValueError(f"like must be 'transforms' or 'functional', got {like!r}")
    x = np.asarray(samples)
    if x.ndim != 1:
        raise ValueError(f"resample takes 1-D samples, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"resample takes floating-point samples, got {x.dtype}")
    x = x.astype(np.float32, copy=False)
    orig, new = _reduced(orig_rate, new_rate)
    if orig == new:
        return x.copy()
    length = x.shape[0]
    total = output_length(length, orig, new)
    if total == 0:
        return np.zeros(0, dtype=np.float32)

    kernel, width = _kernel(orig, new, like)
    taps = kernel.shape[-1]  # 2 * width + orig
    # zeros around the input, in a fresh array (torch warns on read-only numpy arrays, and callers' may be)
    padded_np = np.zeros(width + length + width + orig, dtype=np.float32)
    padded_np[width : width + length] = x
    padded = torch.from_numpy(padded_np)
    frames = length // orig + 1  # all the frames torchaudio computes, so one chunk has its exact shapes
    out = np.empty(total, dtype=np.float32)
    with torch.inference_mode():
        for first, count in _chunks(frames, max(MIN_CHUNK_FRAMES, CHUNK_SAMPLES // orig)):
            lo = first * new
            window = padded[first * orig : (first + count - 1) * orig + taps]
            # (new, count): row j is phase j of each frame, so the transpose is in output order
            chunk = torch.nn.functional.conv1d(window[None, None], kernel, stride=orig)[0]
            flat = chunk.t().reshape(-1).numpy()
            out[lo : lo + flat.shape[0]] = flat[: total - lo]
    return out


def _chunks(frames: int, step: int) -> list[tuple[int, int]]:
    """(first frame, count) pieces of ``frames``; a short tail joins the piece before it.

    torch's CPU convolution picks its algorithm by problem size and the algorithms round differently
    (a few 1e-7 apart); pieces of CHUNK_SAMPLES input samples are well inside the large-problem regime
    (which starts between 16k and 64k samples with torch 2.13 on x86), where the result does not depend
    on where a piece starts, so the chunked output equals one convolution over the whole input."""
    if frames <= step:
        return [(0, frames)]
    pieces = [(first, step) for first in range(0, frames - step + 1, step)]
    last = pieces[-1][0]
    pieces[-1] = (last, frames - last)
    return pieces
