"""Command line: `python -m maeb run|list ...`. Errors print one line and exit with code 2."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import MaebError


def _option(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--option takes key=value, got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key, parsed


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="maeb", description="Evaluate audio models on MAEB and related benchmarks.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate one model on tasks or a benchmark")
    run.add_argument("--model", required=True, help="registered model name or alias, or a model entry .toml")
    run.add_argument("--tasks", nargs="+", default=[], metavar="T", help="task names or task spec files")
    run.add_argument("--benchmark", help="a registered benchmark (e.g. MAEB)")
    run.add_argument("--output-dir", type=Path, default=Path("results"), help="results root (default: results)")
    run.add_argument("--cache-dir", type=Path, help="embedding cache (default: $MAEB_CACHE_DIR or ~/.cache/maeb)")
    run.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    run.add_argument("--batch-size", type=int, default=16)
    run.add_argument("--workers", type=int, help="decoding threads (default: up to 4)")
    run.add_argument(
        "--on-bad-audio",
        choices=["error", "skip"],
        default="error",
        help="undecodable, empty or NaN clips: stop with an error (default) or skip them and record the count",
    )
    run.add_argument("--overwrite", action="store_true", help="re-run tasks that already have a result file")
    run.add_argument(
        "--option",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help='encoder option (e.g. window="clip"); changes the cache key and is recorded in results',
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.add_argument("--dry-run", action="store_true", help="print the plan (tasks, clips, hours, cached) and exit")

    lst = sub.add_parser("list", help="list models, tasks or benchmarks")
    lst.add_argument("what", choices=["models", "tasks", "benchmarks"])
    lst.add_argument("--benchmark", help="only the tasks of this benchmark")
    lst.add_argument("--json", action="store_true")
    return parser


def cmd_run(args) -> int:
    from . import catalog
    from .cache import default_cache_dir
    from .runner import RunConfig, run

    if not args.tasks and not args.benchmark:
        raise MaebError("run needs --tasks or --benchmark")
    meta = catalog.find_model(args.model)
    specs = [catalog.find_task(t) for t in args.tasks]
    if args.benchmark:
        specs += catalog.benchmark_specs(catalog.find_benchmark(args.benchmark))
    cfg = RunConfig(
        output_dir=args.output_dir,
        cache_dir=args.cache_dir or default_cache_dir(),
        device=args.device,
        batch_size=args.batch_size,
        workers=args.workers,
        on_bad_audio=args.on_bad_audio,
        overwrite=args.overwrite,
        show_progress=not args.quiet and sys.stderr.isatty(),
        strict_modalities=False,
        options=dict(args.option),
    )
    if args.dry_run:
        return print_plan(meta, specs, cfg)
    summary = run(meta, specs, cfg)
    share = summary.outside_forward_share()
    parts = [f"{len(summary.done)} tasks evaluated", f"{len(summary.skipped_existing)} already done"]
    if summary.skipped_modality:
        parts.append(f"{len(summary.skipped_modality)} skipped (model lacks a side)")
    s = summary.stats
    parts.append(f"{s.clips_embedded} clips embedded, {s.clips_cached} from cache")
    if share is not None:
        parts.append(f"{100 * share:.0f}% of embedding time outside the encoder")
    print(f"{meta.name}: " + "; ".join(parts) + f"; {summary.wall_seconds:.1f} s", file=sys.stderr)
    return 0


def print_plan(meta, specs, cfg) -> int:
    from .runner import plan

    rows = plan(meta, specs, cfg)
    width = max(len(r["task"]) for r in rows)
    print(f"{'task':{width}}  {'type':29}  subsets  {'clips':>8}  {'hours':>7}  {'cached':>8}  status")
    for r in rows:
        status = "done" if r["done"] else (f"skip: {r['skip']}" if r["skip"] else "to run")
        print(
            f"{r['task']:{width}}  {r['type']:29}  {r['subsets']:7}  {r['clips']:8}  {r['hours']:7.1f}  {r['cached_clips']:8}  {status}"
        )
    todo = [r for r in rows if not r["done"] and not r["skip"]]
    print(
        f"total: {len(rows)} tasks, {len(todo)} to run, {sum(r['clips'] for r in todo)} clips "
        f"({sum(r['hours'] for r in todo):.1f} h of audio) to embed at most, "
        f"{sum(r['cached_clips'] for r in rows)} clips already cached for {meta.name}"
    )
    return 0


def cmd_list(args) -> int:
    from . import catalog

    if args.what == "models":
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
            }
            for m in catalog.models().values()
        ]
    elif args.what == "benchmarks":
        rows = []
        for b in catalog.benchmarks().values():
            counts: dict[str, int] = {}
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
        return 0
    if args.what == "models":
        for r in rows:
            alias = f" ({', '.join(r['aliases'])})" if r["aliases"] else ""
            print(f"{r['name']}{alias}  [{r['family']}, {'+'.join(r['modalities'])}, dim {r['embed_dim']}]")
    elif args.what == "benchmarks":
        for r in rows:
            types = ", ".join(f"{n} {t}" for t, n in sorted(r["types"].items()))
            print(f"{r['name']}: {r['n_tasks']} tasks ({types})")
    else:
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["type"]] = counts.get(r["type"], 0) + 1
            print(f"{r['name']}  [{r['type']}, {r['category']}, {r['main_score']}]")
        print(f"{len(rows)} tasks: " + ", ".join(f"{n} {t}" for t, n in sorted(counts.items())))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return {"run": cmd_run, "list": cmd_list}[args.command](args)
    except MaebError as exc:
        print(f"maeb: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("maeb: interrupted; finished tasks and embeddings are saved, run the same command to resume", file=sys.stderr)
        return 130
