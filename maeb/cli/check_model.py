"""`maeb check-model ENTRY`: a smoke check of a model entry, like mteb's mock run, for
contributors adding a model.

It builds the encoder (or, with tiny=True, the family's tiny random variant, maeb.encoders.tiny), then
checks on synthetic tones, one line per check:

- load: the encoder satisfies the protocol (sample rate, length policy, batching, config());
- audio / text: shapes (n, d) with d the entry's embed_dim (not for tiny variants), float32,
  finite, not all equal;
- determinism: two calls on the same input give the same vectors (max |diff| <= 1e-6);
- batching: vectors from batches as the engine forms them equal one-clip-at-a-time vectors
  (identical-length batches: max |diff| <= 1e-5; padded batches: cosine >= BATCH_COSINE);
- config: for each option of the family's constructor a changed value changes config() (so the
  embedding cache, keyed by config(), never serves vectors of another setting), except the
  family's performance options (Family.performance: batch sizes and other knobs), for which a
  changed value must leave config() and the vectors as they were (the cache key leaves them out);
- tasks: every task type the model's modalities support runs through maeb's evaluators on a
  generated tone folder and gives finite scores in [0, 1].

A check that fails prints FAIL and makes the command exit with 1."""

from __future__ import annotations

import csv
import inspect
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..core import environment
from ..core.errors import MaebError
from ..encoders.checks import check_encoder
from ..encoders.load import load_encoder, resolve_factory
from ..encoders.meta import ModelMeta
from ..encoders.sides import has_audio, has_text
from ..run.options import parse_option as _option
from .common import option_pairs

DETERMINISM_TOL = 1e-6
SAME_LENGTH_TOL = 1e-5
BATCH_COSINE = 0.999
# a performance option changes no vector beyond this (relative to the largest |value|): a batch
# size may move the last bits of a padded batch, never more
PERFORMANCE_TOL = 1e-5
# options that are not settings (objects, weights locations) or whose values are free text
_NOT_PROBED = {"meta", "device", "protocol", "path", "text_path", "weights_path", "checkpoint", "processor", "model", "self"}
# alternative values for string options: the first one that differs from the current value is tried
_ALTERNATIVES: dict[str, list[Any]] = {
    "dtype": ["bfloat16", "float32"],
    "batching": ["padded", "single"],
    "frames": ["conv", "ratio"],
    "layer": ["hidden_states[-1]", "last_hidden_state"],
    "front_end": ["waveform-to-input", "audioset-log-mel"],
    "pad": [16000, "patch-hops"],
    "window": ["clip", "30s"],
    "short_pad_samples": [1000, "latent-frame"],
    "target_lang": ["fra", "eng"],
    "variant": ["jina-v5-omni", "e5-omni"],
    "audio_prompt_type": ["document", None],
    "text_prompt_type": ["document", "query"],
    "sample_rate": [16000, 22050],
}
FREQS = {"low": 220.0, "mid": 880.0, "high": 3520.0}


@dataclass
class Report:
    """The lines of one check-model run: (status, check, detail), each printed through `out` as added."""

    out: Callable[[str], object] = print
    lines: list[tuple[str, str, str]] = field(default_factory=list)  # (status, check, detail)

    def add(self, status: str, check: str, detail: str) -> None:
        """Record and print one check's line."""
        self.lines.append((status, check, detail))
        self.out(f"{status:4}  {check}: {detail}")

    @property
    def failed(self) -> list[tuple[str, str, str]]:
        """The lines whose status is FAIL."""
        return [line for line in self.lines if line[0] == "FAIL"]


def tones(encoder, n: int = 5, seed: int = 0) -> list[np.ndarray]:
    """Noisy tones at the encoder's rate, cut and padded as the engine would (two of equal length)."""
    from ..mock import tone

    rng = np.random.default_rng(seed)
    seconds = [0.6, 1.3, 0.6, 2.1, 0.35][:n]
    out = []
    for i, s in enumerate(seconds):
        clip = tone(float(rng.uniform(200, 3000)), s, int(encoder.sample_rate), seed=seed + i)
        out.append(_policy(encoder, clip))
    return out


