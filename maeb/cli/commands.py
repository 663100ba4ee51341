"""Command line: `python -m maeb run|list ...`. Errors print one line and exit with code 2."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import environment
from ..core.errors import MaebError
from ..run.options import RunOptions, add_cli_arguments, from_fronts, option_fields
from ..run.options import parse_option as _option
from ..run.options import replays as _replays

if TYPE_CHECKING:
    from ..run.options import ResolvedRun
    from ..spec.taskspec import TaskSpec


def _options(pairs) -> dict:
    """--option pairs as a dict; a key given twice with two values is a mistake, not "the last wins"."""
    out: dict = {}
    for key, value in pairs or ():
        if key in out and out[key] != value:
            raise MaebError(f"--option {key} is given twice ({out[key]!r} and {value!r}); give it once")
        out[key] = value
    return out


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one subparser per subcommand (run's option flags generated from
    maeb.run.options.RunOptions)."""
    parser = argparse.ArgumentParser(prog="maeb", description="Evaluate audio models on MAEB and related benchmarks.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate one model on tasks or a benchmark")
    run.add_argument("-m", "--model", required=True, help="registered model name or alias, or a model entry .toml")
    run.add_argument("--model-revision", help="the model's revision, if not the registered one (a new identity)")
    run.add_argument("-t", "--tasks", nargs="+", default=[], metavar="T", help="task names or task spec files")
    run.add_argument(
        "-b", "--benchmark", "--benchmarks", dest="benchmarks", nargs="+", default=[], metavar="B", help="registered benchmarks"
    )
    run.add_argument("--task-types", nargs="+", metavar="TYPE", help="only tasks of these types (maeb or mteb names)")
    run.add_argument(
        "--languages", nargs="+", metavar="LANG", help="only tasks (and subsets) in these languages (e.g. eng-Latn, eng)"
    )
    run.add_argument("--eval-splits", nargs="+", metavar="SPLIT", help="evaluate these splits instead of each task's own")
    add_cli_arguments(run)  # one flag per maeb.run.options.RunOptions field
    run.add_argument("--verbose", action="store_true", help="also debugging notices")
    run.add_argument("--dry-run", action="store_true", help="print the plan (tasks, clips, hours, cached) and exit")
    run.add_argument("--judge-url", help="OpenAI-compatible base URL of the LLM judge (judge-scored tasks)")
    run.add_argument("--judge-model", help="the judge's model name, recorded in results")
    run.add_argument("--judge-key-env", default="OPENAI_API_KEY", help="environment variable holding the judge's API key")
    run.add_argument(
        "--judge-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="seconds to wait for one judge reply before the try counts as failed (default 120)",
    )
    run.add_argument(
        "--judge-retries",
        type=int,
        default=6,
        metavar="N",
        help="retries of one judge item after 429, 5xx, timeouts or connection errors (default 6)",
    )
    run.add_argument(
        "--judge-budget",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="most seconds one judge item may take over all its tries and waits, Retry-After included; "
        "then it fails alone, is recorded in judge_failed and asked again on a rerun (default 600)",
    )
    run.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run on a Ray cluster (e.g. 10.0.0.1:6379, or auto); without an address a local Ray instance is started",
    )
    run.add_argument("--ray-workers", type=int, metavar="N", help="model workers on Ray (default: one per GPU, or per CPU)")

    board = sub.add_parser("leaderboard", help="rank models from result folders or a main_scores.csv")
    board.add_argument("--results", nargs="+", type=Path, required=True, help="results folders (mteb layout) or CSV files")
    board.add_argument("--benchmark", help="restrict to a benchmark's tasks (default: every task found)")
    board.add_argument("--format", choices=["md", "csv", "json", "html"], default="md")
    board.add_argument("--out", type=Path, help="write here instead of printing")
    board.add_argument("--revision", action="append", default=[], metavar="MODEL=REV", help="use this revision of a model")
    board.add_argument("--tasks", nargs="+", metavar="T", help="only these tasks (names; with --benchmark, some of its tasks)")
    board.add_argument(
        "--per-task",
        nargs="?",
        const="columns",
        choices=["columns", "rows"],
        help="md/html/csv: a column per task (plain --per-task), or a table of tasks as rows and models as columns "
        "(json always holds every task's score)",
    )
    board.add_argument(
        "--plain",
        "--protocol-only",
        action="store_true",
        help="rank only runs of the plain protocol: leave out mteb's experiments folders (runs with --perturb, "
        "--long-audio, --resampler, --option ...), which are otherwise rows of their own, 'model [setting]'",
    )
    board.add_argument(
        "--uncertainty",
        nargs="?",
        const=1000,
        type=_draws,
        metavar="DRAWS",
        help="md/html/json: each rank's interval and the groups of models it cannot tell apart (bootstrap over tasks, "
        "the results' few-shot experiments and stability bands; default 1000 draws), task scores with their intervals",
    )

    sel = sub.add_parser("select", help="choose a non-redundant task subset (MAEB's procedure)")
    sel.add_argument("--results", nargs="+", type=Path, required=True)
    sel.add_argument("--pool", required=True, help="benchmark whose tasks form the pool, e.g. MAEB(extended)")
    sel.add_argument("--threshold", type=float, default=0.8)
    sel.add_argument("--sweep", nargs="*", type=float, help="report figures for several thresholds instead")
    sel.add_argument("--max-missing", type=int, default=10, help="drop models missing more tasks than this")
    sel.add_argument("--format", choices=["json", "md"], default="json")
    sel.add_argument("--out", type=Path)

    cmp_ = sub.add_parser("compare", help="correlation of per-model averages on two benchmarks")
    cmp_.add_argument("--results", nargs="+", type=Path, required=True)
    cmp_.add_argument("--benchmarks", nargs=2, required=True, metavar="NAME")

    trade = sub.add_parser("tradeoff", help="acoustic vs linguistic task groups, per model")
    trade.add_argument("--results", nargs="+", type=Path, required=True)
    trade.add_argument("--acoustic", nargs="+", default=["VoxPopuliGenderID"])
    trade.add_argument("--linguistic", nargs="+", default=["VoxPopuliLanguageID"])

    corr = sub.add_parser("correlate", help="Pearson r, Spearman rho and R^2 of per-model means against an external score")
    corr.add_argument("--results", nargs="+", type=Path, required=True, help="results folders (mteb layout) or CSV files")
    corr.add_argument("--external", type=Path, required=True, help="CSV of external scores, one row per model")
    corr_set = corr.add_mutually_exclusive_group(required=True)
    corr_set.add_argument("--tasks", nargs="+", metavar="T", help="the task set whose per-model mean is correlated")
    corr_set.add_argument(
        "--preset", choices=["maeb-llm"], help="maeb-llm: the MAEB+ classification tasks (the paper's MMAU setting)"
    )
    corr.add_argument("--model-column", default="model", help="the external CSV's model-name column (default: model)")
    corr.add_argument("--score-column", default="score", help="the external CSV's score column (default: score)")
    corr.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    corr.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resampling")
    corr.add_argument("--json", type=Path, metavar="OUT", help="also write the analysis as JSON here")
    corr.add_argument("--html", type=Path, metavar="OUT", help="also write an HTML page with a scatter plot here")

    from ..analysis import durations
    from ..benchmarks import robust  # (their flags are defined once, beside what they run)

    rob = sub.add_parser("robust", help="MAEB-robust: degradation curves of the offline models under perturbation ladders")
    robust.add_arguments(rob)
    dur = sub.add_parser("durations", help="score against clip duration, from results run with --duration-buckets")
    durations.add_arguments(dur)

    lite = sub.add_parser("lite", help="build MAEB-lite offline and evaluate the offline models on it (the main job)")
    lite.add_argument("action", nargs="?", choices=["all", "build"], default="all")
    lite.add_argument("--dir", type=Path, help="where the data goes (default: $MAEB_LITE_DIR or ~/.cache/maeb/maeb-lite)")
    lite.add_argument("--seed", type=int, default=0)
    lite.add_argument("--force", action="store_true", help="rebuild even if a build of this seed exists")
    lite.add_argument("--models", nargs="+", help="models to evaluate (default: the offline models and the MFCC baseline)")
    lite.add_argument(
        "--output-dir",
        type=Path,
        default=Path("runs/maeb-lite"),
        help="where results and leaderboards go (default: runs/maeb-lite; the committed reference stays untouched)",
    )
    lite.add_argument("--check", action="store_true", help="compare the run with the committed reference, cell by cell")
    lite.add_argument("--reference", type=Path, help="reference results to --check against (default: the committed run)")
    lite.add_argument("--tolerance", type=float, default=1e-6, help="largest score difference a --check accepts")
    lite.add_argument(
        "--tasks", nargs="+", metavar="T", help="only these MAEB-lite tasks (a --check then checks only their cells)"
    )
    lite.add_argument(
        "--stability-replays",
        type=_replays,
        metavar="N",
        help="probe refits on perturbed vectors per task, for each score's band (default 1; 0: none)",
    )
    lite.add_argument("--cache-dir", type=Path)
    lite.add_argument("--quiet", action="store_true")

    lst = sub.add_parser("list", help="list models, tasks or benchmarks")
    lst.add_argument("what", choices=["models", "tasks", "benchmarks", "protocols"])
    lst.add_argument("--benchmark", help="only the tasks of this benchmark")
    lst.add_argument("--json", action="store_true")
    lst.add_argument(
        "--published",
        action="store_true",
        help="models: only those with published MAEB results, and how many of them can run here",
    )

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

    desc = sub.add_parser("describe", help="the spec format: fields, transforms, derive kinds, task types and their parameters")
    desc.add_argument(
        "topic", nargs="?", help="a task type (maeb or mteb name), spec, transforms, derive or types; none: an overview"
    )
    desc.add_argument("--markdown", action="store_true", help="the whole reference as markdown (docs/spec-reference.md)")
    return parser


