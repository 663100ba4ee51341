"""A deterministic toy encoder and labelled tone folders, for tests and for trying a pipeline
without any model: the vector of a clip is its normalised log energy in 16 frequency bands, and
the vector of a text naming a frequency ("tone 440") is that band, so zero-shot and text-to-audio
tasks have a known right answer."""

from __future__ import annotations

import csv
import re
import time
from pathlib import Path

import numpy as np
import soundfile as sf

EDGES = np.geomspace(80.0, 7600.0, 17)


def band_of(freq: float) -> int:
    """The index of the band (of EDGES) that holds frequency `freq`, clamped to the bands there are."""
    return int(np.clip(np.searchsorted(EDGES, freq) - 1, 0, len(EDGES) - 2))


class SpectralEncoder:
    """A deterministic test encoder: an audio vector is the log energy in 16 frequency bands; a text naming a frequency ("440 Hz")
    points at that band."""

    sample_rate = 16000
    max_seconds = 30.0
    min_samples = 0
    batching = "padded"

    def __init__(self, meta=None, device="cpu", **options):
        self.options = options

    def config(self):
        """The encoder's settings for its cache identity (its options included)."""
        return {"bands": 16, **self.options}

    def embed_audio(self, clips):
        """Each clip's log band energies, normalised (after an optional delay, for fault tests)."""
        if self.options.get("embed_delay"):  # a slow model for fault tests (a kill or Ctrl-C mid-batch)
            time.sleep(float(self.options["embed_delay"]))
        out = []
        for clip in clips:
            power = np.abs(np.fft.rfft(clip)) ** 2
            freqs = np.fft.rfftfreq(len(clip), 1.0 / self.sample_rate)
            energy = np.array([power[(freqs >= lo) & (freqs < hi)].sum() for lo, hi in zip(EDGES[:-1], EDGES[1:])])
            vec = np.log1p(energy / max(len(clip), 1))
            out.append(vec / (np.linalg.norm(vec) or 1.0))
        return np.asarray(out, dtype=np.float32)

    frame_window, frame_hop = 400, 320  # 25 ms windows every 20 ms

    def embed_frames(self, clips):
        """Per clip: the log energy in the 16 bands of each 25 ms Hann window, every 20 ms; the
        clip is zero-padded by half a window at both ends, so frame i is centred on sample
        i * hop (time i * 0.02 s) and T = len // hop + 1."""
        half = self.frame_window // 2
        window = np.hanning(self.frame_window + 1)[:-1]
        freqs = np.fft.rfftfreq(self.frame_window, 1.0 / self.sample_rate)
        bands = np.stack([(freqs >= lo) & (freqs < hi) for lo, hi in zip(EDGES[:-1], EDGES[1:])], axis=1).astype(np.float64)
        out = []
        for clip in clips:
            padded = np.pad(np.asarray(clip, dtype=np.float64), half)
            frames = np.lib.stride_tricks.sliding_window_view(padded, self.frame_window)[:: self.frame_hop]
            power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2
            vectors = np.log10(power @ bands + 1e-8).astype(np.float32)
            out.append((vectors, np.arange(len(vectors), dtype=np.float64) * self.frame_hop / self.sample_rate))
        return out

    def embed_text(self, texts):
        """A one-hot vector at the band of the first number in each text, on a small floor."""
        out = np.full((len(texts), 16), 0.01, dtype=np.float32)
        for i, text in enumerate(texts):
            match = re.search(r"(\d+(?:\.\d+)?)", text)
            if match:
                out[i, band_of(float(match.group(1)))] = 1.0
        return out