def _policy(encoder, clip: np.ndarray) -> np.ndarray:
    cap = getattr(encoder, "max_seconds", None)
    if cap is not None:
        clip = clip[: int(round(cap * encoder.sample_rate))]
    need = int(getattr(encoder, "min_samples", 0) or 0)
    return np.pad(clip, (0, max(0, need - clip.size))) if clip.size < need else clip


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return (a * b).sum(1) / np.maximum(na * nb, 1e-12)


def engine_batches(encoder, clips: list[np.ndarray]) -> list[list[int]]:
    """How the engine would batch these clips for this encoder (maeb.audio.pipeline.plan_batches, batch size 16)."""
    from ..audio.pipeline import plan_batches

    return plan_batches([len(c) for c in clips], 16, encoder.batching)


def check_vectors(report: Report, name: str, vectors, n: int, dim: int | None) -> bool:
    """Vectors have shape (n, dim), are float32, finite and not all equal; reports the problems and
    returns whether there were none."""
    vectors = np.asarray(vectors)
    problems = []
    if vectors.ndim != 2 or vectors.shape[0] != n:
        problems.append(f"shape {vectors.shape}, expected ({n}, d)")
    elif dim is not None and vectors.shape[1] != dim:
        problems.append(f"dimension {vectors.shape[1]}, the entry says {dim}")
    if vectors.dtype != np.float32:
        problems.append(f"dtype {vectors.dtype}, expected float32")
    if not np.isfinite(vectors).all():
        problems.append("non-finite values")
    elif vectors.ndim == 2 and n > 1 and np.allclose(vectors, vectors[:1], atol=1e-7):
        problems.append("every input got the same vector")
    if problems:
        report.add("FAIL", name, "; ".join(problems))
        return False
    report.add("PASS", name, f"{vectors.shape[0]} x {vectors.shape[1]} float32, finite")
    return True


def check_audio(report: Report, encoder, dim: int | None) -> None:
    """The audio side on synthetic tones: vectors, two calls equal, batched equal to one clip at a time."""
    clips = tones(encoder)
    started = time.perf_counter()
    first = encoder.embed_audio(clips)
    seconds = time.perf_counter() - started
    if not check_vectors(report, "audio vectors", first, len(clips), dim):
        return
    again = encoder.embed_audio(clips)
    diff = float(np.max(np.abs(np.asarray(again) - first)))
    report.add(
        "PASS" if diff <= DETERMINISM_TOL else "FAIL",
        "audio determinism",
        f"two calls differ by {diff:.2g} (tolerance {DETERMINISM_TOL:g})",
    )
    single = np.stack([np.asarray(encoder.embed_audio([c]))[0] for c in clips])
    batched = np.zeros_like(single)
    for batch in engine_batches(encoder, clips):
        batched[batch] = np.asarray(encoder.embed_audio([clips[i] for i in batch]))
    if encoder.batching == "padded":
        cos = float(_cosines(batched, single).min())
        ok = cos >= BATCH_COSINE
        detail = f"padded batches vs one clip at a time: min cosine {cos:.6f} (tolerance {BATCH_COSINE})"
    else:
        diff = float(np.max(np.abs(batched - single)))
        ok = diff <= SAME_LENGTH_TOL
        detail = f"{encoder.batching} batches vs one clip at a time: max |diff| {diff:.2g} (tolerance {SAME_LENGTH_TOL:g})"
    report.add("PASS" if ok else "FAIL", "audio batching", detail + f"; {len(clips)} clips in {seconds:.2f} s")


def check_text(report: Report, encoder, dim: int | None) -> None:
    """The text side: vectors, two calls equal, a padded batch equal (cosine) to one text at a time."""
    texts = ["a low tone", "the sound of rain at 880 hz", "a high tone at 3520 hz", "dog"]
    first = encoder.embed_text(texts)
    if not check_vectors(report, "text vectors", first, len(texts), dim):
        return
    diff = float(np.max(np.abs(np.asarray(encoder.embed_text(texts)) - first)))
    report.add("PASS" if diff <= DETERMINISM_TOL else "FAIL", "text determinism", f"two calls differ by {diff:.2g}")
    single = np.stack([np.asarray(encoder.embed_text([t]))[0] for t in texts])
    cos = float(_cosines(np.asarray(first), single).min())
    report.add(
        "PASS" if cos >= BATCH_COSINE else "FAIL",
        "text batching",
        f"a padded batch vs one text at a time: min cosine {cos:.6f} (tolerance {BATCH_COSINE})",
    )