def _draws(text: str) -> int:
    """--uncertainty DRAWS: enough bootstrap draws for the 95% intervals it reports."""
    from ..analysis.uncertainty import min_draws

    if not text.isdigit() or int(text) < min_draws():
        raise argparse.ArgumentTypeError(
            f"takes the number of bootstrap draws, at least {min_draws()} for a 95% interval (default 1000), not {text!r}"
        )
    return int(text)


def _judge_endpoint(args):
    env_url, env_model = environment.judge()
    url = args.judge_url or env_url
    model = args.judge_model or env_model
    if not url:
        return None
    if not model:
        raise MaebError("--judge-url needs --judge-model (the judge's name is recorded in every result)")
    from ..encoders.chat import Endpoint

    if not url.startswith(("http://", "https://")):
        raise MaebError(
            f"--judge-url {url!r}: give the judge's base URL with http:// or https:// (e.g. https://api.openai.com/v1)"
        )
    for flag, value in (("--judge-timeout", args.judge_timeout), ("--judge-budget", args.judge_budget)):
        if not value > 0:
            raise MaebError(f"{flag} must be a positive number of seconds, got {value}")
    if args.judge_retries < 0:
        raise MaebError(f"--judge-retries must be 0 or more, got {args.judge_retries}")
    return Endpoint(
        url,
        model,
        args.judge_key_env,
        timeout=args.judge_timeout,
        retries=args.judge_retries,
        budget=args.judge_budget,
    )


