"""Build MAEB-lite into a folder: eight audio folders (audiofolder convention, 16 kHz WAV) made from
Debian's speech synthesizers, two General MIDI sound sources and numpy, deterministic from a seed.
A folder that already holds a complete build of the same seed and generator version is reused."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from ...core.errors import MaebError
from ...synth import music, sounds, speech
from . import events

GENERATOR_VERSION = 3
RATE = 16000
POOLS = ("words", "prosody", "languages", "music", "environment", "bio", "mixtures", "events")


def word_list() -> list[str]:
    """The words the spoken-word clips are drawn from (maeb/benchmarks/lite/words.txt, without comments)."""
    text = resources.files("maeb.benchmarks.lite").joinpath("words.txt").read_text(encoding="utf-8")
    return [w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#")]


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _wav_bytes(samples: np.ndarray) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.clip(samples, -1, 1), RATE, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def _words(rng, words):
    """Every voice says every word, each through its own random recording channel, so a speaker
    has to be recognised across microphones and rooms, not by a fixed spectral colour."""
    reqs = [{"text": w, "voice": v} for v in speech.VOICES for w in words]
    audio, rows = [], []
    for clip, r in zip(speech.synthesize(reqs), reqs):
        clip, snr = sounds.recording_channel(clip, rng)
        audio.append(clip)
        rows.append(
            {
                "word": r["text"],
                "voice": r["voice"].name,
                "engine": r["voice"].engine,
                "gender": r["voice"].gender,
                "snr_db": round(snr, 1),
                "description": f"a {r['voice'].gender} voice saying {r['text']}",
            }
        )
    return audio, rows


def _prosody(rng, words):
    reqs, rows = [], []
    for rate in speech.RATES:
        for pitch in speech.PITCHES:
            for word in words:
                voice = speech.ESPEAK_VARIANTS[int(rng.integers(len(speech.ESPEAK_VARIANTS)))]
                reqs.append({"text": word, "voice": voice, "rate": speech.RATES[rate], "pitch": speech.PITCHES[pitch]})
                rows.append(
                    {
                        "word": word,
                        "voice": voice.name,
                        "gender": voice.gender,
                        "rate": rate,
                        "pitch": pitch,
                        "description": f"a {voice.gender} voice saying {word} at a {rate} pace and a {pitch} pitch",
                    }
                )
    return speech.synthesize(reqs), rows


def _languages(rng, per_language=12):
    reqs, rows = [], []
    for lang, label in speech.LANGUAGES.items():
        for _ in range(per_language):
            voice = speech.ESPEAK_VARIANTS[int(rng.integers(len(speech.ESPEAK_VARIANTS)))]
            text = " ".join(str(d) for d in rng.integers(0, 10, size=4))
            reqs.append({"text": text, "voice": voice, "lang": lang})
            rows.append(
                {
                    "language": label,
                    "voice": voice.name,
                    "gender": voice.gender,
                    "text": text,
                    "description": f"someone counting in {label}",
                }
            )
    return speech.synthesize(reqs), rows


def _music(rng, per_family=6):
    audio, rows = [], []
    for source in music.SOURCES:
        clips = []
        for family, programs in music.FAMILIES.items():
            for _ in range(per_family):
                clips.append(
                    {
                        "family": family,
                        "program": int(rng.choice(programs)),
                        "key": str(rng.choice(list(music.KEYS))),
                        "tempo": str(rng.choice(list(music.TEMPI))),
                        "octave": 5 if family != "bass" else 3,
                    }
                )
        audio += music.render(source, clips)
        rows += [
            {
                "family": c["family"],
                "program": c["program"],
                "key": c["key"],
                "tempo": c["tempo"],
                "source": source,
                "description": f"{_article(c['family'])} {c['family']} playing an arpeggio in {c['key']} at a {c['tempo']} tempo",
            }
            for c in clips
        ]
    return audio, rows


def _environment(rng, per_class=12, seconds=1.5):
    audio, rows = [], []
    for colour in sounds.NOISE_COLOURS:
        for _ in range(per_class):
            audio.append(sounds.coloured_noise(colour, seconds, rng))
            rows.append({"category": "noise", "label": f"{colour} noise", "snr_band": "", "description": f"{colour} noise"})
    for kind in sounds.HUMS:
        for _ in range(per_class):
            audio.append(sounds.hum(kind, seconds, rng))
            rows.append({"category": "hum", "label": kind, "snr_band": "", "description": f"the hum of {_article(kind)} {kind}"})
    for kind in sounds.EVENTS:
        for i in range(per_class):
            band = ("low", "mid", "high")[i % 3]
            snr = {"low": -5.0, "mid": 5.0, "high": 15.0}[band]
            clip = sounds.mix(sounds.impulsive(kind, seconds, rng), sounds.coloured_noise("pink", seconds, rng), snr)
            audio.append(clip)
            rows.append({"category": "event", "label": kind, "snr_band": band, "description": f"{kind} in background noise"})
    return audio, rows


def _bio(rng, per_species=16, seconds=1.5):
    audio, rows = [], []
    for species in sounds.SPECIES:
        for _ in range(per_species):
            audio.append(sounds.chirp_call(species, seconds, rng))
            rows.append({"species": species, "description": f"a bird call with a {species} pattern"})
    return audio, rows


def _mixtures(rng, pools, n=96):
    """Speech over music, noise, hums or bird calls; labels are the sources present."""
    words_audio, words_rows = pools["words"]
    sources = {
        "music": (pools["music"][0], [r["description"] for r in pools["music"][1]]),
        "noise": (pools["environment"][0][:60], [r["description"] for r in pools["environment"][1][:60]]),
        "hum": (pools["environment"][0][60:108], [r["description"] for r in pools["environment"][1][60:108]]),
        "birdsong": (pools["bio"][0], [r["description"] for r in pools["bio"][1]]),
    }
    audio, rows, used = [], [], set()
    for i in range(n):
        while True:  # a mixture drawn twice would put the same bytes in train and test
            names = sorted(rng.choice(["speech", *sources], size=int(rng.integers(1, 4)), replace=False).tolist())
            picks = {name: int(rng.integers(len(words_audio) if name == "speech" else len(sources[name][0]))) for name in names}
            snr = float(rng.choice([0.0, 5.0, 10.0])) if len(names) > 1 else None
            signature = (tuple(sorted(picks.items())), snr)
            if signature not in used:
                used.add(signature)
                break
        parts, said = [], []
        if "speech" in names:
            k = picks["speech"]
            parts.append(np.tile(words_audio[k], 3)[: int(2.5 * RATE)])
            said.append(words_rows[k]["description"])
        for name in names:
            if name == "speech":
                continue
            clips, descriptions = sources[name]
            parts.append(np.resize(clips[picks[name]], int(2.5 * RATE)))
            said.append(descriptions[picks[name]])
        clip = parts[0] if len(parts) == 1 else sounds.mix(parts[0], sum(parts[1:]) / (len(parts) - 1), snr)
        audio.append(clip.astype(np.float32))
        rows.append({"labels": ";".join(names), "split": "test" if i % 3 == 0 else "train", "description": " with ".join(said)})
    return audio, rows


def _write_pool(folder: Path, audio: list[np.ndarray], rows: list[dict]) -> dict[str, str]:
    (folder / "audio").mkdir(parents=True, exist_ok=True)
    hashes = {}
    for i, (clip, row) in enumerate(zip(audio, rows)):
        name = f"audio/{i:04d}.wav"
        data = _wav_bytes(clip)
        (folder / name).write_bytes(data)
        row["file_name"] = name
        hashes[name] = hashlib.sha256(data).hexdigest()
    columns = ["file_name"] + [c for c in rows[0] if c != "file_name"]
    with open(folder / "metadata.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    hashes["metadata.csv"] = hashlib.sha256((folder / "metadata.csv").read_bytes()).hexdigest()
    return hashes


def is_built(root: Path, seed: int) -> bool:
    """Whether `root` holds a complete MAEB-lite build of this seed and generator version."""
    try:
        manifest = json.loads((Path(root) / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError):
        return False
    if manifest.get("seed") != seed or manifest.get("generator_version") != GENERATOR_VERSION:
        return False
    return all((Path(root) / pool / "metadata.csv").exists() for pool in POOLS)


def build(root: Path, seed: int = 0, force: bool = False, log=print) -> dict:
    """Build (or reuse) MAEB-lite under root; returns the manifest."""
    root = Path(root)
    if not force and is_built(root, seed):
        log(f"MAEB-lite: reusing the build in {root} (seed {seed})")
        return json.loads((root / "manifest.json").read_text())
    started = time.perf_counter()
    tmp = root.with_name(root.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    words = word_list()
    pools: dict[str, tuple[list, list]] = {}
    makers = {
        "words": lambda rng: _words(rng, words),
        "prosody": lambda rng: _prosody(rng, words),
        "languages": _languages,
        "music": _music,
        "environment": _environment,
        "bio": _bio,
        "mixtures": lambda rng: _mixtures(rng, pools),
        "events": events.make,
    }
    files = {}
    for number, pool in enumerate(POOLS):
        rng = np.random.default_rng([seed, number])
        pools[pool] = makers[pool](rng)
        files[pool] = _write_pool(tmp / pool, *pools[pool])
        log(f"MAEB-lite: {pool}: {len(pools[pool][0])} clips")
    manifest: dict[str, Any] = {
        "seed": seed,
        "generator_version": GENERATOR_VERSION,
        "clips": {pool: len(pools[pool][0]) for pool in POOLS},
        "build_seconds": round(time.perf_counter() - started, 1),
        "files": files,
    }
    publish(tmp, root, manifest)
    log(f"MAEB-lite: built {sum(manifest['clips'].values())} clips in {manifest['build_seconds']} s under {root}")
    return manifest


def publish(tmp: Path, root: Path, manifest: dict) -> None:
    """Write the manifest into the finished build and swap it in: a build appears whole or not at all."""
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    if root.exists():
        shutil.rmtree(root)
    tmp.rename(root)


def content_digest(manifest: dict) -> str:
    """One hash over every file's hash: equal for two builds with identical bytes."""
    blob = json.dumps(manifest["files"], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()


def require(root: Path) -> None:
    """Check that MAEB-lite is built in `root`; MaebError saying how to build it otherwise."""
    if not (Path(root) / "manifest.json").exists():
        raise MaebError(f"MAEB-lite is not built in {root}; run `python -m maeb lite build` (or `make lite`)")