def probe_value(name: str, current):
    """A value of option `name` other than `current`, or None when none can be derived."""
    if name in _ALTERNATIVES:
        for value in _ALTERNATIVES[name]:
            if value != current:
                return value
        return None
    if isinstance(current, bool):
        return not current
    if isinstance(current, int):
        return current + 160 if name.endswith("samples") else current * 2 + 1
    if isinstance(current, float):
        return round(current / 2, 3) or 1.0
    if current is None and ("seconds" in name or name.startswith("max")):
        return 7.5
    return None


def probed_options(meta: ModelMeta, encoder) -> list[tuple[str, object, object]]:
    """(option, current value, probe value) for every option of the family's constructor (its
    performance options too: check_config tells them apart)."""
    factory = resolve_factory(meta.family)
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return []
    out = []
    config = encoder.config()
    for name, param in params.items():
        if name in _NOT_PROBED or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if name in meta.options:
            current = meta.options[name]
        elif hasattr(encoder, name):
            current = getattr(encoder, name)
        elif name in config:
            current = config[name]
        else:
            default = param.default
            current = None if default is inspect.Parameter.empty or type(default).__name__ == "object" else default
        out.append((name, current, probe_value(name, current)))
    return out


def check_config(
    report: Report, meta: ModelMeta, encoder, options: dict, device: str, protocol: str | None, endpoints=None
) -> None:
    """Each probed option, set to another value, changes config() (so the cache key follows it); a
    performance option of the family (Family.performance, which the cache key leaves out) instead
    leaves config() and the vectors as they were (check_performance)."""
    base = encoder.config()
    knobs = meta.performance_options
    for name, current, probe in probed_options(meta, encoder):
        check = f"{'performance option' if name in knobs else 'config covers'} {name}"
        if probe is None:
            report.add("SKIP", check, f"no alternative value derived from {current!r}; check it by hand")
            continue
        try:
            other = load_encoder(meta, device=device, protocol=protocol, endpoints=endpoints, **{**options, name: probe})
        except (MaebError, ValueError, TypeError) as exc:
            report.add("SKIP", check, f"{name}={probe!r} is not accepted ({str(exc).splitlines()[0][:120]})")
            continue
        if name in knobs:
            check_performance(report, check, encoder, other, f"{name}={probe!r} (was {current!r})")
            continue
        changed = other.config() != base
        report.add(
            "PASS" if changed else "FAIL",
            f"config covers {name}",
            f"{name}={probe!r} (was {current!r}) {'changes' if changed else 'does not change'} config()",
        )


def check_performance(report: Report, check: str, encoder, other, change: str) -> None:
    """A performance option changed (`other`, built with it) leaves config() as it was (the cache
    key leaves the option out, so vectors are shared) and gives the same vectors on the tones."""
    if other.config() != encoder.config():
        report.add(
            "FAIL",
            check,
            f"{change} changes config(); a performance option must not (the cache key leaves it out): "
            "drop it from config(), or from the family's performance options if it changes vectors",
        )
        return
    diffs = []
    if has_audio(encoder):
        clips = tones(encoder)
        diffs.append(_relative_diff(encoder.embed_audio(clips), other.embed_audio(clips)))
    if has_text(encoder):
        texts = ["a low tone", "the sound of rain at 880 hz", "dog"]
        diffs.append(_relative_diff(encoder.embed_text(texts), other.embed_text(texts)))
    worst = max(diffs, default=0.0)
    ok = worst <= PERFORMANCE_TOL
    report.add(
        "PASS" if ok else "FAIL",
        check,
        f"{change} leaves config() as it was and moves vectors by {worst:.2g} (relative; tolerance {PERFORMANCE_TOL:g})"
        + ("" if ok else ": it changes vectors, so it is a setting, not a performance option"),
    )


def _relative_diff(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, float(np.max(np.abs(a), initial=0.0))))


