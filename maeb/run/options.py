"""One run's options, written once: `RunOptions` (frozen, typed, each field with its default and a
one-line help), from which the `run` subcommand's flags (maeb.cli.run, in the --help sections of
maeb.run.flags) are generated and against which `maeb.evaluate()`'s keywords (maeb.api) are checked, and `resolve(meta, options)`, which computes once what a run derives from
them: the protocol, the encoder options, the perturbation chain, the window policy, the identities,
the experiment settings and the RunContext. The runner, the Ray driver and its workers take that
resolved run; none of them parses an option string again or reads an environment variable (the
command line and evaluate() read the variables of maeb.core.environment, through from_fronts, and pass
them down as fields).

A new run option is one field here (with its `cli` flag and section and, where the keyword differs
from the field name, its `api` name) and its keyword in evaluate()'s signature; tests/test_options.py
fails when the command line or evaluate() lack it, offer an option that is not a field, or give it
another type or default."""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.durations import parse_edges
from ..audio import windows
from ..audio.perturb import Chain
from ..audio.pipeline import RESAMPLERS
from ..core import environment
from ..core.context import RunContext
from ..core.environment import cache_dir
from ..core.errors import MaebError, SpecError
from ..core.identity import declared_identity, experiment_settings, merged_options, run_identity
from ..core.progress import Progress
from ..encoders import ModelMeta, precision_options, protocols
from ..encoders.chat import Judge
from ..encoders.protocols import DEFAULT_PROTOCOL
from ..results.write import result_path
from ..tasktypes.control import CONTROLS
from .flags import JUDGE_PARTS, parse_option, part_dest, positive_float, replays
from .layers import parse_layers
from .stability import AUTO, DEFAULT_REPLAYS

if TYPE_CHECKING:
    from ..encoders.chat import Endpoint


def _opt(default=MISSING, help: str = "", *, factory=MISSING, cli: dict | None = None, api: str | None = None, **fronts):
    """A RunOptions field: its default, its one-line help, its command-line flag (`cli`: its --help
    section (CLI_GROUPS), flags and argparse keywords, or `parts`: a flag per part; None: no flag)
    and its evaluate() keyword (`api`, default the field's name; `api_type`: evaluate()'s annotation
    where it takes more than the field holds, as a string for a path). `cli_default`/`api_default`:
    the front's default where it is another value than the field's, on purpose (each says why)."""
    meta = {"help": help, "cli": cli, "api": api, **fronts}
    if factory is not MISSING:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def _default_cache_dir() -> Path:

    return cache_dir()