def tone(freq: float, seconds: float, rate: int = 16000, seed: int = 0, noise: float = 0.05) -> np.ndarray:
    """A sine of `freq` Hz with a little seeded noise, as float32 samples at `rate`."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t) + noise * rng.standard_normal(t.size)).astype(np.float32)


def write_tone_folder(
    folder: Path, freqs: dict[str, float], per_label: int = 12, rate: int = 16000, seed: int = 0, fmt: str = "WAV"
) -> Path:
    """An audiofolder: per label, `per_label` noisy tones of varying length; metadata.csv has
    file_name, label, freq, speaker (a second, crossed label) and split (a quarter is test)."""
    folder = Path(folder)
    (folder / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rows = []
    ext = {"WAV": "wav", "FLAC": "flac", "OGG": "ogg", "MP3": "mp3"}[fmt]
    for label, freq in freqs.items():
        for i in range(per_label):
            seconds = float(rng.uniform(0.3, 1.5))
            name = f"audio/{label}_{i}.{ext}"
            sf.write(
                folder / name,
                tone(freq * rng.uniform(0.97, 1.03), seconds, rate, seed=int(rng.integers(1 << 30))),
                rate,
                format=fmt,
            )
            rows.append(
                {
                    "file_name": name,
                    "label": label,
                    "freq": freq,
                    "speaker": f"s{i % 3}",
                    "split": "test" if i % 4 == 0 else "train",
                }
            )
    with open(folder / "metadata.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder


class IdentityEncoder:
    """The clip's samples are its vector (store a vector as a float WAV at 16 kHz); texts map to
    given vectors. Lets tests feed exact, known embeddings through the whole pipeline."""

    sample_rate = 16000
    max_seconds = None
    min_samples = 0
    batching = "padded"

    def __init__(self, meta=None, device="cpu", text_vectors=None):
        self.text_vectors = {k: np.asarray(v, dtype=np.float32) for k, v in (text_vectors or {}).items()}

    def config(self):
        """The encoder's settings for its cache identity."""
        return {"identity": True}

    def embed_audio(self, clips):
        """Each clip's samples as its vector (clips of one length), so tests can compute the expected scores themselves."""
        return np.stack([np.asarray(c, dtype=np.float32) for c in clips])

    def embed_text(self, texts):
        """Each text's vector from the `text_vectors` table the test gave."""
        return np.stack([self.text_vectors[t] for t in texts])


def vector_wav(vector) -> bytes:
    """A float32 WAV whose samples are exactly `vector` (for IdentityEncoder), the same bytes in
    every run."""
    from .audio.pipeline import float_wav

    return float_wav(np.asarray(vector, dtype=np.float32), 16000)


def write_hub_repo(folder: Path, configs: dict[str, dict[str, dict[str, list]]], audio_columns=("audio",)) -> Path:
    """A local dataset repo in the hub's parquet layout: configs -> splits -> columns. Audio
    columns take encoded bytes and are stored with the Audio feature, as on the hub; the README
    lists the configs so `datasets.load_dataset(folder, config, split=...)` reads it like a hub id."""
    from datasets import Audio, Dataset

    folder = Path(folder)
    lines = ["---", "configs:"]
    for config, splits in configs.items():
        lines += [f"- config_name: {config}", "  data_files:"]
        for split, columns in splits.items():
            values = dict(columns)
            audio_here = [c for c in dict.fromkeys(audio_columns) if c in values]
            for column in audio_here:
                values[column] = [{"bytes": b, "path": f"{column}_{i}.wav"} for i, b in enumerate(values[column])]
            ds = Dataset.from_dict(values)
            for column in audio_here:
                ds = ds.cast_column(column, Audio(decode=False))
            path = folder / config / f"{split}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            ds.to_parquet(str(path))
            lines += [f"  - split: {split}", f"    path: {config}/{split}-*.parquet"]
    lines.append("---")
    (folder / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def pitch_word(clip: np.ndarray, rate: int = 16000) -> str:
    """'low' (< 440 Hz), 'mid' (< 1760 Hz) or 'high': the dominant frequency of a clip, in words."""
    power = np.abs(np.fft.rfft(clip)) ** 2
    peak = float(np.fft.rfftfreq(len(clip), 1.0 / rate)[int(np.argmax(power))]) if len(clip) else 0.0
    return "low" if peak < 440 else "mid" if peak < 1760 else "high"


class ToneDescriber:
    """A toy generative model for tests: it hears a tone's pitch and answers every prompt with it.
    Asked to pick among lettered options, it names the option that mentions the pitch (or says it
    cannot tell, which a scorer must count as unparsed); otherwise it says "a {pitch} tone"."""

    sample_rate = 16000
    max_seconds = 30.0
    min_samples = 0
    batching = "padded"

    def __init__(self, meta=None, device="cpu", **options):
        self.options = options
        self.calls = 0

    def config(self):
        """The model's settings for its cache identity."""
        return {"kind": "tone-describer", **self.options}

    def generate(self, clips, prompts, settings):
        """One answer per (clip, prompt): the option letter naming the clip's pitch for a multiple-choice prompt, otherwise a
        sentence naming the pitch."""
        self.calls += 1
        out = []
        for clip, prompt in zip(clips, prompts):
            word = pitch_word(clip, self.sample_rate)
            options = dict(re.findall(r"^([A-D])\. (.*)$", prompt, re.M))
            if options:
                match = [letter for letter, text in options.items() if word in text.lower()]
                out.append(f"{match[0]}." if match else "I cannot tell.")
            else:
                out.append(f"a {word} tone")
        return out