def run_options(args, task_count: int) -> RunOptions:
    """The run's options from its flags (each RunOptions field's own flag; the judge from the
    --judge-* flags); $MAEB_CACHE_DIR and $MAEB_LITE_DIR are read here, by maeb.run.options.from_fronts."""
    values = {f.name: getattr(args, f.name) for f in option_fields() if f.metadata["cli"] is not None}
    values["options"] = _options(values["options"])
    values["judge"] = _judge_endpoint(args)
    if values["raise_error"] is None:  # one task stops at once; several go on past a failed one
        values["raise_error"] = task_count == 1
    return from_fronts(values)


def cmd_run(args) -> int:
    """`maeb run`: one model on tasks or benchmarks (or its dry run, or on Ray); 2 when a task failed."""
    from ..encoders.protocols import get_protocol
    from ..run.options import resolve
    from ..run.runner import plan_context, run
    from ..spec import catalog

    get_protocol(args.protocol)
    if not args.show_progress:
        _quiet_libraries()

    if not args.tasks and not args.benchmarks:
        raise MaebError("run needs --tasks or --benchmark")
    from dataclasses import replace

    from ..api import select_tasks

    meta = catalog.find_model(args.model)
    if args.model_revision is not None:
        if not args.model_revision.strip() or args.model_revision != args.model_revision.strip():
            raise MaebError(f"--model-revision takes a revision (a commit, tag or name), not {args.model_revision!r}")
        meta = replace(meta, revision=args.model_revision)
    benches = [catalog.find_benchmark(b) for b in args.benchmarks]
    named = select_tasks(args.tasks, types=args.task_types, languages=args.languages, eval_splits=args.eval_splits)
    from_benchmarks = select_tasks(benches, types=args.task_types, languages=args.languages, eval_splits=args.eval_splits)
    if (args.tasks or benches) and not (named or from_benchmarks):
        raise MaebError("no task is left after --task-types/--languages")
    from ..run.runner import require_sides

    # a named task the model cannot run stops the dry run as it stops the run (a benchmark's are skipped)
    require_sides(meta, named, bool(args.judge_url or environment.judge()[0]))
    specs = list({s.name: s for s in named + from_benchmarks}.values())
    cfg = run_options(args, len(specs))
    if args.ray_workers is not None and (not args.ray or args.ray_workers < 1):
        raise MaebError(
            f"--ray-workers {args.ray_workers}: "
            + ("applies to a --ray run; add --ray or drop it" if not args.ray else "give at least 1 model worker")
        )
    if args.ray:
        from ..run.distributed import require_ray

        require_ray()  # before anything is loaded or planned
    if args.dry_run:  # (a dry run opens no judge: a plain context)
        return print_plan(resolve(meta, cfg, ray=bool(args.ray), ctx=plan_context(cfg)), specs)
    job = resolve(meta, cfg, ray=bool(args.ray))  # every option checked and parsed once, before any model is loaded
    if args.ray:
        from ..run.distributed import run_on_ray

        summary = run_on_ray(meta, specs, job, address=args.ray, workers=args.ray_workers)
    else:
        summary = run(meta, specs, job)
    share = summary.outside_forward_share()
    parts = [f"{_count(len(summary.done), 'task')} evaluated", f"{len(summary.skipped_existing)} already done"]
    if summary.skipped_modality:
        parts.append(f"{len(summary.skipped_modality)} skipped (model lacks a side)")
    s = summary.stats
    parts.append(f"{_count(s.clips_embedded, 'clip')} embedded, {s.clips_cached} from cache")
    if s.generated or s.generated_cached:
        parts.append(f"{_count(s.generated, 'text')} generated, {s.generated_cached} from cache")
    if s.audio_generated or s.audio_generated_cached:
        parts.append(f"{_count(s.audio_generated, 'clip')} generated, {s.audio_generated_cached} found beside the results")
    if share is not None:
        parts.append(f"{100 * share:.0f}% of embedding time outside the encoder")
    if summary.failed:
        parts.append(f"{len(summary.failed)} failed: {', '.join(summary.failed)}")
    print(f"{meta.name}: " + "; ".join(parts) + f"; {summary.wall_seconds:.1f} s", file=sys.stderr)
    for message in summary.failed.values():  # nothing was written for these; the same command retries them
        print(f"failed: {message}", file=sys.stderr)
    return 2 if summary.failed else 0


