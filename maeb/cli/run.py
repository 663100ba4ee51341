"""`maeb run`: one model on tasks or benchmarks: its flags (what to run, Ray's, and each
maeb.run.options.RunOptions field's own, in --help sections), the options they make, the run, and the
dry run's plan."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..core import environment
from ..core.errors import MaebError
from ..run.flags import CLI_GROUPS, judge_from_flags
from ..run.options import RunOptions, add_cli_arguments, cli_values, from_fronts
from .common import count, option_pairs

if TYPE_CHECKING:
    from ..core.taskspec import TaskSpec
    from ..run.options import ResolvedRun


# the choice between stopping and skipping, said once for --help and for the error line
NAMED_TASK_RULE = (
    "a task named with -t that the model cannot run (it lacks a side the task needs) stops the run with exit 2, "
    "where -b skips a benchmark's: a named task is asked for, a benchmark is a set the model may cover in part "
    "(drop the task, or use -b)"
)


def add_parser(sub) -> None:
    """The `run` subcommand's flags (its option flags generated from maeb.run.options.RunOptions), in
    --help sections by what a reader came to do (maeb.run.options.CLI_GROUPS)."""
    run = sub.add_parser("run", help="evaluate one model on tasks or a benchmark")
    groups = {key: run.add_argument_group(title) for key, title in CLI_GROUPS.items()}
    select = groups["select"]
    select.add_argument("-m", "--model", required=True, help="registered model name or alias, or a model entry .toml")
    select.add_argument("--model-revision", help="the model's revision, if not the registered one (a new identity)")
    select.add_argument(
        "-t",
        "--tasks",
        nargs="+",
        default=[],
        metavar="T",
        help=f"task names or task spec files; {NAMED_TASK_RULE}",
    )
    select.add_argument(
        "-b", "--benchmark", "--benchmarks", dest="benchmarks", nargs="+", default=[], metavar="B", help="registered benchmarks"
    )
    select.add_argument("--task-types", nargs="+", metavar="TYPE", help="only tasks of these types (maeb or mteb names)")
    select.add_argument(
        "--languages", nargs="+", metavar="LANG", help="only tasks (and subsets) in these languages (e.g. eng-Latn, eng)"
    )
    select.add_argument("--eval-splits", nargs="+", metavar="SPLIT", help="evaluate these splits instead of each task's own")
    add_cli_arguments(run, groups)  # one flag per maeb.run.options.RunOptions field (the judge: one per part)
    groups["behaviour"].add_argument("--verbose", action="store_true", help="also debugging notices")
    groups["behaviour"].add_argument(
        "--dry-run", action="store_true", help="print the plan (tasks, clips, hours, cached) and exit"
    )
    groups["ray"].add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run on a Ray cluster (e.g. 10.0.0.1:6379, or auto); without an address a local Ray instance is started",
    )
    groups["ray"].add_argument(
        "--ray-workers", type=int, metavar="N", help="model workers on Ray (default: one per GPU, or per CPU)"
    )


def run_options(args, task_count: int, needs_judge: bool = True) -> RunOptions:
    """The run's options from its flags (each RunOptions field's own flag; the judge from its parts'
    flags); $MAEB_CACHE_DIR and $MAEB_LITE_DIR are read here, by maeb.run.options.from_fronts."""
    values = cli_values(args)
    values["options"] = option_pairs(values["options"])
    values["judge"] = judge_from_flags(args, environment.judge(), needs_judge)  # (its variables read here, at a front)
    if values["raise_error"] is None:  # one task stops at once; several go on past a failed one
        values["raise_error"] = task_count == 1
    return from_fronts(values)


def cmd_run(args) -> int:
    """`maeb run`: one model on tasks or benchmarks (or its dry run, or on Ray); 2 when a task failed."""
    from ..run import runner
    from ..spec import catalog
    from ..spec.taskspec import distinct

    if not args.show_progress:
        _quiet_libraries()

    if not args.tasks and not args.benchmarks:
        raise MaebError("run needs --tasks or --benchmark")
    from dataclasses import replace

    from ..api import prepared, select_tasks

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
    from ..run.model import require_sides

    # a named task the model cannot run stops the dry run as it stops the run (a benchmark's are skipped)
    try:
        require_sides(meta, named, bool(args.judge_url or environment.judge()[0]))
    except MaebError as exc:
        raise type(exc)(f"{exc}; {NAMED_TASK_RULE}") from exc
    specs = distinct(named + from_benchmarks)
    from .. import tasktypes

    needs_judge = any("judge" in tasktypes.get(s.type).needs(s) for s in specs)
    cfg = run_options(args, len(specs), needs_judge)
    if args.ray_workers is not None and (not args.ray or args.ray_workers < 1):
        raise MaebError(
            f"--ray-workers {args.ray_workers}: "
            + ("applies to a --ray run; add --ray or drop it" if not args.ray else "give at least 1 model worker")
        )
    if args.ray:
        from ..run.distributed import require_ray

        require_ray()  # before anything is loaded or planned
    # every option checked and parsed once, before any model is loaded (a dry run opens no judge: a plain context)
    job = prepared(meta, specs, cfg, ray=bool(args.ray), dry_run=args.dry_run)
    if args.dry_run:
        return print_plan(job, specs)
    if args.ray:
        from ..run.distributed import run_on_ray

        summary = run_on_ray(meta, specs, job, address=args.ray, workers=args.ray_workers)
    else:
        summary = runner.run(meta, specs, job)
    share = summary.outside_forward_share()
    parts = [f"{count(len(summary.done), 'task')} evaluated", f"{len(summary.skipped_existing)} already done"]
    if summary.skipped_modality:
        parts.append(f"{len(summary.skipped_modality)} skipped (model lacks a side)")
    s = summary.stats
    parts.append(f"{count(s.clips_embedded, 'clip')} embedded, {s.clips_cached} from cache")
    if s.generated or s.generated_cached:
        parts.append(f"{count(s.generated, 'text')} generated, {s.generated_cached} from cache")
    if s.audio_generated or s.audio_generated_cached:
        parts.append(f"{count(s.audio_generated, 'clip')} generated, {s.audio_generated_cached} found beside the results")
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
    from ..run.plan import LONG_CLIP_SECONDS, plan

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
    todo = [r for r in rows if r["done"] is not True and not r["skip"] and not r["failed"]]
    print(
        f"total: {count(len(rows), 'task')}, {len(todo)} to run, {count(sum(r['clips'] for r in todo), 'clip')} "
        f"({sum(r['hours'] for r in todo):.2f} h of audio) to embed at most, "
        f"{count(sum(r['cached_clips'] for r in rows), 'clip')} already cached for {meta.name}"
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


COMMANDS = {"run": cmd_run}
