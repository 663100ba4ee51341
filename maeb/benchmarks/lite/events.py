"""MAEB-lite's sound event detection pool: 10 s clips of background noise holding two to four
events of three classes (a steady harmonic tone, an upward chirp, a high noise burst) at seeded
times, for the LiteEvents task (maeb.tasktypes.event_detection). Events never overlap and are at
least 0.3 s apart; each is 0.3-1.5 s long, 3-15 dB above the background (RMS over the event), with
10 ms raised-cosine edges, so a model that tells the three spectra apart frame by frame finds
them. Times are written rounded to the millisecond and the sounds are placed at those times."""

from __future__ import annotations

import json

import numpy as np

from ...synth.sounds import RATE, coloured_noise

SECONDS = 10.0
CLASSES = ("tone", "chirp", "noise burst")
CLIPS = 60  # every third clip is a test clip: 40 train, 20 test
DESCRIPTIONS = {"tone": "a tone", "chirp": "a rising chirp", "noise burst": "a burst of hiss"}


def _edges(n: int) -> np.ndarray:
    ramp = min(int(0.01 * RATE), n // 2)
    env = np.ones(n)
    if ramp:
        rise = 0.5 - 0.5 * np.cos(np.pi * np.arange(ramp) / ramp)
        env[:ramp], env[n - ramp :] = rise, rise[::-1]
    return env


def event_sound(label: str, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """One event of a class, unit RMS."""
    n = int(round(seconds * RATE))
    t = np.arange(n) / RATE
    if label == "tone":
        f0 = rng.uniform(500.0, 800.0)
        wave = sum(a * np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 2 * np.pi)) for k, a in ((1, 1.0), (2, 0.5), (3, 0.25)))
    elif label == "chirp":
        f0, f1 = rng.uniform(1200.0, 1800.0), rng.uniform(3500.0, 4500.0)
        wave = np.sin(2 * np.pi * np.cumsum(np.linspace(f0, f1, n)) / RATE)
    elif label == "noise burst":
        spectrum = np.fft.rfft(rng.standard_normal(n))
        freqs = np.fft.rfftfreq(n, 1.0 / RATE)
        spectrum *= (freqs > 5000.0) & (freqs < 7500.0)
        wave = np.fft.irfft(spectrum, n)
    else:
        raise ValueError(f"unknown event class {label!r}; known: {', '.join(CLASSES)}")
    wave = wave * _edges(n)
    return wave / (np.sqrt(np.mean(wave**2)) + 1e-12)


def place(rng: np.random.Generator, count: int, seconds: float = SECONDS, gap: float = 0.3) -> list[tuple[float, float]]:
    """Up to `count` non-overlapping (onset, offset) spans, at least `gap` apart, in the clip."""
    spans: list[tuple[float, float]] = []
    for _ in range(200):
        if len(spans) == count:
            break
        duration = round(float(rng.uniform(0.3, 1.5)), 3)
        onset = round(float(rng.uniform(0.2, seconds - duration - 0.2)), 3)
        offset = round(onset + duration, 3)
        if all(offset + gap <= a or onset >= b + gap for a, b in spans):
            spans.append((onset, offset))
    return sorted(spans)


def clip(rng: np.random.Generator) -> tuple[np.ndarray, list[list]]:
    """One clip and its events [[label, onset, offset], ...]."""
    n = int(SECONDS * RATE)
    background = coloured_noise(str(rng.choice(["pink", "brown", "white"])), SECONDS, rng).astype(np.float64)
    background *= 0.05 / (np.sqrt(np.mean(background**2)) + 1e-12)  # RMS 0.05
    out = background.copy()
    events = []
    for onset, offset in place(rng, int(rng.integers(2, 5))):
        label = str(rng.choice(CLASSES))
        start = int(round(onset * RATE))
        sound = event_sound(label, offset - onset, rng)[: n - start]
        out[start : start + len(sound)] += sound * 0.05 * 10 ** (float(rng.uniform(3.0, 15.0)) / 20)
        events.append([label, onset, offset])
    return (out / (np.abs(out).max() + 1e-9) * 0.7).astype(np.float32), events


def make(rng: np.random.Generator, clips: int = CLIPS) -> tuple[list[np.ndarray], list[dict]]:
    """The pool: clips and their metadata rows (events as a JSON cell, split, description)."""
    audio, rows = [], []
    for i in range(clips):
        samples, events = clip(rng)
        audio.append(samples)
        said = ", then ".join(f"{DESCRIPTIONS[label]} at {on:g} s" for label, on, _ in events)
        rows.append(
            {
                "events": json.dumps(events),
                "split": "test" if i % 3 == 0 else "train",
                "description": f"background noise with {said}",
            }
        )
    return audio, rows