def _quiet_libraries() -> None:
    """--quiet also silences the progress bars of the libraries maeb calls."""
    import logging

    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    try:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
    except ImportError:
        pass
    logging.getLogger("datasets").setLevel(logging.ERROR)


def print_plan(job: ResolvedRun, specs: list[TaskSpec]) -> int:
    """The dry run: what `run` would do for each task (clips, hours, cached, status) and the window
    policy in force, from the resolved run; 2 when a task would fail."""
    from ..run.runner import plan

    meta = job.meta
    rows = plan(meta, specs, job)
    width = max(len(r["task"]) for r in rows)
    print(f"{'task':{width}}  {'type':29}  subsets  {'clips':>8}  {'hours':>7}  {'cached':>8}  status")
    for r in rows:
        if r["failed"]:
            status = "fails (below)"
        elif isinstance(r["done"], str):
            status = f"stop: {r['done']} (--overwrite replaces it)"
        else:
            status = "done" if r["done"] else (f"skip: {r['skip']}" if r["skip"] else "to run")
        print(
            f"{r['task']:{width}}  {r['type']:29}  {r['subsets']:7}  {r['clips']:8}  {r['hours']:7.2f}  {r['cached_clips']:8}  {status}"
        )
    from ..run.runner import LONG_CLIP_SECONDS

    todo = [r for r in rows if r["done"] is not True and not r["skip"] and not r["failed"]]
    print(
        f"total: {_count(len(rows), 'task')}, {len(todo)} to run, {_count(sum(r['clips'] for r in todo), 'clip')} "
        f"({sum(r['hours'] for r in todo):.2f} h of audio) to embed at most, "
        f"{_count(sum(r['cached_clips'] for r in rows), 'clip')} already cached for {meta.name}"
    )
    policy = job.window
    in_force = (
        f"window policy {policy.canonical()} (--long-audio): clips longer than the model's window are embedded window by window"
        if policy.windowed
        else "window policy head: each clip is cut at the model's length cap (30 s for most families); "
        "--long-audio mean embeds all of a longer clip"
    )
    for source, long in (
        ("the catalog's longest", [r for r in rows if r["long_clips"] is None]),
        ("longest in the local folders", [r for r in rows if r["long_clips"] is not None]),
    ):
        long = sorted((r for r in long if r["longest_seconds"] > LONG_CLIP_SECONDS), key=lambda r: -r["longest_seconds"])
        if long:
            shown = ", ".join(
                f"{r['task']} {r['longest_seconds']:.0f} s"
                + ("" if r["long_clips"] is None else f" ({r['long_clips']} of {r['clips']} clips over {LONG_CLIP_SECONDS:g} s)")
                for r in long[:5]
            )
            more = f" and {len(long) - 5} more" if len(long) > 5 else ""
            print(f"long clips ({source}): {shown}{more}" + (f"; {in_force}" if in_force else ""))
            in_force = ""
    if in_force:
        print(f"long clips: none over {LONG_CLIP_SECONDS:g} s; {in_force}")
    for r in rows:  # as the run lists its failed tasks: the run would fail these and go on
        if r["failed"]:
            print(f"failed: {r['failed']}", file=sys.stderr)
    return 2 if any(r["failed"] for r in rows) else 0


