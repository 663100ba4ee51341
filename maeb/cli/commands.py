"""Command line: `python -m maeb run|list ...`, built from one module per subcommand (SUBCOMMANDS: each
declares its flags, `add_parser(sub)`, and its handlers, `COMMANDS`). Errors print one line and exit
with code 2."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable

from ..core import environment, trust
from ..core.errors import MaebError
from ..core.identity import redact
from . import analyses, check_model, datacard, describe, durations, leaderboard, listing, lite, plot, robust, run, submit

# the names this module held before the subcommands had modules of their own
from .analyses import cmd_compare, cmd_correlate, cmd_select, cmd_tradeoff
from .check_model import cmd_check_model
from .datacard import cmd_datacard
from .describe import cmd_describe
from .durations import cmd_durations
from .leaderboard import cmd_leaderboard
from .listing import cmd_list
from .lite import cmd_lite
from .plot import cmd_plot
from .robust import cmd_robust
from .run import cmd_run, print_plan, run_options
from .submit import cmd_submit

__all__ = [
    "COMMANDS",
    "SUBCOMMANDS",
    "build_parser",
    "main",
    "cmd_check_model",
    "cmd_compare",
    "cmd_correlate",
    "cmd_datacard",
    "cmd_describe",
    "cmd_durations",
    "cmd_leaderboard",
    "cmd_list",
    "cmd_lite",
    "cmd_plot",
    "cmd_robust",
    "cmd_run",
    "cmd_select",
    "cmd_submit",
    "cmd_tradeoff",
    "print_plan",
    "run_options",
]

# in the order `maeb --help` lists them
SUBCOMMANDS = (run, leaderboard, plot, analyses, robust, durations, datacard, lite, listing, check_model, describe, submit)
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    name: handler for m in SUBCOMMANDS for name, handler in m.COMMANDS.items()
}


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one subparser per subcommand, each added by its module (run's option
    flags generated from maeb.run.options.RunOptions)."""
    parser = argparse.ArgumentParser(prog="maeb", description="Evaluate audio models on MAEB and related benchmarks.")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    for command in sub.choices.values():  # every subcommand may read specs and model entries
        command.add_argument(
            "--allow-code",
            action="store_true",
            help="let task specs and model entries import the modules they name (type or family = 'module:Class'), "
            "from the current folder too, and remote-code models run their weights' own code (trust_remote_code): "
            "only for files you trust (also: MAEB_ALLOW_CODE=1)",
        )
    return parser


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
    # set on every call, not only enabled: an earlier call in this process does not carry over
    trust.allow_code(bool(getattr(args, "allow_code", False)) or environment.allow_code())
    try:
        return COMMANDS[args.command](args)
    except MaebError as exc:
        print(f"maeb: error: {redact(str(exc))}", file=sys.stderr)  # an endpoint's credentials never reach the line
        return 2
    except KeyboardInterrupt:
        print("maeb: interrupted; finished tasks and embeddings are saved, run the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`maeb list ... | head`): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