def write_mixtures(folder: Path, rate: int = 16000) -> Path:
    """A multilabel audiofolder: mixtures of one or two of three tones."""
    import soundfile as sf

    from ..mock import tone

    (folder / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    rows = []
    for i in range(30):
        chosen = sorted(rng.choice(list(FREQS), size=int(rng.integers(1, 3)), replace=False).tolist())
        clip = sum(tone(FREQS[c], 0.5, rate, seed=i) for c in chosen) / len(chosen)
        sf.write(folder / f"audio/{i}.wav", clip, rate)
        rows.append({"file_name": f"audio/{i}.wav", "labels": ";".join(chosen), "split": "test" if i % 3 == 0 else "train"})
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["file_name", "labels", "split"])
        writer.writeheader()
        writer.writerows(rows)
    return folder


def task_specs(folder: Path, mixtures: Path, text: bool, audio: bool) -> list:
    """One small spec per task type the model's sides support, on generated tones."""
    from ..spec.taskspec import parse_spec

    names = {k: str(int(v)) for k, v in FREQS.items()}
    base = {"source": "audiofolder", "path": str(folder), "label_column": "label", "eval_splits": ["test"]}

    def spec(name, kind, data=None, **extra):
        return parse_spec({"name": name, "type": kind, "data": {**base, **(data or {})}, **extra}, f"check-model spec {name}")

    out = []
    if audio:
        out += [
            spec("CheckClassification", "classification", {"split_by": {"column": "split"}}, protocol={"samples_per_label": 4}),
            spec(
                "CheckMultilabel",
                "multilabel",
                {"path": str(mixtures), "label_column": "labels", "label_separator": ";", "split_by": {"column": "split"}},
                protocol={"samples_per_label": 4},
            ),
            spec("CheckClustering", "clustering"),
            spec("CheckPairs", "pair_classification", derive={"kind": "pairs", "label_column": "label", "n_pairs": 40}),
            spec(
                "CheckA2ARetrieval",
                "retrieval",
                {"eval_splits": ["train"]},
                category="a2a",
                derive={"kind": "same_label", "label_column": "label"},
            ),
            spec(
                "CheckReranking",
                "reranking",
                {"eval_splits": ["train"]},
                derive={"kind": "rerank", "label_column": "label", "n_queries": 6, "positives": 2, "negatives": 4},
            ),
        ]
    if audio and text:
        template = {
            "kind": "text_to_audio",
            "label_column": "label",
            "text_template": "a tone at {label} hz",
            "label_names": names,
        }
        out += [
            spec("CheckZeroshot", "zeroshot", protocol={"template": "a tone at {label} hz", "label_names": names}),
            spec("CheckT2ARetrieval", "retrieval", {"eval_splits": ["train"]}, category="t2a", derive=template),
            spec(
                "CheckA2TRetrieval",
                "retrieval",
                {"eval_splits": ["train"]},
                category="a2t",
                derive={**template, "kind": "audio_to_text"},
            ),
        ]
    return out