@dataclass(frozen=True)
class RunOptions:
    """How one model is run on a list of tasks. Values are normalised on construction (paths to
    Path, one perturbation string to a tuple, duration edges parsed); they are checked by resolve()."""

    output_dir: Path | None = _opt(
        Path("results"),
        "results root in mteb's layout; None: nothing is written (and nothing is resumed)",
        cli={
            "group": "output",
            "flags": ("--output-dir", "--output-folder"),
            "type": Path,
            "help": "results root (default: results)",
        },
        api_default=None,
        api_type="str | Path | None",
        why="evaluate() writes files only when asked to (mteb's evaluate too); the command line writes results/",
    )
    cache_dir: Path = _opt(
        help="embeddings, predictions, judge replies and unpacked data (default: $MAEB_CACHE_DIR or ~/.cache/maeb)",
        factory=_default_cache_dir,
        cli={"group": "output", "flags": ("--cache-dir",), "type": Path},
        cli_default=None,
        api_default=None,
        api_type="str | Path | None",
        why="None at the front: $MAEB_CACHE_DIR is read when the run starts (from_fronts), not when the parser is built",
    )
    device: str = _opt("cpu", "cpu, cuda or cuda:N", cli={"group": "speed", "flags": ("--device",), "choices": ["cpu", "cuda"]})
    batch_size: int = _opt(16, "clips per audio batch", cli={"group": "speed", "flags": ("--batch-size",), "type": int})
    batch_seconds: float | None = _opt(
        None,
        "audio batches by total seconds instead of --batch-size clips (short clips batch wide, long ones narrow); "
        "not for families batched as mteb batches (they keep batches of 32)",
        cli={"group": "speed", "flags": ("--batch-seconds",), "type": positive_float, "metavar": "S"},
    )
    precision: str | None = _opt(
        None,
        "compute in this dtype (default: the protocol's, i.e. the checkpoint's); not mteb's numbers: results go "
        "to an experiment folder",
        cli={"group": "speed", "flags": ("--precision",), "choices": ["fp32", "bf16", "fp16"]},
    )
    call_batch_size: int | None = _opt(
        None,
        "clips per batch for families batched as mteb batches (default 32, mteb's); another size changes their "
        "vectors: results go to an experiment folder",
        cli={"group": "speed", "flags": ("--call-batch-size",), "type": int, "metavar": "N"},
    )
    workers: int | None = _opt(
        None, "decoding threads (default: up to 4)", cli={"group": "speed", "flags": ("--workers",), "type": int}
    )
    on_bad_audio: str = _opt(
        "error",
        "undecodable, empty or NaN clips: stop with an error (default) or skip them and record the count",
        cli={"group": "protocol", "flags": ("--on-bad-audio",), "choices": ["error", "skip"]},
    )
    on_leak: str = _opt(
        "warn",
        "clips byte-identical in the training and an evaluation split: warn and record the count (default) or stop",
        cli={"group": "protocol", "flags": ("--on-leak",), "choices": ["warn", "error"]},
    )
    overwrite: bool = _opt(
        False,
        "re-run tasks that already have a result file",
        cli={"group": "output", "flags": ("--overwrite",), "action": "store_true"},
    )
    show_progress: bool | str = _opt(
        True,
        "progress: True (bars on a terminal, periodic lines in a log), False, or a mode (bar, lines, off)",
        cli={
            "group": "behaviour",
            "flags": ("--quiet",),
            "action": "store_false",
            "help": "no progress (bars on a terminal, periodic lines in a log)",
        },
        api="progress",
    )
    strict_modalities: bool = _opt(
        True,
        "a task the model has no side for (text, generation, frames) is an error; False skips it, as a benchmark run does",
        cli={
            "group": "behaviour",
            "flags": ("--strict",),
            "action": "store_true",
            "help": "stop when the model lacks a side a benchmark's task needs (default: skip those tasks; "
            "tasks named with --tasks are always checked)",
        },
        api="strict",
        cli_default=False,
        why="the command line runs benchmarks, whose tasks a model lacks a side for are skipped (named tasks are "
        "refused before the run); evaluate() stops, as mteb's does",
    )
    options: dict = _opt(
        help='encoder options (e.g. window="clip"); they change the cache key and are recorded in results',
        factory=dict,
        cli={
            "group": "select",
            "flags": ("--option",),
            "type": parse_option,
            "action": "append",
            "default": [],
            "metavar": "KEY=VALUE",
            "help": 'encoder option (e.g. window="clip"); changes the cache key and is recorded in results',
        },
        api_type="dict | None",
        api_default=None,
        why="None at evaluate(): a dict default would be one object shared by every call; None is the field's empty dict",
    )
    protocol: str = _opt(
        DEFAULT_PROTOCOL,
        "reference protocol: mteb-2.26 (default: mteb 2.26.24, which the published MAEB results' evaluators "
        "match), paper (the MAEB-introduction code's caps and batching) or mteb-2.26-stable (its probes on standardised "
        "features, fit to convergence: scores that do not depend on the machine; not mteb's) or mteb-2.26-tie-aware "
        "(rank metrics as expected values over the orders of tied scores; mteb's to the bit where nothing ties); recorded in every result "
        "(`maeb list protocols`)",
        cli={"group": "protocol", "flags": ("--protocol",)},
    )
    resampler: str | None = _opt(
        None,
        "override the protocol's resampler (soxr-hq: 1.2-5x faster, not mteb's; results go to an experiment folder)",
        cli={"group": "protocol", "flags": ("--resampler",), "choices": ["torchaudio-sinc-hann", "soxr-hq"]},
    )
    judge: Endpoint | None = _opt(
        None,
        "a maeb.encoders.chat.Endpoint for judge-scored task types (command line: one flag per part of it, "
        "--judge-url and --judge-model or $MAEB_JUDGE_URL and $MAEB_JUDGE_MODEL, and the client's settings)",
        cli={"group": "judge", "flags": tuple(flag for flag, _, _ in JUDGE_PARTS), "parts": JUDGE_PARTS},
    )
    judge_concurrency: int = _opt(
        8,
        "judge requests in flight at once",
        cli={"group": "judge", "flags": ("--judge-concurrency",), "type": int, "metavar": "N"},
    )
    lite_dir: Path | None = _opt(
        None,
        "MAEB-lite's data, built there when the folder does not exist (default: $MAEB_LITE_DIR, else under the cache)",
        cli={"group": "output", "flags": ("--lite-dir",), "type": Path, "metavar": "DIR"},
        api_type="str | Path | None",
    )
    mmag_lite_dir: Path | None = _opt(
        None,
        "MMAG-lite's data, built there on first use (default: $MMAG_LITE_DIR, else under the cache)",
        cli={"group": "output", "flags": ("--mmag-lite-dir",), "type": Path, "metavar": "DIR"},
        api_type="str | Path | None",
    )
    perturb: tuple[str, ...] = _opt(
        (),
        "perturb the audio before the encoder (repeatable, applied in order): noise:snr=5[,kind=white|pink|babble|"
        "events], reverb:rt60=0.6, codec:format=mp3|opus,bitrate=32, codec:format=vorbis,level=0.5, telephone, "
        "clip:db=-6, gain:db=-20; keyed into the cache, results go to an experiment folder",
        cli={"group": "protocol", "flags": ("--perturb",), "action": "append", "default": [], "metavar": "SPEC"},
        api_type="str | Sequence[str]",
    )
    long_audio: str | None = _opt(
        None,
        "embed clips longer than the model's window as sliding windows pooled by their mean or maximum: "
        "mean, max, mean:window=10,hop=5 (seconds; default window: the model's length cap, 30 s without one; "
        "default hop: the window); streamed in bounded memory; results go to an experiment folder",
        cli={"group": "protocol", "flags": ("--long-audio",), "metavar": "POLICY"},
    )
    layers: str | None = _opt(
        None,
        "a layer sweep: all, or hidden layers by index (0,4,8; 0 is the input to the first transformer layer, "
        "-1 the last), for families that expose hidden states (Whisper, wav2vec2/HuBERT/WavLM/data2vec, AST, the CLAP audio tower); "
        "one forward pass for all layers, each layer an experiment folder hidden_layer_N",
        cli={"group": "select", "flags": ("--layers",), "metavar": "all|L,L,..."},
    )
    duration_buckets: tuple[float, ...] | None = _opt(
        None,
        "also score each task by clip duration (seconds, e.g. 10,30,60,300; default 10,30,60,300,1800), "
        "for task types scored as a mean over clips; shown by python -m maeb durations",
        cli={"group": "stability", "flags": ("--duration-buckets",), "nargs": "?", "const": "default", "metavar": "EDGES"},
        api_type="str | Sequence[float] | None",
    )
    per_item: bool = _opt(
        False,
        "also write each split's per-item scores (a clip's correctness, a query's main metric) beside the result, "
        "for python -m maeb compare --models",
        cli={"group": "stability", "flags": ("--per-item",), "action": "store_true"},
    )
    controls: tuple[str, ...] = _opt(
        (),
        "controls computed beside each score: shuffled (the trained probes refit on permuted training labels, same "
        "draws and folds; its score goes to maeb.baselines; about one more probe fit per experiment, docs/checks.md)",
        cli={"group": "stability", "flags": ("--controls",), "metavar": "shuffled"},
        api_type="str | Sequence[str]",
    )
    raise_error: bool = _opt(
        True,
        "stop at the first task that cannot load or evaluate; False: record it (summary.failed), run the others",
        cli={
            "group": "behaviour",
            "flags": ("--raise-error",),
            "action": "store_const",
            "const": True,
            "help": "stop at the first task that cannot load or evaluate (default for several tasks: report it, run the "
            "others, list the failures at the end and exit with code 2; a single task always stops at once)",
        },
        cli_default=None,
        why="None: the command line stops at once for a single task and goes on past a failed task of several; "
        "evaluate() stops, as mteb's raise_error=True",
    )
    debug: bool = _opt(
        False,
        "an unexpected error (not one of maeb's one-line errors) raises with its traceback instead of one line; "
        "also on when $MAEB_DEBUG is set",
        cli={"group": "behaviour", "flags": ("--debug",), "action": "store_true"},
    )
    endpoints: dict = _opt(
        help="endpoints of API-backed models where the entry's options name none, by variable (MAEB_API_URL, "
        "MAEB_API_MODEL, MAEB_TTA_URL; a model class's `from_environment` says which option each fills); "
        "default: those variables of the environment",
        factory=dict,
        cli=None,
        api_default=None,
        api_type="dict | None",
        why="None at evaluate(): the environment's variables are read when the run starts (from_fronts); the command "
        "line reads them too and has no flag (--option base_url=... names an endpoint)",
    )
    stability_replays: int | str = _opt(
        DEFAULT_REPLAYS,
        "replays of each task's scoring on vectors perturbed by the size of another machine's rounding, for the "
        "score's band (maeb.run.stability; auto: 8 per embedding task, 8 unmoved being what 'exact' needs; 0: none)",
        cli={"group": "stability", "flags": ("--stability-replays",), "type": replays, "metavar": "N"},
    )

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalised once, here
        if self.output_dir is not None and not isinstance(self.output_dir, Path):
            set_(self, "output_dir", Path(self.output_dir))
        if not isinstance(self.cache_dir, Path) and self.cache_dir is not None:
            set_(self, "cache_dir", Path(self.cache_dir))
        for name in ("lite_dir", "mmag_lite_dir"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), Path):
                set_(self, name, Path(getattr(self, name)))
        set_(self, "options", dict(self.options or {}))
        set_(self, "endpoints", dict(self.endpoints or {}))
        set_(self, "perturb", (self.perturb,) if isinstance(self.perturb, str) else tuple(self.perturb or ()))
        set_(self, "duration_buckets", _edges(self.duration_buckets))
        set_(self, "controls", _names(self.controls))


