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

The dense kernel has ``new * (2 * width + orig)`` floats: 0.3 MB for 44.1 -> 16 kHz, but for rates with a
small gcd nearly all of it is the window's zeros (24,414 -> 16,000 Hz reduces to 12,207/8,000: 8,000 phases
x 12,223 taps, of which about 20 per phase lie inside the window; 47,999 -> 16,000 Hz would need 3 GB).
Where the dense convolution costs more than ``DENSE_MACS`` multiply-adds per second of output
(``uses_dense``), the same sums are evaluated over each phase's window only (the polyphase path,
``_Polyphase``): phase ``j``'s taps are computed with torchaudio's arithmetic, element by element, at
the ``span`` positions from ``floor(j * orig / new) - reach`` on (every tap with ``|t| < 6`` is among
them; the taps left out are exactly zero in the float64 kernel and under 1e-23 in the float32 one), so
the values are the dense kernel's bits; consecutive phases are grouped so that each group is one small
matrix product over a contiguous stretch of input; the products are summed in float64 (a product of two
float32 values is exact there) and rounded once to float32, i.e. each output is the correctly rounded
sum. torchaudio sums the same products in float32 in its convolution's order, so the two paths differ by
torchaudio's own rounding, a few float32 ulps (at most 3e-7 on signals of peak 0.9; measured in
``tests/test_resample_props.py`` against the dense path and in ``tests/parity/test_resample.py``
against torchaudio, both to 1e-6). Every rate pair of the published protocol (8 to 48 kHz sources to
the models' 16, 24, 32, 44.1 and 48 kHz) stays on the dense path, bit-identical to torchaudio.

Kernels are cached per rate pair and the sums run over chunks of about a million input samples (a
million output samples on the polyphase path), so long recordings cost the output, one padded copy of
the input and a few MB; threads may call ``resample`` concurrently.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

__all__ = ["resample", "output_length", "uses_dense"]

Like = Literal["transforms", "functional"]

LOWPASS_FILTER_WIDTH = 6
ROLLOFF = 0.99

# input samples per convolution call (each output frame consumes ``orig`` of them and yields ``new`` samples);
# inputs up to this size take one call shaped exactly like torchaudio's
CHUNK_SAMPLES = 1 << 20
# for rates whose reduced ``orig`` is huge, a floor on the frames per call
MIN_CHUNK_FRAMES = 1024
KERNEL_CACHE_SIZE = 32
# the dense convolution is used where it costs at most this many multiply-adds per second of output (about
# 1.3 ms per 2 s clip on one core, scripts/bench_resample.py); every pair of the published protocol's rates
# is under it (44.1 -> 32 kHz, the costliest, takes 14.7M); above it the polyphase path is faster
DENSE_MACS = 1 << 24
# output samples per polyphase step
CHUNK_OUTPUT = 1 << 20

_kernels: OrderedDict[tuple[int, int, str, bool], tuple[torch.Tensor, int] | _Polyphase] = OrderedDict()
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


def _phase_grid(new: int, like: str) -> tuple[torch.dtype, torch.Tensor]:
    """The kernel's dtype and its phase grid, as torchaudio builds them."""
    if like == "functional":  # everything in the waveform's dtype
        return torch.float32, torch.arange(0, -new, -1, dtype=torch.float32) / new
    # the Resample module asks for no dtype: the tap grid is float64, but the phase grid is an integer
    # arange divided by an int, which torch returns in the default dtype (float32) before promotion
    return torch.float64, (torch.arange(0, -new, -1, dtype=torch.int64) / new).to(torch.float32).to(torch.float64)


def _build_kernel(orig: int, new: int, like: str) -> tuple[torch.Tensor, int]:
    """The (new, 1, 2 * width + orig) float32 polyphase bank for reduced rates, plus ``width``.

    The arithmetic follows torchaudio's step for step, including each intermediate dtype, because the
    float32 rounding of every step shows up in the last bits of the kernel (and, for the float32 variant,
    up to ~2e-5 away from the float64 one)."""
    lw = LOWPASS_FILTER_WIDTH
    base = min(orig, new) * ROLLOFF
    width = _half_width(orig, new)
    dtype, phases = _phase_grid(new, like)
    taps = torch.arange(-width, width + orig, dtype=dtype) / orig
    t = (phases[:, None] + taps[None, :]) * base
    t = t.clamp(-lw, lw)
    hann = torch.cos(t * math.pi / lw / 2) ** 2
    t = t * math.pi
    sinc = torch.where(t == 0, torch.ones((), dtype=dtype), torch.sin(t) / t)
    bank = sinc * (hann * (base / orig))
    return bank.to(torch.float32).unsqueeze(1).contiguous(), width


def _kernel_values(orig: int, new: int, like: str, phase: np.ndarray, tap: np.ndarray) -> np.ndarray:
    """The float32 kernel at phases ``phase`` and taps ``tap`` (k in ``-width .. width + orig - 1``, any
    shape alike), computed element by element as ``_build_kernel`` computes the whole bank."""
    lw = LOWPASS_FILTER_WIDTH
    base = min(orig, new) * ROLLOFF
    dtype, phases = _phase_grid(new, like)
    taps = torch.from_numpy(np.ascontiguousarray(tap, dtype=np.int64)).to(dtype) / orig
    t = (phases[torch.from_numpy(np.ascontiguousarray(phase, dtype=np.int64))] + taps) * base
    t = t.clamp(-lw, lw)
    hann = torch.cos(t * math.pi / lw / 2) ** 2
    t = t * math.pi
    sinc = torch.where(t == 0, torch.ones((), dtype=dtype), torch.sin(t) / t)
    return (sinc * (hann * (base / orig))).to(torch.float32).numpy()


@dataclass(frozen=True)
class _Polyphase:
    """Each phase's window of the kernel, phases grouped: group g holds phases ``g * per_group`` on,
    whose windows all lie in the ``stretch`` input samples from tap ``starts[g]`` of a frame;
    ``matrices[g]`` (stretch x per_group, float64) maps that stretch to the group's outputs."""

    matrices: np.ndarray  # (groups, stretch, per_group)
    starts: np.ndarray  # (groups,) first tap (k, relative to the frame's first input sample) of each group
    per_group: int
    reach: int  # taps before a frame's first sample that any phase can need


def _build_polyphase(orig: int, new: int, like: str) -> _Polyphase:
    """Only the taps inside each phase's window: phase j's output instant is j * orig / new input samples
    into its frame, and its window reaches 6 / base * orig samples (under ``width``) to either side."""
    width = _half_width(orig, new)
    reach = width + 1
    span = 2 * reach + 2  # taps per phase, from floor(j * orig / new) - reach: every |t| < 6 is inside
    phase = np.arange(new, dtype=np.int64)
    first = phase * orig // new - reach
    tap = first[:, None] + np.arange(span)
    values = _kernel_values(orig, new, like, np.broadcast_to(phase[:, None], tap.shape), tap)
    values[(tap < -width) | (tap >= width + orig)] = 0.0  # taps the dense kernel does not have
    # groups of phases whose windows together span about two windows: one matrix product per group and
    # frame (fewer, longer reads than one window per output sample, for twice the multiply-adds)
    per_group = int(min(new, max(1, round(span * new / orig))))
    groups = -(-new // per_group)
    index = np.minimum(np.arange(groups * per_group), new - 1).reshape(groups, per_group)
    starts = first[index[:, 0]]
    stretch = int(np.max(first[index[:, -1]] - starts)) + span
    matrices = np.zeros((groups, stretch, per_group), dtype=np.float64)
    g, p = np.divmod(phase, per_group)
    rows = (first - starts[g])[:, None] + np.arange(span)
    matrices[g[:, None], rows, p[:, None]] = values
    return _Polyphase(matrices, starts, per_group, reach)


def uses_dense(orig_rate: int, new_rate: int) -> bool:
    """Whether ``resample`` takes torchaudio's dense convolution (bit-identical to it) for this rate pair,
    rather than the polyphase evaluation of each phase's window (equal within float32 rounding)."""
    orig, new = _reduced(orig_rate, new_rate)
    return (2 * _half_width(orig, new) + orig) * int(new_rate) <= DENSE_MACS


def _kernel(orig: int, new: int, like: str, dense: bool) -> tuple[torch.Tensor, int] | _Polyphase:
    key = (orig, new, like, dense)
    with _kernels_lock:
        hit = _kernels.get(key)
        if hit is not None:
            _kernels.move_to_end(key)
            return hit
        # built under the lock: a few ms for usual rates, and concurrent first calls build it once
        built = _build_kernel(orig, new, like) if dense else _build_polyphase(orig, new, like)
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

    with _one_thread():
        kernel = _kernel(orig, new, like, uses_dense(orig_rate, new_rate))
        if isinstance(kernel, _Polyphase):
            return _polyphase(x, orig, new, kernel, total)
        return _dense(x, orig, new, kernel, total)


_openmp = None
_openmp_lock = threading.Lock()


def _one_thread():
    """The calling thread's OpenMP parallel regions (torch's convolution and element-wise kernels) on one
    thread while it resamples. A clip's resampling is a millisecond of work, decoded clips are resampled by
    several threads at once beside the encoder, and torch's default team of one thread per core then
    spins at its barriers whenever a core is taken: 20-50 ms per 2 s clip instead of 0.5 on a loaded
    2-core machine (scripts/bench_resample.py). The outputs do not depend on the thread count (checked
    bit for bit with 1, 2 and 3 threads); the limit is the calling thread's own (OpenMP's), and BLAS's
    process-wide setting is left alone."""
    global _openmp
    with _openmp_lock:
        if _openmp is None:
            from threadpoolctl import ThreadpoolController

            _openmp = ThreadpoolController().select(user_api="openmp")
    return _openmp.limit(limits=1)


def _dense(x: np.ndarray, orig: int, new: int, built: tuple[torch.Tensor, int], total: int) -> np.ndarray:
    """torchaudio's strided convolution with the whole (new, 1, 2 * width + orig) bank."""
    kernel, width = built
    length = x.shape[0]
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


def _polyphase(x: np.ndarray, orig: int, new: int, poly: _Polyphase, total: int) -> np.ndarray:
    """The dense convolution's outputs from each phase's window only (see the module docstring): for
    frame f and group g, the input stretch from f * orig + starts[g] times matrices[g], in float64."""
    matrices, starts, per_group = poly.matrices, poly.starts, poly.per_group
    groups, stretch, _ = matrices.shape
    frames = -(-total // new)
    lead = poly.reach  # zeros before the input, so the first frame's windows start inside the array
    padded = np.zeros(lead + (frames - 1) * orig + int(starts.max()) + stretch + 1, dtype=np.float64)
    padded[lead : lead + x.shape[0]] = x[: padded.shape[0] - lead]
    windows = np.lib.stride_tricks.sliding_window_view(padded, stretch)
    out = np.empty(total, dtype=np.float32)
    step = max(1, CHUNK_OUTPUT // new)
    for first in range(0, frames, step):
        count = min(step, frames - first)
        at = lead + starts[:, None] + (first + np.arange(count))[None, :] * orig  # (groups, count)
        # (groups, count, stretch) @ (groups, stretch, per_group): each output one float64 dot product
        chunk = np.matmul(windows[at], matrices)
        flat = chunk.transpose(1, 0, 2).reshape(count, groups * per_group)[:, :new].reshape(-1)
        lo = first * new
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
