"""maeb from Python: get models, tasks and benchmarks, and evaluate a model on them.

    import maeb

    model = maeb.get_model("facebook/wav2vec2-base")          # or an entry file, or your own encoder object
    tasks = maeb.get_tasks("CREMA_D", "examples/fsdd_digits.toml")
    results = maeb.evaluate(model, tasks, output_dir="results")  # files only when output_dir is given
    for r in results:
        print(r.task, r.main_score)

`evaluate` takes what the command line takes, as keyword arguments, and returns one TaskResult per
task (scores in mteb's shape, the main score, the maeb section); the command line is a thin layer
over the same functions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .core import environment, trust
from .core.errors import MaebError
from .core.taskspec import TaskSpec
from .encoders import ModelMeta, has_audio, has_text
from .encoders.protocols import DEFAULT_PROTOCOL
from .run.options import ResolvedRun, RunOptions, api_name, default_of, option_fields, options_from_keywords
from .run.runner import run
from .run.stability import DEFAULT_REPLAYS
from .run.summary import TaskResult
from .spec import catalog
from .spec.catalog import Benchmark
from .spec.taskspec import distinct

if TYPE_CHECKING:
    from .encoders.chat import Endpoint


def _trust_from_environment() -> None:
    """MAEB_ALLOW_CODE=1 lets specs and entries import their modules (maeb.core.trust); unset, what
    the program chose with trust.allow_code() stands."""
    if environment.allow_code():
        trust.allow_code()


def get_model(name: str | Path) -> ModelMeta:
    """A registered model by name or alias, or the entry in a .toml file."""
    _trust_from_environment()
    return catalog.find_model(str(name))


def get_benchmark(name: str) -> Benchmark:
    """A registered benchmark by name or alias (its tasks: maeb.get_tasks(benchmark))."""
    return catalog.find_benchmark(name)


def get_tasks(*names: str | Path | TaskSpec | Benchmark, **filters) -> list[TaskSpec]:
    """Tasks by name or spec file, TaskSpecs, or benchmarks (each expanded to its tasks), then
    filtered by `types`, `languages` and `eval_splits` (see select_tasks). A list or tuple of them
    works too, as mteb users write `get_tasks(["A", "B"])`."""
    items = [x for n in names for x in (n if isinstance(n, (list, tuple)) else [n])]
    return select_tasks(items, **filters)


def select_tasks(
    items: Iterable[str | Path | TaskSpec | Benchmark],
    *,
    types: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    eval_splits: Sequence[str] | None = None,
) -> list[TaskSpec]:
    """TaskSpecs from names, spec files, TaskSpecs and benchmarks (each expanded to its tasks),
    then kept by task type (maeb's or mteb's name), language (eng-Latn or eng; a multilingual task
    keeps its subsets in those languages) and with its eval splits replaced; each task once, in order."""
    _trust_from_environment()
    specs: list[TaskSpec] = []
    for item in items:
        if isinstance(item, TaskSpec):
            specs.append(item)
        elif isinstance(item, Benchmark):
            specs += catalog.benchmark_specs(item)
        elif isinstance(item, (str, Path)):
            text = str(item)
            try:
                specs.append(catalog.find_task(text))
            except MaebError:
                if text.endswith((".toml", ".json")):
                    raise
                try:  # a benchmark's name where a task was expected
                    specs += catalog.benchmark_specs(catalog.find_benchmark(text))
                except MaebError:
                    catalog.find_task(text)  # the task's own error, with its suggestions
        else:
            raise MaebError(f"a task is a name, a spec file, a TaskSpec or a Benchmark, not {type(item).__name__}")
    if types:
        types = [types] if isinstance(types, str) else list(types)  # types="clustering" is one type
        _check_types(types)
        wanted = {t.lower() for t in types}
        specs = [s for s in specs if s.type.lower() in wanted or s.mteb_type.lower() in wanted]
    if languages:
        specs = [s for s in (_in_languages(s, languages) for s in specs) if s is not None]
    if eval_splits:
        specs = [replace(s, data=replace(s.data, eval_splits=list(eval_splits))) for s in specs]
    return distinct(specs)


def _check_types(types: Sequence[str]) -> None:
    """Each task type by maeb's or mteb's name (any case); a typo is an error with suggestions,
    not an empty selection."""
    from .core.errors import closest
    from .spec.taskspec import GENERATIVE_TYPES, TYPES

    known = sorted({*TYPES, *TYPES.values(), *GENERATIVE_TYPES, *GENERATIVE_TYPES.values()})
    lowered = {k.lower() for k in known}
    for name in types:
        if not isinstance(name, str) or name.lower() not in lowered:
            close = closest(str(name), known)
            hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(sorted(TYPES))} (or mteb's names)"
            raise MaebError(f"unknown task type {name!r}; {hint}")


def _speaks(codes: Iterable[str], wanted: Sequence[str]) -> bool:
    """eng-Latn matches eng-Latn and eng."""
    return any(code == w or code.split("-")[0] == w for code in codes for w in wanted)


def _in_languages(spec: TaskSpec, wanted: Sequence[str]) -> TaskSpec | None:
    if isinstance(spec.languages, dict):  # per subset: keep the subsets in those languages
        subsets = [s for s in spec.data.subsets if _speaks(spec.languages.get(s, []), wanted)]
        return replace(spec, data=replace(spec.data, subsets=subsets)) if subsets else None
    return spec if _speaks(spec.languages, wanted) else None


def _meta_of(encoder, name: str | None, revision: str | None) -> ModelMeta:
    """A ModelMeta for an encoder object a user built: named by its `name` (else its class), its
    family the class's import path, its sides from what it implements."""
    cls = type(encoder)
    modalities = tuple(m for m, ok in (("audio", has_audio(encoder)), ("text", has_text(encoder))) if ok)
    return ModelMeta(
        name=name or getattr(encoder, "name", None) or f"local/{cls.__name__}",
        family=f"{cls.__module__}:{cls.__qualname__}",
        revision=str(revision or getattr(encoder, "revision", "local")),
        modalities=modalities or ("audio",),
        embed_dim=getattr(encoder, "embed_dim", None),
    )


