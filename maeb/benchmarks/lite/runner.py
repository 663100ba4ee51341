"""The README's main job: build MAEB-lite (or reuse the build), evaluate the offline models and the
MFCC baseline on it, print the leaderboard and write results and leaderboard files."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path

from ...analysis.report import render, to_markdown, to_markdown_by_task
from ...core.context import LOGGER
from ...engine.cache import default_cache_dir
from ...results.write import write_text_atomic
from ...run.options import RunOptions
from ...run.runner import run
from ...spec import catalog
from . import under_cache
from .build import build
from .specs import lite_specs

MODELS = [
    "maeb/mfcc-stats",
    "google/speech-embedding",
    "resemble-ai/resemblyzer",
    "openai/whisper-tiny.en-clipwindow",
    "maeb/whisper-tiny.en-minilm-transcript-clipwindow",
]


def _log(message: str) -> None:
    LOGGER.info(message)


def evaluate(
    models: list[str],
    output_dir: Path,
    cache_dir: Path,
    show_progress: bool,
    lite_dir: Path | None = None,
    tasks: list[str] | None = None,
    stability_replays: int | str | None = None,
    debug: bool = False,
    protocol: str | None = None,
) -> dict[str, float]:
    """Run each model on MAEB-lite (or on `tasks`, some of its tasks); seconds per model. debug:
    unexpected errors raise with their traceback (RunOptions.debug); protocol: another reference
    protocol than the default (its results go to the experiments folder)."""
    from ...core.errors import MaebError, MissingPackage
    from . import vectors

    specs = lite_specs(tasks)
    seconds, skipped = {}, {}
    names = None
    for name in models:
        meta = catalog.find_model(name)
        started = time.perf_counter()
        _log(f"== {meta.name}")
        cfg = RunOptions(
            output_dir=output_dir,
            cache_dir=cache_dir,
            show_progress=show_progress,
            strict_modalities=False,
            lite_dir=lite_dir,
            debug=debug,
        )
        # no replays unless asked: the check takes every band from the reference (lite_reference.py measures them)
        cfg = replace(cfg, stability_replays=0 if stability_replays is None else stability_replays)
        if protocol is not None:
            cfg = replace(cfg, protocol=protocol)
        try:
            summary = run(meta, specs, cfg, log=_log)
        except MissingPackage as exc:  # one model's optional package must not stop the others
            skipped[meta.name] = str(exc)
            _log(f"{meta.name}: skipped: {exc}")
            continue
        if names is None:
            names = vectors.clip_names(lite_dir or under_cache(cache_dir))
        save_vectors(meta, summary, Path(output_dir), cache_dir, names)
        seconds[meta.name] = round(time.perf_counter() - started, 1)
    if skipped:
        _log(f"skipped {len(skipped)} of {len(models)} models for missing packages: {', '.join(skipped)} (see above)")
        if not seconds:
            raise MaebError("every model was skipped for missing packages: " + "; ".join(skipped.values()))
    return seconds


def save_vectors(meta, summary, output_dir: Path, cache_dir: Path, names: dict[str, str]) -> Path | None:
    """The model's vectors of this run as a file beside its results (maeb.benchmarks.lite.vectors):
    those of MAEB-lite's clips (names: clip files by content key) and of the texts in its cache."""
    from ...run.numeric_env import numeric_env
    from . import vectors

    payloads = [r.payload for r in summary.results if isinstance((r.payload.get("maeb") or {}).get("encoder"), dict)]
    if not payloads:
        return None
    encoder = payloads[0]["maeb"]["encoder"]
    cache = Path(cache_dir) / "embeddings" / encoder["cache"]
    if not cache.is_file():
        return None
    # MAEB-lite's clips and every text: a shared cache may hold the model's vectors of other data too
    found = {k: v for k, v in vectors.read_cache(cache).items() if k in names or k.startswith("t:")}
    if not found:
        return None
    meta_record = {
        "model": meta.name,
        "family": meta.family,
        "cache": encoder["cache"],
        "config": encoder.get("config"),
        "software": encoder.get("software"),
        "protocol": (payloads[0]["maeb"].get("protocol") or {}).get("name"),
        "texts": sum(1 for k in found if k.startswith("t:")),
        "numeric_env": numeric_env(),
    }
    return vectors.write(vectors.file_of(output_dir, meta.name), found, names, meta_record)


