"""`maeb lite`: build MAEB-lite offline and evaluate the offline models on it (the main job), or check a
run against the committed reference."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core import environment
from ..run.options import replays as _replays
from .leaderboard import add_borda


def add_parser(sub) -> None:
    """The `lite` subcommand's flags."""
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
        help="replays on perturbed vectors per task, for each score's band (default 0: the check takes the bands from the reference; auto: 8 for every embedding type)",
    )
    lite.add_argument(
        "--protocol",
        help="reference protocol (default mteb-2.26; e.g. mteb-2.26-tie-aware: results go to the experiments folder; "
        "`maeb list protocols`)",
    )
    add_borda(lite)
    lite.add_argument("--cache-dir", type=Path)
    lite.add_argument("--quiet", action="store_true")


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
        protocol=args.protocol,
        borda=args.borda,
    )


COMMANDS = {"lite": cmd_lite}
