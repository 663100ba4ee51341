"""`maeb run`: one model on tasks or benchmarks: its flags (each maeb.run.options.RunOptions field's own,
the judge's, Ray's), the options they make, the run, and the dry run's plan."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..core import environment
from ..core.errors import MaebError
from ..run.options import RunOptions, add_cli_arguments, from_fronts, option_fields
from .common import count, option_pairs

if TYPE_CHECKING:
    from ..run.options import ResolvedRun
    from ..spec.taskspec import TaskSpec


def add_parser(sub) -> None:
    """The `run` subcommand's flags (its option flags generated from maeb.run.options.RunOptions)."""
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


def _judge_endpoint(args, needed: bool = True):
    """The judge from the --judge-* flags, else $MAEB_JUDGE_URL/$MAEB_JUDGE_MODEL. needed: whether a
    task of the run asks a judge; the variables alone do not stop a run that asks none (they are
    often exported once for every run), while flags typed on this command are checked all the same."""
    env_url, env_model = environment.judge()
    if not needed and not args.judge_url and not args.judge_model:
        return None
    url = args.judge_url or env_url
    model = args.judge_model or env_model
    if not url:
        return None
    if not model:
        given = "--judge-url" if args.judge_url else "MAEB_JUDGE_URL"
        wanted = "--judge-model" if args.judge_url else "--judge-model (or MAEB_JUDGE_MODEL)"
        raise MaebError(f"{given} needs {wanted}: the judge's name is recorded in every result")
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


def run_options(args, task_count: int, needs_judge: bool = True) -> RunOptions:
    """The run's options from its flags (each RunOptions field's own flag; the judge from the
    --judge-* flags); $MAEB_CACHE_DIR and $MAEB_LITE_DIR are read here, by maeb.run.options.from_fronts."""
    values = {f.name: getattr(args, f.name) for f in option_fields() if f.metadata["cli"] is not None}
    values["options"] = option_pairs(values["options"])
    values["judge"] = _judge_endpoint(args, needs_judge)
    if values["raise_error"] is None:  # one task stops at once; several go on past a failed one
        values["raise_error"] = task_count == 1
    return from_fronts(values)


def cmd_run(args) -> int:
    """`maeb run`: one model on tasks or benchmarks (or its dry run, or on Ray); 2 when a task failed."""
    from ..encoders.protocols import get_protocol
    from ..run.options import resolve
    from ..run.runner import plan_context, run
    from ..spec import catalog
    from ..spec.taskspec import distinct

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
    if args.dry_run:  # (a dry run opens no judge: a plain context)
        return print_plan(resolve(meta, cfg, ray=bool(args.ray), ctx=plan_context(cfg)), specs)
    job = resolve(meta, cfg, ray=bool(args.ray))  # every option checked and parsed once, before any model is loaded
    if args.ray:
        from ..run.distributed import run_on_ray

        summary = run_on_ray(meta, specs, job, address=args.ray, workers=args.ray_workers)
    else:
        summary = run(meta, specs, job)
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