def leaderboard(output_dir: Path, borda: str = "mteb") -> str:
    """Write MAEB-lite's leaderboard (html, json, csv, with rank intervals) into `output_dir` and return it as Markdown;
    `borda` names the ranking rule (maeb.analysis.leaderboard.BORDA_RULES)."""
    from ...analysis.leaderboard import load_board
    from ...analysis.uncertainty import compute

    board, problems = load_board([output_dir], "MAEB-lite", {}, borda=borda)
    # each cell's stability band, and the ranks' intervals over the tasks and the bands
    board.uncertainty = compute(board, sources=("tasks", "bands")) if board.rows else None
    for fmt, name in (("html", "leaderboard.html"), ("json", "leaderboard.json"), ("csv", "leaderboard.csv")):
        write_text_atomic(output_dir / name, render(board, fmt, results=[output_dir]))
    text = to_markdown(board, per_task=False) + "\n" + to_markdown_by_task(board)
    write_text_atomic(output_dir / "leaderboard.md", text)
    return text


def reference_dir() -> Path:
    """The committed reference run (results/maeb-lite in a checkout, packaged with maeb)."""
    return catalog.catalog_dir("results") / "maeb-lite"


def main(
    folder: Path | None,
    seed: int,
    models: list[str] | None,
    output_dir: Path,
    cache_dir: Path | None,
    force: bool,
    show_progress: bool,
    build_only: bool = False,
    check: bool = False,
    reference: Path | None = None,
    tolerance: float = 1e-6,
    tasks: list[str] | None = None,
    stability_replays: int | str | None = None,
    debug: bool = False,
    protocol: str | None = None,
    borda: str = "mteb",
) -> int:
    """`maeb lite`: build the synthetic data if needed, run the models on the MAEB-lite tasks, write the leaderboard, and with
    `check` compare against the reference results."""
    started = time.perf_counter()
    cache_dir = Path(cache_dir or default_cache_dir())
    folder = Path(folder or under_cache(cache_dir))  # (the command line passes $MAEB_LITE_DIR as the folder)
    options = {"tasks": tasks, "stability_replays": stability_replays, "debug": debug, "protocol": protocol, "borda": borda}
    return _main(
        folder,
        seed,
        models,
        output_dir,
        cache_dir,
        force,
        show_progress,
        build_only,
        check,
        reference,
        tolerance,
        started,
        options,
    )


def _check_reference(reference: Path, tolerance: float) -> None:
    """What --check compares with, before anything runs: a reference without result files would
    fail every cell as 'not in the reference' after the whole run, a negative or NaN tolerance every number."""
    from ...core.errors import MaebError

    if not any(p.name != "model_meta.json" for p in reference.glob("*/*/*.json")):
        raise MaebError(
            f"--reference {reference} holds no result files (ORG__MODEL/REVISION/TASK.json); point it at a MAEB-lite run's folder"
        )
    if not (isinstance(tolerance, (int, float)) and 0 <= tolerance < math.inf):
        raise MaebError(f"--tolerance must be a number, 0 or more, not {tolerance!r}")


def _main(
    folder, seed, models, output_dir, cache_dir, force, show_progress, build_only, check, reference, tolerance, started, options
) -> int:
    reference = Path(reference or reference_dir())
    if check and not build_only:
        _check_reference(reference, tolerance)
    manifest = build(folder, seed=seed, force=force, log=_log)
    if build_only:
        return 0
    if Path(output_dir).resolve() == reference.resolve():
        from ...core.errors import MaebError

        raise MaebError(f"--output-dir {output_dir} is the reference run; write the run elsewhere (default runs/maeb-lite)")
    t_build = time.perf_counter() - started
    specs = lite_specs(options["tasks"])  # a wrong task name fails before anything runs
    names = [catalog.find_model(m).name for m in models or MODELS]
    seconds = evaluate(
        names,
        Path(output_dir),
        cache_dir,
        show_progress,
        folder,
        options["tasks"],
        options["stability_replays"],
        options["debug"],
        options.get("protocol"),
    )
    text = leaderboard(Path(output_dir), options.get("borda", "mteb"))
    print(text)
    total = time.perf_counter() - started
    clips = sum(manifest["clips"].values())
    _log(
        f"MAEB-lite: {clips} clips; data {t_build:.0f} s, models {', '.join(f'{k} {v} s' for k, v in seconds.items())}; total {total:.0f} s"
    )
    _log(f"results and leaderboard.{{md,html,json,csv}} in {output_dir}; open leaderboard.html in a browser to explore them")
    if check:
        from .verdict import check as staged_check
        from .verdict import report

        # only the cells this command ran: other models' or tasks' cells do not count as missing
        ran_models = None if models is None else names
        ran_tasks = None if options["tasks"] is None else [s.name for s in specs]
        verdict = staged_check(reference, Path(output_dir), folder, tolerance, ran_models, ran_tasks)
        print(report(verdict, reference, Path(output_dir)), end="")
        return 0 if verdict.passed else 1
    return 0
