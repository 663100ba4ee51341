"""Build MMAG-lite into a folder: three subsets (main, voice_cloning, timestamp), each a
metadata.csv with 16 kHz PCM16 reference WAVs beside it, deterministic from a seed. A folder that
already holds a complete build of the same seed, sizes and generator version is reused."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from ...core.errors import DataError
from ...synth import scenes
from ..lite.build import publish

SIZES = {"main": 24, "voice_cloning": 12, "timestamp": 16}
COLUMNS = ["file_name", "key", "caption", "transcript", "duration", "structured"]
EXTRA = {"main": [], "voice_cloning": ["voice_prompt"], "timestamp": ["timestamped_caption"]}


def _wav_bytes(samples: np.ndarray) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.clip(samples, -1, 1), scenes.RATE, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def _write(folder: Path, name: str, samples: np.ndarray, hashes: dict) -> str:
    data = _wav_bytes(samples)
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    hashes[name] = hashlib.sha256(data).hexdigest()
    return name


def _prompt_text(rng: np.random.Generator, voice: str, said: str) -> str:
    """Two sentences other than the one in the clip, short enough that the 4 s prompt holds all
    of them, so a system must clone the voice, not copy the recording."""
    while True:
        first, second = scenes.sentence(rng), scenes.sentence(rng)
        text = f"{first} and {second}"
        if said not in (first, second) and first != second and len(scenes.utterance(voice, text)) <= 3.7 * scenes.RATE:
            return text


def _subset(folder: Path, subset: str, number: int, count: int, seed: int) -> dict[str, str]:
    rng = np.random.default_rng([seed, number])
    rows: list[dict] = []
    hashes: dict[str, str] = {}
    for i in range(count):
        key = f"mmag-lite-{subset}-{i:03d}"
        script = scenes.make_script(rng)
        audio, timings = scenes.render(script)
        structured = {"script": script, **timings}
        row = {
            "file_name": _write(folder, f"audio/{key}.wav", audio, hashes),
            "key": key,
            "caption": scenes.caption(script, timings),
            "transcript": script["speech"]["text"],
            "duration": script["duration"],
        }
        if subset == "voice_cloning":
            voice = script["speech"]["voice"]
            text = _prompt_text(rng, voice, script["speech"]["text"])
            row["voice_prompt"] = _write(folder, f"prompts/{key}.wav", scenes.voice_prompt(voice, text), hashes)
            structured["voice_prompt"] = {"voice": voice, "text": text}
        if subset == "timestamp":
            row["timestamped_caption"] = scenes.timestamped_caption(script, timings)
        row["structured"] = json.dumps(structured, sort_keys=True)
        rows.append(row)
    with open(folder / "metadata.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS + EXTRA[subset], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    hashes["metadata.csv"] = hashlib.sha256((folder / "metadata.csv").read_bytes()).hexdigest()
    return hashes


def _sizes(sizes: dict | None) -> dict[str, int]:
    out = dict(SIZES)
    for name, count in (sizes or {}).items():
        if name not in SIZES or int(count) < 1:
            raise DataError(f"MMAG-lite sizes: {name}={count} is not a subset ({', '.join(SIZES)}) with at least 1 clip")
        out[name] = int(count)
    return out


def is_built(root: Path, seed: int, sizes: dict | None = None, any_size: bool = False) -> bool:
    """A complete build of this seed and generator version (of these sizes, or any with any_size)."""
    try:
        manifest = json.loads((Path(root) / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError):
        return False
    same = manifest.get("seed") == seed and manifest.get("generator_version") == scenes.GENERATOR_VERSION
    if not same or (not any_size and manifest.get("clips") != _sizes(sizes)):
        return False
    return all((Path(root) / subset / "metadata.csv").exists() for subset in SIZES)


def build(folder: Path, seed: int = 0, log=None, sizes: dict | None = None, force: bool = False, any_size: bool = False) -> dict:
    """Build (or reuse) MMAG-lite under folder; returns the manifest. `sizes` overrides the clip
    count of some subsets (a small build for tests); any_size reuses a complete build of the seed
    whatever its sizes (what a run does: it evaluates the build it finds)."""
    log = log or (lambda message: None)
    root, counts = Path(folder), _sizes(sizes)
    if not force and is_built(root, seed, counts, any_size=any_size):
        log(f"MMAG-lite: reusing the build in {root} (seed {seed})")
        return json.loads((root / "manifest.json").read_text())
    started = time.perf_counter()
    tmp = root.with_name(root.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    files = {}
    for number, (subset, count) in enumerate(counts.items()):
        (tmp / subset).mkdir(parents=True)
        files[subset] = _subset(tmp / subset, subset, number, count, seed)
        log(f"MMAG-lite: {subset}: {count} clips")
    manifest = {
        "seed": seed,
        "generator_version": scenes.GENERATOR_VERSION,
        "clips": counts,
        "build_seconds": round(time.perf_counter() - started, 1),
        "files": files,
    }
    publish(tmp, root, manifest)
    log(f"MMAG-lite: built {sum(counts.values())} clips in {manifest['build_seconds']} s under {root}")
    return manifest