def evaluate(
    model: str | Path | ModelMeta | object,
    tasks: str | Path | TaskSpec | Benchmark | Iterable[str | Path | TaskSpec | Benchmark],
    *,
    name: str | None = None,
    revision: str | None = None,
    # the run's options: one keyword per maeb.run.options.RunOptions field, in its order, with its evaluate()
    # default and type (tests/test_options.py fails when they drift apart)
    output_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    device: str = "cpu",
    batch_size: int = 16,
    batch_seconds: float | None = None,
    precision: str | None = None,
    call_batch_size: int | None = None,
    workers: int | None = None,
    on_bad_audio: str = "error",
    on_leak: str = "warn",
    overwrite: bool = False,
    progress: bool | str = True,
    strict: bool = True,
    options: dict | None = None,
    protocol: str = DEFAULT_PROTOCOL,
    resampler: str | None = None,
    judge: Endpoint | None = None,
    judge_concurrency: int = 8,
    lite_dir: str | Path | None = None,
    mmag_lite_dir: str | Path | None = None,
    perturb: str | Sequence[str] = (),
    long_audio: str | None = None,
    layers: str | None = None,
    duration_buckets: str | Sequence[float] | None = None,
    per_item: bool = False,
    controls: str | Sequence[str] = (),
    raise_error: bool = True,
    debug: bool = False,
    endpoints: dict | None = None,
    stability_replays: int | str = DEFAULT_REPLAYS,
) -> Results:
    """Evaluate `model` on `tasks` and return one TaskResult per task, in task order.

    model: a registered name, an entry file, a ModelMeta, or an encoder object (sample_rate,
    max_seconds, min_samples, batching, config(), embed_audio(); see docs/add-model.md),
    named by `name` and `revision` (default: its class). tasks: names, spec files, TaskSpecs, a
    Benchmark, or a list of these. The other keywords are the run's options, one per field of
    maeb.run.options.RunOptions (listed below with their defaults, and in docs/reference/options.md);
    the command line's `run` flags are the same options. With output_dir, results are written in mteb's layout (and tasks already done
    there are read, not rerun); without it nothing is written. raise_error=False logs a task that
    cannot load or evaluate, runs the others and lists it in the returned list's `failed` ({task:
    one-line reason}; nothing is written for it)."""
    keywords = {k: v for k, v in locals().items() if k not in ("model", "tasks", "name", "revision")}  # the options
    _trust_from_environment()
    encoder = None
    if isinstance(model, ModelMeta):
        meta = model
    elif isinstance(model, (str, Path)):
        meta = get_model(model)
    else:
        encoder, meta = model, _meta_of(model, name, revision)
    run_options = options_from_keywords(keywords)
    specs = select_tasks([tasks] if isinstance(tasks, (str, Path, TaskSpec, Benchmark)) else tasks)
    summary = run(meta, specs, prepared(meta, specs, run_options), encoder=encoder)
    if summary.skipped_modality:
        # the command line prints a line per skipped task; a library caller sees no log by default,
        # and a shorter list than asked for would otherwise go unexplained
        import warnings

        skipped = summary.skipped_modality
        noun = "task needs" if len(skipped) == 1 else "tasks need"
        warnings.warn(
            f"maeb.evaluate: model {meta.name!r} lacks a side (audio, text, ...) that {len(skipped)} {noun}; "
            f"skipped: {', '.join(skipped)} (also in the returned list's `skipped`)",
            stacklevel=2,
        )
    return Results(summary.results, summary.failed, summary.skipped_modality)


def prepared(
    meta: ModelMeta, specs: list[TaskSpec], options: RunOptions, ray: bool = False, dry_run: bool = False
) -> ResolvedRun:
    """The run resolved once (every option checked and parsed before any model is loaded; dry_run:
    a plain context that opens no judge), and the offline benchmarks' data its tasks read built
    (maeb.benchmarks.offline): what both fronts do before handing the run down."""
    from .benchmarks import offline
    from .run.options import resolve
    from .run.plan import plan_context

    job = resolve(meta, options, ray=ray, ctx=plan_context(options) if dry_run else None)
    offline.prepare(specs, job.ctx, job.ctx.log)  # synthetic, built here: nothing is downloaded
    return job


def _documented_options() -> None:
    """evaluate()'s docstring lists its option keywords with their help, from RunOptions (so
    help(maeb.evaluate) says what each does, in the command line's words)."""
    lines = [
        f"    {api_name(f)} (default {default_of(f, 'api')!r}): {f.metadata['help'].replace('%%', '%')}" for f in option_fields()
    ]
    evaluate.__doc__ = (evaluate.__doc__ or "") + "\n\n    Options:\n" + "\n".join(lines)


_documented_options()


class Results(list):
    """evaluate()'s TaskResults, in task order; `failed`: the tasks that could not load or
    evaluate under raise_error=False, each with its one-line reason; `skipped`: the tasks the
    model has no side for (a benchmark's; evaluate() also warns naming them)."""

    def __init__(self, results: Iterable[TaskResult] = (), failed: dict[str, str] | None = None, skipped: Iterable[str] = ()):
        super().__init__(results)
        self.failed = dict(failed or {})
        self.skipped = list(skipped)
