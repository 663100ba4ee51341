"""A weight-free baseline: statistics of log-mel and MFCC frames (160-d); its time-resolved
embeddings (embed_frames) are the frames themselves: 20 MFCCs, their deltas and 40 log-mel bands
(80-d) every 10 ms, each centred on its 25 ms window.

It needs no download and costs milliseconds per clip, so every benchmark has a floor that any
learned encoder should clear; it is also strong on speaker and instrument timbre."""

from __future__ import annotations

import numpy as np
from scipy.fft import dct

from .base import AudioEncoderBase


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int, fmin: float = 0.0, fmax: float | None = None) -> np.ndarray:
    """Triangular filters on the HTK mel scale, each with unit area (Slaney-style normalisation)."""
    fmax = fmax or sample_rate / 2

    def to_mel(f):
        return 2595.0 * np.log10(1.0 + np.asarray(f) / 700.0)

    def to_hz(m):
        return 700.0 * (10.0 ** (np.asarray(m) / 2595.0) - 1.0)

    edges = to_hz(np.linspace(to_mel(fmin), to_mel(fmax), n_mels + 2))
    bins = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (bins[None, :] - lower) / (centre - lower)
    falling = (upper - bins[None, :]) / (upper - centre)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    return (weights * (2.0 / (upper - lower))).astype(np.float32)


class MFCCStats(AudioEncoderBase):
    """A no-weights baseline: means and standard deviations over a clip's frames of its
    MFCCs, their deltas and its log-mel bands."""

    sample_rate = 16000
    batching = "padded"
    min_samples = 400
    software = ("scipy",)
    n_fft, hop, n_mels, n_mfcc = 400, 160, 40, 20

    def __init__(self, meta=None, device="cpu", max_seconds=30.0):
        self.max_seconds = float(max_seconds)
        self.window = np.hanning(self.n_fft + 1)[:-1].astype(np.float32)
        self.filters = mel_filterbank(self.sample_rate, self.n_fft, self.n_mels)

    def config(self):
        return {
            "n_fft": self.n_fft,
            "hop": self.hop,
            "n_mels": self.n_mels,
            "n_mfcc": self.n_mfcc,
            "max_seconds": self.max_seconds,
        }

    def log_mel(self, clip: np.ndarray) -> np.ndarray:
        """The (frames, n_mels) log10 mel power of a clip (centred 25 ms Hann frames, 10 ms hop)."""
        padded = np.pad(clip, self.n_fft // 2, mode="reflect" if clip.size > self.n_fft // 2 else "constant")
        frames = np.lib.stride_tricks.sliding_window_view(padded, self.n_fft)[:: self.hop]
        power = np.abs(np.fft.rfft(frames * self.window, axis=1)) ** 2
        return np.log10(power @ self.filters.T + 1e-10)

    def embed_audio(self, clips):
        out = []
        for clip in clips:
            logmel = self.log_mel(np.asarray(clip, dtype=np.float32))
            mfcc = dct(logmel, type=2, norm="ortho", axis=1)[:, : self.n_mfcc]
            delta = np.diff(mfcc, axis=0) if len(mfcc) > 1 else np.zeros_like(mfcc)
            stats = [m.mean(0) for m in (mfcc, delta, logmel)] + [m.std(0) for m in (mfcc, delta, logmel)]
            out.append(np.concatenate(stats))
        return np.asarray(out, dtype=np.float32)

    def embed_frames(self, clips):
        """Per clip: (T, 80) frames [MFCC, delta (centred difference), log-mel] and their centre
        times. The STFT is centred: frame i's window is centred on sample i * hop."""
        out = []
        for clip in clips:
            logmel = self.log_mel(np.asarray(clip, dtype=np.float32))
            mfcc = dct(logmel, type=2, norm="ortho", axis=1)[:, : self.n_mfcc]
            delta = np.gradient(mfcc, axis=0) if len(mfcc) > 1 else np.zeros_like(mfcc)
            frames = np.concatenate([mfcc, delta, logmel], axis=1).astype(np.float32)
            times = np.arange(len(frames), dtype=np.float64) * self.hop / self.sample_rate
            out.append((frames, times))
        return out