def _names(value) -> tuple[str, ...]:
    """A comma-separated list (the command line's --controls a,b) or a sequence, as a tuple of names."""
    parts = value.split(",") if isinstance(value, str) else list(value or ())
    return tuple(str(v).strip() for v in parts if str(v).strip())


def _edges(value) -> tuple[float, ...] | None:
    if value is None or (isinstance(value, tuple) and all(isinstance(v, float) for v in value)):
        return value

    return parse_edges(value if isinstance(value, str) else ",".join(str(float(v)) for v in value))


def option_fields():
    """RunOptions' fields, in order (the command line and evaluate() are generated from them)."""
    return fields(RunOptions)


def api_name(f) -> str:
    """A field's evaluate() keyword: its `api` name, else the field's name."""
    return f.metadata.get("api") or f.name


def default_of(f, front: str | None = None):
    """A field's default, or the front's ("cli", "api") where it differs on purpose."""
    key = f"{front}_default"
    if front and key in f.metadata:
        return f.metadata[key]
    return f.default_factory() if f.default is MISSING else f.default


def add_cli_arguments(parser, groups: Mapping[str, Any] | None = None) -> None:
    """The run subcommand's option flags, one per RunOptions field (dest: the field's name), each in
    its CLI_GROUPS section of `groups` (argparse argument groups by key; None: all in `parser`); a
    field made of parts (the judge) has a flag per part (dest: the flag's name, --judge-url: judge_url)."""
    for f in option_fields():
        spec = f.metadata["cli"]
        if spec is None:
            continue
        where = parser if groups is None else groups[spec["group"]]
        if "parts" in spec:
            for flag, _, keywords in spec["parts"]:
                where.add_argument(flag, dest=part_dest(flag), **keywords)
            continue
        kwargs = {k: v for k, v in spec.items() if k not in ("flags", "group")}
        kwargs.setdefault("help", f.metadata["help"])
        kwargs.setdefault("default", default_of(f, "cli"))
        where.add_argument(*spec["flags"], dest=f.name, **kwargs)