def _count(n: int, noun: str) -> str:
    from ..analysis.report import count

    return count(n, noun)


def cmd_leaderboard(args) -> int:
    """`maeb leaderboard`: rank the models of result folders or a main_scores.csv."""
    from ..analysis.leaderboard import load_board, report_lines
    from ..analysis.report import render

    if args.uncertainty and args.format == "csv":
        raise MaebError("--uncertainty shows rank intervals and groups in md, html and json; csv has no columns for them")
    pins = dict(p.split("=", 1) for p in args.revision if "=" in p)
    board, problems = load_board(args.results, args.benchmark, pins, args.tasks, plain=args.plain)
    for line in report_lines(problems, board.notes):
        print(line, file=sys.stderr)
    if not board.rows:
        where = ", ".join(map(str, args.results))
        if board.tasks:  # scores were read, but every model lacks a subset or split of every task
            raise MaebError(
                f"results of {len(board.tasks)} task(s) under {where}, but no model has every subset and split of any "
                "of them (see the notes above)"
            )
        scope = args.benchmark or "any task"
        if args.tasks:
            scope += f" (tasks {', '.join(args.tasks)})"
        raise MaebError(f"no results for {scope} under {where}")
    if args.uncertainty:
        from ..analysis.uncertainty import compute

        board.uncertainty = compute(board, draws=args.uncertainty, extra_results=[p for p in args.results if p.is_dir()])
        print(f"maeb: uncertainty: {board.uncertainty.summary()}", file=sys.stderr)
    text = render(board, args.format, args.per_task)
    if args.out:
        from ..results.write import write_text_atomic

        write_text_atomic(args.out, text)
        print(f"wrote {args.out} ({_count(len(board.rows), 'model')}, {_count(len(board.tasks), 'task')})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _scores_for(results, task_names):
    """Valid scores of these tasks, one revision per model and task; what was left out goes to stderr."""
    from ..analysis.leaderboard import catalog_info, report_lines
    from ..results.read import choose_revisions, read_results
    from ..spec import catalog

    res = read_results(results, catalog_info, task_names)
    for line in report_lines(res.problems, res.notes):
        print(line, file=sys.stderr)
    registered = {m.name: m.revision for m in catalog.models().values()}
    return choose_revisions(res.scores, None, registered)


def cmd_select(args) -> int:
    """`maeb select`: a non-redundant task subset, by MAEB's procedure."""
    from ..analysis.leaderboard import task_infos
    from ..analysis.selection import score_matrix, select, sweep
    from ..spec import catalog

    pool = list(catalog.find_benchmark(args.pool).tasks)
    matrix = score_matrix(_scores_for(args.results, pool), pool, args.max_missing)
    if len(matrix.models) < 3:
        raise MaebError(f"selection needs scores of at least 3 models on {args.pool}; found {len(matrix.models)}")
    infos = task_infos(matrix.tasks)
    if args.sweep is not None:
        payload = {"pool": args.pool, "sweep": sweep(matrix, infos, args.sweep or [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9])}
    else:
        payload = {"pool": args.pool, "n_models": len(matrix.models), **select(matrix, infos, args.threshold).as_dict()}
    if args.format == "json":
        text = json.dumps(payload, indent=2) + "\n"
    elif "sweep" in payload:
        head = "| threshold | tasks | pearson r | spearman rho | speed-up |\n|---|---|---|---|---|\n"
        text = head + "".join(
            f"| {r['threshold']} | {r['n_tasks_selected']} | {r['pearson_r']} | {r['spearman_rho']} | {r['speedup']} |\n"
            for r in payload["sweep"]
        )
    else:
        v = payload["validation"]
        text = (
            f"Selected {len(payload['selected'])} of {v['n_tasks_pool']} tasks at rho > {args.threshold} "
            f"({v['n_models']} models): Pearson r {v['pearson_r']}, Spearman rho {v['spearman_rho']}, speed-up {v['speedup']}x\n\n"
            + "\n".join(f"- {t}" for t in payload["selected"])
            + "\n\nRemoved:\n\n"
            + "\n".join(f"- {r['task']} (with {r['redundant_with']}, rho {r['rho']}, {r['reason']})" for r in payload["removed"])
            + "\n"
        )
    if args.out:
        from ..results.write import write_text_atomic

        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_compare(args) -> int:
    """`maeb compare`: the correlation of per-model averages on two benchmarks."""
    from ..analysis.selection import compare_benchmarks
    from ..spec import catalog

    a, b = (list(catalog.find_benchmark(n).tasks) for n in args.benchmarks)
    result = compare_benchmarks(_scores_for(args.results, a + b), a, b)
    print(json.dumps({"benchmarks": args.benchmarks, **result}, indent=2))
    return 0


def cmd_tradeoff(args) -> int:
    """`maeb tradeoff`: acoustic against linguistic task groups, per model, as a markdown table."""
    from ..analysis.selection import tradeoff

    rows = tradeoff(_scores_for(args.results, args.acoustic + args.linguistic), args.acoustic, args.linguistic)
    print(f"| model | acoustic ({', '.join(args.acoustic)}) | linguistic ({', '.join(args.linguistic)}) | difference |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {100 * r['acoustic']:.1f} | {100 * r['linguistic']:.1f} | {100 * r['difference']:+.1f} |")
    return 0


def cmd_lite(args) -> int:
    """`maeb lite`: build MAEB-lite (in --dir, else $MAEB_LITE_DIR, else under the cache) and run the
    offline models on it, or check a run against the reference."""
    from ..benchmarks.lite.runner import main as lite_main

    folder = args.dir or environment.folder("MAEB_LITE_DIR")
    return lite_main(
        folder,
        args.seed,
        args.models,
        args.output_dir,
        args.cache_dir or environment.cache_dir(),
        args.force,
        not args.quiet and sys.stderr.isatty(),
        build_only=args.action == "build",
        check=args.check,
        reference=args.reference,
        tolerance=args.tolerance,
        tasks=args.tasks,
        stability_replays=args.stability_replays,
        debug=environment.debug(),
    )


def cmd_robust(args) -> int:
    """`maeb robust`: the folders from the flags, else from $MAEB_CACHE_DIR and $MAEB_LITE_DIR."""
    from ..benchmarks.robust import command

    return command(args, args.cache_dir or environment.cache_dir(), args.lite_dir or environment.folder("MAEB_LITE_DIR"))


def _list_protocols(as_json: bool) -> int:
    """The reference protocols and each family's settings, printed from maeb.encoders.protocols itself."""
    from ..encoders.protocols import DEFAULT_PROTOCOL, PROTOCOLS

    if as_json:
        rows = [
            {**p.describe(), "default": p.name == DEFAULT_PROTOCOL, "families": p.families, "notes": list(p.notes)}
            for p in PROTOCOLS.values()
        ]
        print(json.dumps(rows, indent=2))
        return 0
    for p in PROTOCOLS.values():
        print(f"{p.name}{' (default)' if p.name == DEFAULT_PROTOCOL else ''}: {p.reference}")
        probe = f"; probe {p.probe}, vectors of {p.embeds_as}" if p.probe != "mteb" else ""
        print(f"  resampler {p.resampler}; text documents {p.text_documents}{probe}")
        for family, table in p.families.items():
            for arch in table:
                merged = p.family_rules(family, None if arch == "*" else arch)
                label = family if arch == "*" else f"{family} [{arch}]"
                print(f"  {label:32} " + ", ".join(f"{k}={v}" for k, v in merged.items()))
        for note in p.notes:
            print(f"  note: {note}")
    return 0


def cmd_list(args) -> int:
    """`maeb list`: models, benchmarks, tasks or protocols, as lines or JSON."""
    from ..spec import catalog

    if args.what == "protocols":
        return _list_protocols(args.json)
    rows: list[dict[str, Any]]  # one JSON object per model, benchmark or task
    if args.what == "models":
        from ..encoders import runnable_problems

        rows = [
            {
                "name": m.name,
                "aliases": list(m.aliases),
                "family": m.family,
                "revision": m.revision,
                "n_parameters": m.n_parameters,
                "embed_dim": m.embed_dim,
                "modalities": list(m.modalities),
                "license": m.license,
                "published": m.published,
                "runnable": not problems,
                "not_runnable_because": problems,
            }
            for m in catalog.models().values()
            if m.published or not args.published
            for problems in [runnable_problems(m)]
        ]
    elif args.what == "benchmarks":
        rows = []
        for b in catalog.benchmarks().values():
            counts: dict[str, int] = {}  # (also the task list's, below)
            for spec in catalog.benchmark_specs(b):
                counts[spec.mteb_type] = counts.get(spec.mteb_type, 0) + 1
            rows.append({"name": b.name, "aliases": list(b.aliases), "n_tasks": len(b.tasks), "types": counts})
    else:
        specs = (
            catalog.benchmark_specs(catalog.find_benchmark(args.benchmark))
            if args.benchmark
            else [catalog.find_task(n) for n in catalog.task_names()]
        )
        rows = [
            {
                "name": s.name,
                "type": s.mteb_type,
                "category": s.category,
                "main_score": s.main_score,
                "domains": s.domains,
                "subsets": len(s.data.subsets),
                "source": s.data.path,
            }
            for s in specs
        ]
    if args.json:
        print(json.dumps(rows, indent=2))
        if args.what == "models" and args.published:
            print(_published_summary(rows), file=sys.stderr)
        return 0
    if args.what == "models":
        for r in rows:
            alias = f" ({', '.join(r['aliases'])})" if r["aliases"] else ""
            marks = (", published" if r["published"] else "") + ("" if r["runnable"] else ", not runnable here")
            print(f"{r['name']}{alias}  [{r['family']}, {'+'.join(r['modalities'])}, dim {r['embed_dim']}{marks}]")
        if args.published:
            print(_published_summary(rows))
    elif args.what == "benchmarks":
        for r in rows:
            types = ", ".join(f"{n} {t}" for t, n in sorted(r["types"].items()))
            print(f"{r['name']}: {_count(r['n_tasks'], 'task')} ({types})")
    else:
        counts = {}
        for r in rows:
            counts[r["type"]] = counts.get(r["type"], 0) + 1
            print(f"{r['name']}  [{r['type']}, {r['category']}, {r['main_score']}]")
        print(f"{_count(len(rows), 'task')}: " + ", ".join(f"{n} {t}" for t, n in sorted(counts.items())))
    return 0


def _published_summary(rows) -> str:
    runnable = sum(r["runnable"] for r in rows)
    return (
        f"{_count(len(rows), 'model')} with published MAEB results; {runnable} runnable here (their packages are installed; "
        "weights come from the hub, or a local copy given as --option path=...)"
    )


def cmd_check_model(args) -> int:
    """`maeb check-model`: check a model entry (load, config, sides, tiny tasks); 1 when a check failed."""
    from ..spec import catalog
    from .check_model import check_model

    if args.protocol:
        from ..encoders.protocols import get_protocol

        get_protocol(args.protocol)
    report = check_model(
        catalog.find_model(args.entry),
        tiny=args.tiny,
        device=args.device,
        options=_options(args.option),
        protocol=args.protocol,
        config_probes=not args.no_config_probes,
        tasks=not args.no_tasks,
        endpoints=environment.endpoints(),
    )
    return 1 if report.failed else 0


def cmd_describe(args) -> int:
    """`maeb describe`: the spec format's reference (a task type, transforms, derive kinds), or all as markdown."""
    from ..spec import describe

    if args.markdown and args.topic:
        raise MaebError("describe --markdown prints the whole reference; give no topic with it")
    sys.stdout.write(describe.markdown() if args.markdown else describe.text(args.topic))
    return 0


def _negative_values(argv: list[str]) -> list[str]:
    """`--flag -5,10` as `--flag=-5,10`: argparse takes a value that starts with '-' and is not a
    plain number for an unknown option, so the flag would silently fall back to its default."""
    out: list[str] = []
    for token in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and re.match(r"-[\d.]", token) and "," in token:
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv: list[str] | None = None) -> int:
    """The command line: run a subcommand; a maeb error is one line `maeb: error: ...` and exit code 2."""
    import logging

    from ..core.context import log_to_stderr

    args = build_parser().parse_args(_negative_values(sys.argv[1:] if argv is None else list(argv)))
    log_to_stderr(logging.DEBUG if getattr(args, "verbose", False) else logging.INFO)
    try:
        commands = {
            "run": cmd_run,
            "list": cmd_list,
            "leaderboard": cmd_leaderboard,
            "select": cmd_select,
            "compare": cmd_compare,
            "tradeoff": cmd_tradeoff,
            "correlate": lambda a: __import__("maeb.analysis.correlate").correlate.command(a),  # kept lazy like the rest
            "lite": cmd_lite,
            "robust": cmd_robust,
            "durations": lambda a: __import__("maeb.analysis.durations").durations.command(a),
            "check-model": cmd_check_model,
            "describe": cmd_describe,
        }
        return commands[args.command](args)
    except MaebError as exc:
        print(f"maeb: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("maeb: interrupted; finished tasks and embeddings are saved, run the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`maeb list ... | head`): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
