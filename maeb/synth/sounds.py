"""Environmental and bioacoustic-like sounds made with numpy: coloured noise, machine hums,
impulsive events and frequency-modulated chirp "species". Every sound is a function of its
parameters and a numpy Generator, so a build is reproducible from its seed."""

from __future__ import annotations

import numpy as np

RATE = 16000

NOISE_COLOURS = {"white": 0.0, "pink": -1.0, "brown": -2.0, "blue": 1.0, "violet": 2.0}
HUMS = {  # fundamental (Hz), relative harmonic amplitudes, amplitude-modulation rate (Hz)
    "mains hum": (50.0, [1.0, 0.6, 0.3, 0.15], 0.0),
    "electric motor": (120.0, [1.0, 0.2, 0.5, 0.1, 0.3], 0.0),
    "fan": (30.0, [1.0, 0.8, 0.6, 0.4, 0.3, 0.2], 4.0),
    "engine": (45.0, [1.0, 0.9, 0.7, 0.6, 0.5, 0.4, 0.3], 9.0),
}
EVENTS = {  # burst centre frequency (Hz), decay (s), events per second, regular timing
    "knocking": (300.0, 0.04, 4.0, True),
    "clapping": (2500.0, 0.02, 3.0, False),
    "dripping": (1200.0, 0.015, 5.0, True),
    "footsteps": (500.0, 0.06, 2.0, True),
}
SPECIES = {  # start and end frequency (Hz), shape, note length (s), notes per second
    "upsweep": (2000.0, 5000.0, "linear", 0.12, 4.0),
    "downsweep": (6000.0, 2500.0, "linear", 0.12, 4.0),
    "trill": (3500.0, 3500.0, "trill", 0.3, 2.0),
    "warble": (3000.0, 4500.0, "warble", 0.25, 2.5),
    "two-note": (4200.0, 2800.0, "step", 0.2, 2.5),
    "chatter": (2500.0, 6500.0, "chatter", 0.05, 9.0),
}


def coloured_noise(colour: str, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Noise of `colour` (white, pink, brown, ...: a power-law spectrum), normalised to peak 0.5."""
    n = int(seconds * RATE)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1.0 / RATE)
    freqs[0] = freqs[1]
    spectrum *= freqs ** (NOISE_COLOURS[colour] / 2.0)
    out = np.fft.irfft(spectrum, n)
    return (out / (np.abs(out).max() + 1e-9) * 0.5).astype(np.float32)


def hum(kind: str, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """A machine hum of `kind`: a base tone with its harmonics, optional amplitude modulation and a little noise."""
    base, harmonics, am = HUMS[kind]
    base *= rng.uniform(0.97, 1.03)
    t = np.arange(int(seconds * RATE)) / RATE
    out = sum(a * np.sin(2 * np.pi * base * (k + 1) * t + rng.uniform(0, 2 * np.pi)) for k, a in enumerate(harmonics))
    if am:
        out *= 0.75 + 0.25 * np.sin(2 * np.pi * am * t)
    out += 0.02 * rng.standard_normal(t.size)
    return (out / np.abs(out).max() * 0.5).astype(np.float32)


def impulsive(kind: str, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """An impulsive event of `kind` (knocking, clapping, ...): decaying noise bursts, regular or at random times."""
    centre, decay, rate, regular = EVENTS[kind]
    n = int(seconds * RATE)
    out = np.zeros(n)
    count = max(1, int(seconds * rate))
    starts = (np.arange(count) + 0.2) / rate if regular else np.sort(rng.uniform(0, seconds - 0.1, count))
    length = int(6 * decay * RATE)
    t = np.arange(length) / RATE
    for start in starts:
        burst = rng.standard_normal(length) * np.exp(-t / decay)
        spectrum = np.fft.rfft(burst)
        freqs = np.fft.rfftfreq(length, 1.0 / RATE)
        spectrum *= np.exp(-(((freqs - centre) / (0.6 * centre)) ** 2))
        burst = np.fft.irfft(spectrum, length)
        i = int(start * RATE)
        out[i : i + length] += burst[: max(0, min(length, n - i))]
    return (out / (np.abs(out).max() + 1e-9) * 0.6).astype(np.float32)


def chirp_call(species: str, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """A bird-like call of `species`: repeated frequency sweeps of the species' shape and note length, slightly varied per
    individual."""
    f0, f1, shape, note, per_second = SPECIES[species]
    scale = rng.uniform(0.92, 1.08)  # individuals differ a little
    f0, f1 = f0 * scale, f1 * scale
    n = int(seconds * RATE)
    out = np.zeros(n)
    m = int(note * RATE)
    t = np.arange(m) / RATE
    if shape == "linear":
        freq = np.linspace(f0, f1, m)
    elif shape == "trill":
        freq = f0 * (1 + 0.15 * np.sign(np.sin(2 * np.pi * 25 * t)))
    elif shape == "warble":
        freq = (f0 + f1) / 2 + (f1 - f0) / 2 * np.sin(2 * np.pi * 12 * t)
    elif shape == "step":
        freq = np.where(t < note / 2, f0, f1)
    else:  # chatter: short random-pitched notes
        freq = np.full(m, rng.uniform(f0, f1))
    phase = 2 * np.pi * np.cumsum(freq) / RATE
    envelope = np.sin(np.pi * np.arange(m) / m) ** 2
    note_wave = envelope * np.sin(phase)
    for k in range(max(1, int(seconds * per_second))):
        i = int((k / per_second + rng.uniform(0, 0.02)) * RATE)
        if shape == "chatter":
            freq = np.full(m, rng.uniform(f0, f1))
            note_wave = envelope * np.sin(2 * np.pi * np.cumsum(freq) / RATE)
        out[i : i + m] += note_wave[: max(0, min(m, n - i))]
    return mix(out, coloured_noise("pink", seconds, rng), float(rng.uniform(0.0, 20.0)))  # a forest floor


def mix(signal: np.ndarray, background: np.ndarray, snr_db: float) -> np.ndarray:
    """Signal over background at the given signal-to-noise ratio, peak-normalised."""
    n = max(len(signal), len(background))
    s = np.pad(signal, (0, n - len(signal)))
    b = np.resize(background, n)
    ps, pb = np.mean(s**2) + 1e-12, np.mean(b**2) + 1e-12
    out = s + b * np.sqrt(ps / (pb * 10 ** (snr_db / 10)))
    return (out / (np.abs(out).max() + 1e-9) * 0.7).astype(np.float32)


def recording_channel(clip: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """A random recording chain: spectral tilt, a band limit (telephone, wideband or none) and
    background noise at 15-35 dB SNR. Returns the clip and its SNR."""
    from scipy.signal import butter, lfilter

    tilt = float(rng.uniform(-0.6, 0.6))
    out = lfilter([1.0, -tilt], [1.0], clip)
    cutoff = float(rng.choice([3400.0, 5500.0, 7900.0]))
    b, a = butter(4, cutoff / (RATE / 2))
    out = lfilter(b, a, out)
    snr = float(rng.uniform(15.0, 35.0))
    return mix(out.astype(np.float32), coloured_noise("pink", len(out) / RATE, rng), snr), snr
