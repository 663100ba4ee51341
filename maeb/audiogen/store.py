"""Generated audio as files beside the results: one WAV (32-bit float, exactly what the system
returned) per request, named by the clip's key and a digest of the system's identity, the request
and the generation settings, so a rerun finds what was generated and generates only the rest, a
user can listen to every clip, and every scorer reads the same samples a resumed run reads.

A file is trusted by its content, not its name: when a clip is written, the BLAKE2b digest of its
bytes is appended to the folder's content_hashes.jsonl. A rerun generates again every file whose
bytes no longer match (replaced, truncated, zeroed, or written before hashes were recorded) and
says how many; the scorers read each file's bytes once, check them against the digest and decode
those bytes, so what is scored is what was generated. The digests sit beside the clips (the
last line for a name wins), so this catches accidents, not someone who rewrites clips and digests
together (the README's "What the generated-audio check protects against" says so to users)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import soundfile as sf

from ..audio.pipeline import float_wav
from ..core.errors import MaebError, ModelError, OutputError
from ..core.paths import inside, safe_component
from ..engine.cache import identity_hash
from ..engine.embed import Job
from .request import SynthesisRequest, capabilities_of

if TYPE_CHECKING:
    from ..engine.embed import Embedder

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(request: SynthesisRequest, settings: dict) -> str:
    """The WAV file name of a request: its key and a digest of the request and settings."""
    digest = hashlib.blake2b(
        (request.fingerprint() + json.dumps(settings, sort_keys=True, default=str)).encode(), digest_size=6
    ).hexdigest()
    return f"{_UNSAFE.sub('_', request.key)[:80]}-{digest}.wav"


def system_folder(root: Path, identity_hash: str) -> Path:
    """Where a system configuration's clips go: its identity hash names the folder, so two
    configurations of one model never share a file."""
    return Path(root) / identity_hash[:16]


def generated_folder(emb: Embedder, task: str) -> Path:
    """Where a run's system writes a task's clips: the run's generated folder (or the cache's
    generated/<model>/<task>), then a folder per system identity."""
    if emb.generated_dir:
        root = Path(emb.generated_dir)
    else:  # the model's and the task's names become folders: one plain name each, inside the cache
        base = Path(emb.ctx.cache_dir) / "generated"
        folder = base / safe_component(emb.meta.folder, "model name") / safe_component(task, "task name")
        root = inside(base, folder, f"task {task!r}: generated audio")
    return system_folder(root, identity_hash(emb.cache.identity))


def system_rate(emb: Embedder) -> int:
    """The rate the run's system writes (and takes voice prompts) at."""
    return int(emb.encoder.sample_rate)


def system_record(emb: Embedder) -> dict:
    """What the run's system declares it can do, as results record it."""
    return capabilities_of(emb.encoder).as_dict()