def check_tasks(report: Report, meta: ModelMeta, encoder, options: dict, device: str, protocol: str | None, work: Path) -> None:
    """Runs the task types the model's sides support on small tone folders; each score must be finite in [0, 1]."""
    from ..encoders.protocols import DEFAULT_PROTOCOL, get_protocol
    from ..mock import write_tone_folder
    from ..run.model import build_embedder
    from ..run.options import RunOptions, resolve
    from ..run.task import evaluate_task

    folder = write_tone_folder(work / "tones", FREQS, per_label=8)
    mixtures = write_mixtures(work / "mixtures")
    specs = task_specs(folder, mixtures, has_text(encoder), has_audio(encoder))
    if not specs:
        report.add("SKIP", "tasks", "the model has no audio side: no MAEB task type applies")
        return
    proto = get_protocol(protocol or DEFAULT_PROTOCOL)
    from ..core.identity import declared_identity

    cfg = RunOptions(
        output_dir=work / "results", cache_dir=work / "cache", device=device, show_progress=False, protocol=proto.name
    )
    declared = declared_identity(replace(meta, options={}), {k: str(v) for k, v in options.items()}, proto.name)
    emb = build_embedder(resolve(meta, cfg), encoder, declared=declared)
    try:
        for spec in specs:
            try:
                scores, seconds, *_ = evaluate_task(spec, emb, "warn", log=lambda _message: None)
            except Exception as exc:  # a failing task is a finding, not a crash of the check
                report.add("FAIL", f"task {spec.type}", f"{spec.name}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                continue
            entries = scores[spec.data.eval_splits[0]]
            values = [e["main_score"] for e in entries]
            ok = all(isinstance(v, (int, float)) and math.isfinite(v) and -1e-9 <= v <= 1 + 1e-9 for v in values)
            label = f"task {spec.type}" + (f" ({spec.category})" if spec.type == "retrieval" else "")
            report.add("PASS" if ok else "FAIL", label, f"{spec.name}: {spec.main_score} = {values[0]:.4f} ({seconds:.1f} s)")
    finally:
        emb.cache.close()


def check_model(
    meta: ModelMeta,
    tiny: bool = False,
    device: str = "cpu",
    options: dict | None = None,
    protocol: str | None = None,
    config_probes: bool = True,
    tasks: bool = True,
    out=print,
    endpoints: dict | None = None,
) -> Report:
    """Load a model (or its tiny random variant) and run every check on it; prints one line per check and returns the
    Report. endpoints: the endpoint variables a front read (maeb.core.environment.endpoints), for API-backed families."""
    report = Report(out=out)
    with tempfile.TemporaryDirectory(prefix="maeb-check-") as tmp:
        work = Path(tmp)
        options = dict(options or {})
        dim = meta.embed_dim
        if tiny:
            from ..encoders import tiny as tiny_models

            options = {**tiny_models.build(meta, work / "weights"), **options}
            dim = None
        try:
            encoder = load_encoder(meta, device=device, protocol=protocol, endpoints=endpoints, **options)
            check_encoder(meta, encoder)
        except MaebError as exc:
            report.add("FAIL", "load", str(exc))
            return report
        sides = [s for s, present in (("audio", has_audio(encoder)), ("text", has_text(encoder))) if present]
        policy = (
            f"{encoder.sample_rate} Hz, max {encoder.max_seconds} s, min {getattr(encoder, 'min_samples', 0)} samples, {encoder.batching}"
            if has_audio(encoder)
            else "text only"
        )
        report.add(
            "PASS",
            "load",
            f"{type(encoder).__name__} ({meta.family}{', tiny random variant' if tiny else ''}): {'+'.join(sides)}; {policy}",
        )
        declared = [m for m in ("audio", "text") if m in meta.modalities]
        if declared != sides:
            report.add("FAIL", "modalities", f"the entry declares {'+'.join(declared)}, the encoder has {'+'.join(sides)}")
        if has_audio(encoder):
            check_audio(report, encoder, dim)
        if has_text(encoder):
            check_text(report, encoder, dim)
        if config_probes:
            check_config(report, meta, encoder, options, device, protocol, endpoints)
        if tasks:
            check_tasks(report, meta, encoder, options, device, protocol, work)
    failed = len(report.failed)
    out(f"{meta.name}: {len(report.lines) - failed} checks passed, {failed} failed")
    return report


def add_parser(sub) -> None:
    """The `check-model` subcommand's flags."""
    chk = sub.add_parser(
        "check-model", help="smoke-check a model entry on synthetic tones (shapes, determinism, batching, config, tasks)"
    )
    chk.add_argument("entry", help="registered model name or alias, or a model entry .toml")
    chk.add_argument("--tiny", action="store_true", help="build the family's tiny random variant instead of loading its weights")
    chk.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    chk.add_argument("--protocol", default=None, help="reference protocol whose rules the encoder follows (default mteb-2.26)")
    chk.add_argument("--option", type=_option, action="append", default=[], metavar="KEY=VALUE", help="encoder option")
    chk.add_argument("--no-config-probes", action="store_true", help="skip reloading the encoder once per option")
    chk.add_argument("--no-tasks", action="store_true", help="skip running the task types")


def cmd_check_model(args) -> int:
    """`maeb check-model`: check a model entry (load, config, sides, tiny tasks); 1 when a check failed."""
    from ..spec import catalog

    if args.protocol:
        from ..encoders.protocols import get_protocol

        get_protocol(args.protocol)
    report = check_model(
        catalog.find_model(args.entry),
        tiny=args.tiny,
        device=args.device,
        options=option_pairs(args.option),
        protocol=args.protocol,
        config_probes=not args.no_config_probes,
        tasks=not args.no_tasks,
        endpoints=environment.endpoints(),
    )
    return 1 if report.failed else 0


COMMANDS = {"check-model": cmd_check_model}
