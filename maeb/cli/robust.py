"""`maeb robust`: MAEB-robust (maeb.benchmarks.robust), with its folders from the flags or the environment."""

from __future__ import annotations

from ..core import environment


def add_parser(sub) -> None:
    """The `robust` subcommand's flags, defined beside what they run (maeb.benchmarks.robust)."""
    from ..benchmarks import robust

    rob = sub.add_parser("robust", help="MAEB-robust: degradation curves of the offline models under perturbation ladders")
    robust.add_arguments(rob)


def cmd_robust(args) -> int:
    """`maeb robust`: the folders from the flags, else from $MAEB_CACHE_DIR and $MAEB_LITE_DIR."""
    from ..benchmarks.robust import command

    return command(args, args.cache_dir or environment.cache_dir(), args.lite_dir or environment.folder("MAEB_LITE_DIR"))


COMMANDS = {"robust": cmd_robust}