def cli_values(args: argparse.Namespace) -> dict[str, Any]:
    """Field name -> value from the run subcommand's parsed flags, for the fields with a flag of their
    own (a field made of parts, the judge, is built by judge_from_flags)."""
    return {
        f.name: getattr(args, f.name)
        for f in option_fields()
        if f.metadata["cli"] is not None and "parts" not in f.metadata["cli"]
    }


def from_fronts(values: dict[str, Any], environ: Mapping[str, str] | None = None) -> RunOptions:
    """RunOptions from the values a front end collected (field name -> value): a missing or None
    cache_dir, lite_dir, mmag_lite_dir and endpoints, and a false debug, are filled here from the
    environment (maeb.core.environment; os.environ unless `environ` is given)."""

    values = dict(values)
    if values.get("cache_dir") is None:
        values["cache_dir"] = environment.cache_dir(environ)  # $MAEB_CACHE_DIR or ~/.cache/maeb
    for name, variable in (("lite_dir", "MAEB_LITE_DIR"), ("mmag_lite_dir", "MMAG_LITE_DIR")):
        if values.get(name) is None:
            values[name] = environment.folder(variable, environ)
    if values.get("endpoints") is None:
        values["endpoints"] = environment.endpoints(environ)
    values["debug"] = bool(values.get("debug")) or environment.debug(environ)
    for name in ("protocol", "stability_replays", "options"):  # None: the default (evaluate() accepts it)
        if name in values and values[name] is None:
            values.pop(name)
    return RunOptions(**values)