def write_wav_atomic(path: Path, audio: np.ndarray, rate: int) -> str:
    """Write the clip as a 32-bit float WAV in one rename; the digest of the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".wav")
    os.close(fd)
    data = float_wav(audio, rate)
    try:
        Path(tmp).write_bytes(data)
        os.replace(tmp, path)
        return digest(data)
    except (OSError, RuntimeError) as exc:
        raise OutputError(f"cannot write generated audio {path} ({exc})") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


HASHES = "content_hashes.jsonl"  # not .json: result folders are read for .json results


def digest(data: bytes) -> str:
    """The BLAKE2b (16-byte) hex digest of the bytes."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_hashes(folder: Path) -> dict[str, str]:
    """file name -> digest of the bytes written for it (the last line of a name wins)."""
    out: dict[str, str] = {}
    try:
        lines = (Path(folder) / HASHES).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return out
    for line in lines:
        try:
            row = json.loads(line)
            out[str(row["file"])] = str(row["blake2b"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a torn last line of an interrupted run: that clip is generated again
    return out


def _record_hash(folder: Path, name: str, value: str) -> None:
    try:
        with open(Path(folder) / HASHES, "a", encoding="utf-8") as handle:  # one short append per clip
            handle.write(json.dumps({"file": name, "blake2b": value}) + "\n")
    except OSError as exc:
        raise OutputError(f"cannot record the content hash of generated audio in {Path(folder) / HASHES} ({exc})") from exc


def matches(path: Path, expected: str | None) -> bool:
    """Whether the file exists and holds the bytes recorded when it was generated."""
    if expected is None:
        return False
    try:
        return digest(Path(path).read_bytes()) == expected
    except OSError:
        return False


def read_generated(path: Path, expected: str | None = None) -> tuple[np.ndarray, int]:
    """A generated clip's samples; with `expected` (its recorded digest), only if its bytes are
    still the ones generated (the bytes checked are the bytes decoded)."""
    import io

    try:
        data = Path(path).read_bytes()
        if expected is not None and digest(data) != expected:
            raise MaebError(
                f"generated clip {path} changed after it was generated (its content hash differs); rerun to generate it again"
            )
        audio, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (OSError, RuntimeError) as exc:
        raise MaebError(f"generated clip {path} cannot be read ({exc}); delete it and rerun to generate it again") from exc
    return audio.mean(axis=1) if audio.shape[1] > 1 else audio[:, 0], int(rate)


def check_output(audio, request: SynthesisRequest, model: str) -> np.ndarray:
    """A system's clip as a finite 1-D float32 array, or one error naming the request."""
    try:
        arr = np.asarray(audio, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"model {model!r}: clip {request.key!r} is not an array of samples ({exc})") from exc
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1 or arr.size == 0:
        raise ModelError(f"model {model!r}: clip {request.key!r} has shape {arr.shape}; expected mono samples")
    if not np.isfinite(arr).all():
        raise ModelError(f"model {model!r}: clip {request.key!r} holds NaN or infinite samples")
    return arr


def synthesize(emb: Embedder, requests: Sequence[SynthesisRequest], settings: dict, folder: Path) -> tuple[list[Path], list[str]]:
    """The generated file of every request and the digest of its bytes: files whose bytes match
    their recorded digest are reused, the rest are generated in batches of --batch-size and each
    written (and its digest recorded) as soon as its batch returns (an interrupted run loses at
    most one batch). Counted in the task's record (audio_generated, audio_generated_cached)."""
    system = emb.encoder
    if not callable(getattr(system, "synthesize", None)):
        raise ModelError(f"model {emb.meta.name!r} does not generate audio; {emb.context} needs a text-to-audio system")
    caps = capabilities_of(system)
    for request in requests:
        if caps.needs_voice_prompt and request.voice_prompt is None:
            raise ModelError(
                f"model {emb.meta.name!r} needs a voice prompt and {emb.context} has none for {request.key!r}; "
                'evaluate it on the voice-cloning subset only (a spec whose data.subsets is ["voice_cloning"])'
            )
        if caps.needs_structured and not request.structured:
            raise ModelError(f"model {emb.meta.name!r} needs structured input and {emb.context} has none for {request.key!r}")
    paths = [folder / file_name(r, settings) for r in requests]
    hashes = read_hashes(folder)
    present = [i for i, p in enumerate(paths) if p.exists()]
    changed = [i for i in present if not matches(paths[i], hashes.get(paths[i].name))]
    if changed:
        example = paths[changed[0]].name
        emb.log(
            f"warning: {emb.context}: {len(changed)} of {len(present)} generated clips in {folder} are not the bytes "
            f"generated for them (replaced, damaged, or without a recorded content hash; e.g. {example}); "
            "they are generated again"
        )
    todo = sorted(set(range(len(paths))) - set(present) | set(changed))
    emb.stats.audio_generated_cached += len(requests) - len(todo)
    rate = int(system.sample_rate)

    def call(asked: list[SynthesisRequest], _: list[int]) -> list:
        def generate(batch: list[SynthesisRequest]):
            return system.synthesize(batch, settings=settings) if settings else system.synthesize(batch)

        outputs = emb.call_model(generate, asked, [r.key for r in asked], "failed to generate")
        if len(outputs) != len(asked):
            raise ModelError(f"model {emb.meta.name!r} returned {len(outputs)} clips for {len(asked)} requests")
        return outputs

    def put(clips: dict[str, np.ndarray]) -> None:
        for name, clip in clips.items():
            hashes[name] = write_wav_atomic(folder / name, clip, rate)
            _record_hash(folder, name, hashes[name])

    job = Job(
        call=call,
        check=lambda i, audio: check_output(audio, requests[i], emb.meta.name),
        key=lambda i: paths[i].name,
        put=put,
        seconds=lambda _, clips: sum(c.size for c in clips.values()) / rate,
        counter="audio_generated",
    )
    step = emb.batch_size
    emb.run(job, ([(i, requests[i].restricted(caps.accepts)) for i in todo[s : s + step]] for s in range(0, len(todo), step)))
    return paths, [hashes[p.name] for p in paths]
