"""`maeb datacard TASK...`: each task's data card (maeb.analysis.datacard), as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path


def add_parser(sub) -> None:
    """The `datacard` subcommand's flags."""
    card = sub.add_parser("datacard", help="classes, durations, rates, duplicates, train/test overlap and capped clips of tasks")
    card.add_argument("tasks", nargs="+", metavar="TASK", help="task names or spec files (TOML)")
    card.add_argument("--json", action="store_true", help="print the cards as one JSON list")
    card.add_argument("--cap", type=float, default=30.0, metavar="SECONDS", help="the length cap counted (default 30)")
    card.add_argument("--cache-dir", type=Path, help="maeb's cache folder (default: $MAEB_CACHE_DIR or ~/.cache/maeb)")
    card.add_argument("--lite-dir", type=Path, help="MAEB-lite's data folder (default: under the cache folder)")


def cmd_datacard(args) -> int:
    """`maeb datacard`: load each task as a run would (building MAEB-lite first when needed) and print its card."""
    from ..analysis.datacard import datacard, render
    from ..api import select_tasks
    from ..benchmarks.offline import prepare
    from ..core.context import RunContext, default_cache_dir
    from ..core.errors import MaebError

    if args.cap <= 0:
        raise MaebError(f"--cap {args.cap:g}: give a positive number of seconds")
    specs = select_tasks(args.tasks)
    ctx = RunContext(cache_dir=args.cache_dir or default_cache_dir(), lite_dir=args.lite_dir)
    prepare(specs, ctx, lambda m: None)
    cards = [datacard(spec, ctx, cap=args.cap) for spec in specs]
    if args.json:
        print(json.dumps(cards, indent=1))
    else:
        print("\n".join(line for card in cards for line in render(card)))
    return 0


COMMANDS = {"datacard": cmd_datacard}