def options_from_keywords(keywords: dict[str, Any], caller: str = "evaluate") -> RunOptions:
    """RunOptions from evaluate()'s keywords; an unknown keyword is a TypeError, as Python's own."""
    by_api = {api_name(f): f for f in option_fields()}
    unknown = [k for k in keywords if k not in by_api]
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
    return from_fronts({f.name: keywords.get(api_name(f), default_of(f, "api")) for f in option_fields()})


@dataclass(frozen=True)
class ResolvedRun:
    """What a run derives from its options, computed once by resolve(): every step of the run
    (runner, Ray driver, Ray workers) reads it instead of parsing an option again."""

    meta: ModelMeta
    options: RunOptions
    protocol: protocols.Protocol
    overrides: dict  # --option values plus the dtype a --precision sets
    encoder_options: dict  # the entry's options with the overrides
    resampler: str | None  # a resampler other than the protocol's; None: the protocol's
    call_batch_size: int | None  # a call batch size other than the protocol's; None: the protocol's
    chain: Chain | None  # None for the clean run
    window: windows.WindowPolicy
    declared: dict  # the declared encoder identity
    experiment: dict  # settings that differ from the entry (mteb's experiments folder)
    ctx: RunContext

    @property
    def chain_name(self) -> str | None:
        """The perturbation chain's canonical string, None for the clean run."""
        return self.chain.canonical() if self.chain else None

    @property
    def window_name(self) -> str | None:
        """The policy's canonical string for identities, None for the head cut (so the published
        protocol's identities are unchanged)."""
        return self.window.canonical() if self.window.windowed else None

    def identity(self, spec) -> dict:
        """The run identity of one task (recorded in its result; a rerun with another is refused)."""

        return run_identity(self.declared, spec, self.ctx.variables(), self.chain_name, self.window_name)

    def result_path(self, spec) -> Path | None:
        """Where one task's result goes (mteb's layout, the experiment folder when the run is one);
        None when nothing is written."""

        root = self.options.output_dir
        return None if root is None else result_path(Path(root), self.meta, spec.name, self.experiment)

    def with_context(self, ctx) -> ResolvedRun:
        """The same run with another RunContext (a Ray worker makes its own)."""
        return replace(self, ctx=ctx)


def resolve(meta, options: RunOptions, ray: bool = False, ctx=None) -> ResolvedRun:
    """Check the options (one line naming the setting) and derive the run from them once. ray: the
    run goes to Ray (some options do not run there yet). ctx: a RunContext to use (else built from
    the options: its cache folder, device, progress, judge and MAEB-lite folder)."""

    check_options(options)
    window = windows.parse(options.long_audio)
    if ray:
        check_ray(options, window)
    protocol = protocols.get_protocol(options.protocol)  # through the module: tests count the lookups
    overrides = {**options.options, **precision_options(meta, options.precision, options.device, options.options)}
    resampler = None
    if options.resampler is not None and options.resampler != protocol.resampler:
        if options.resampler not in RESAMPLERS:
            raise SpecError(f"unknown resampler {options.resampler!r}; known: {', '.join(RESAMPLERS)}")
        resampler = options.resampler
    calls = options.call_batch_size if options.call_batch_size != protocol.call_batch_size else None
    if calls is not None and calls < 1:
        raise SpecError(f"--call-batch-size must be at least 1, not {calls}")
    windows.check_combination(window, options.perturb)
    chain = None
    if options.perturb:
        chain = Chain.parse(options.perturb)
    encoder_options = merged_options(meta, overrides)
    declared = declared_identity(meta, encoder_options, protocol.name, resampler, calls, Path(options.cache_dir))
    window_name = window.canonical() if window.windowed else None
    experiment = experiment_settings(
        meta,
        overrides,
        protocol.name,
        DEFAULT_PROTOCOL,
        resampler,
        calls,
        chain.canonical() if chain is not None else None,
        window_name,
    )
    return ResolvedRun(
        meta,
        options,
        protocol,
        overrides,
        encoder_options,
        resampler,
        calls,
        chain,
        window,
        declared,
        experiment,
        ctx if ctx is not None else context_of(options),
    )


def check_ray(options: RunOptions, window) -> None:
    """Options that do not run on Ray yet, refused in one line before anything starts."""

    if options.layers is not None:  # the sweep shares one model's forward passes between its layers, in one process
        raise MaebError("--layers does not run on Ray yet; run without --ray")
    if options.perturb:  # shards would each draw their own babble pool; the robustness axis runs locally
        raise MaebError("--perturb does not run on Ray yet; run without --ray")
    windows.check_combination(window, (), ray=True)


def context_of(options: RunOptions):
    """The RunContext of a run: its cache folder, device, progress, judge and MAEB-lite folder."""

    judge = None
    if options.judge is not None:
        judge = Judge(options.judge, options.cache_dir, options.judge_concurrency)
    return RunContext(
        cache_dir=Path(options.cache_dir),
        device=options.device,
        progress=Progress.of(options.show_progress),
        judge=judge,
        lite_dir=options.lite_dir,
        mmag_lite_dir=options.mmag_lite_dir,
    )


def check_options(options: RunOptions) -> None:
    """The run's settings, checked before anything is read or loaded (CLI and API alike): one
    line naming the setting, not a silent fallback or an error deep in a worker."""
    import re

    def whole(value, at_least: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= at_least

    if not whole(options.batch_size, 1):
        raise SpecError(f"batch size must be a whole number of clips, at least 1, not {options.batch_size!r}")
    if options.stability_replays != AUTO and not whole(options.stability_replays, 0):
        raise SpecError(
            f"stability replays must be auto or a whole number of replays, 0 for none, not {options.stability_replays!r}"
        )
    if not whole(options.judge_concurrency, 1):  # 0 would start no request and wait for ever
        raise SpecError(f"judge concurrency must be a whole number of requests, at least 1, not {options.judge_concurrency!r}")
    if options.workers is not None and not whole(options.workers, 1):
        raise SpecError(f"workers must be a whole number of decoding threads, at least 1, not {options.workers!r}")
    seconds = options.batch_seconds
    if seconds is not None and not (isinstance(seconds, (int, float)) and 0 < seconds < math.inf):
        raise SpecError(f"batch seconds must be a positive number, not {seconds!r}")
    if not isinstance(options.device, str) or not re.fullmatch(r"(cpu|cuda)(:\d+)?", options.device):
        raise SpecError(f"device {options.device!r} is not one maeb runs on: cpu, cuda or cuda:N")
    if options.device.startswith("cuda") and not _cuda_available():
        # a model that ignores the device would run on the CPU and be recorded as a CUDA run
        raise SpecError(f"device {options.device!r}: no CUDA device is available here; run with --device cpu")
    if options.layers is not None:
        parse_layers(options.layers)  # the syntax now; the range once the model is loaded

    unknown = [c for c in options.controls if c not in CONTROLS]
    if unknown:
        raise SpecError(f"controls: {', '.join(map(repr, unknown))} is not a control maeb computes; known: {', '.join(CONTROLS)}")
    for name, allowed in (("on_bad_audio", ("error", "skip")), ("on_leak", ("warn", "error"))):
        if getattr(options, name) not in allowed:
            raise SpecError(f"{name} must be {' or '.join(map(repr, allowed))}, not {getattr(options, name)!r}")


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
