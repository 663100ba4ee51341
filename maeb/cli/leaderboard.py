"""`maeb leaderboard`: rank the models of result folders or a main_scores.csv."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import MaebError
from .common import count


def add_parser(sub) -> None:
    """The `leaderboard` subcommand's flags."""
    board = sub.add_parser("leaderboard", help="rank models from result folders or a main_scores.csv")
    board.add_argument("--results", nargs="+", type=Path, required=True, help="results folders (mteb layout) or CSV files")
    board.add_argument("--benchmark", help="restrict to a benchmark's tasks (default: every task found)")
    board.add_argument("--format", choices=["md", "csv", "json", "html", "tex"], default="md")
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
    add_borda(board)
    board.add_argument(
        "--view",
        nargs="+",
        choices=["ranks", "types", "tasks"],
        help="tex: the tables to write, in this order (default: ranks, types and tasks; --per-task rows puts the "
        "tasks table's tasks in rows)",
    )
    board.add_argument(
        "--intervals",
        action="store_true",
        help="tex: each rank's interval and each task score's band and few-shot range (computes --uncertainty, "
        "1000 draws unless given)",
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


BORDA_HELP = (
    "Borda rule: mteb (n_models - rank, a missing task scores 0; the public board) or paper (points only against "
    "the models that ran each task)"
)


def add_borda(parser) -> None:
    """--borda, shared by `leaderboard` and `lite` (maeb.analysis.leaderboard.BORDA_RULES)."""
    from ..analysis.leaderboard import BORDA_RULES

    parser.add_argument("--borda", choices=list(BORDA_RULES), default="mteb", help=BORDA_HELP)


def _draws(text: str) -> int:
    """--uncertainty DRAWS: enough bootstrap draws for the 95% intervals it reports."""
    from ..analysis.uncertainty import min_draws

    if not text.isdigit() or int(text) < min_draws():
        raise argparse.ArgumentTypeError(
            f"takes the number of bootstrap draws, at least {min_draws()} for a 95% interval (default 1000), not {text!r}"
        )
    return int(text)


def cmd_leaderboard(args) -> int:
    """`maeb leaderboard`: rank the models of result folders or a main_scores.csv."""
    from ..analysis.leaderboard import load_board, report_lines
    from ..analysis.report import render

    if args.uncertainty and args.format == "csv":
        raise MaebError("--uncertainty shows rank intervals and groups in md, html and json; csv has no columns for them")
    if (args.view or args.intervals) and args.format != "tex":
        flag = "--view" if args.view else "--intervals"
        raise MaebError(f"{flag} chooses what --format tex writes; md, html and json show intervals with --uncertainty")
    if args.intervals and not args.uncertainty:
        args.uncertainty = 1000  # the intervals are the bootstrap's (maeb.analysis.uncertainty)
    pins = dict(p.split("=", 1) for p in args.revision if "=" in p)
    board, problems = load_board(
        args.results, args.benchmark, pins, args.tasks, plain=args.plain, borda=getattr(args, "borda", "mteb")
    )
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
        for line in board.uncertainty.set_aside:  # values a result file holds that the metric cannot take
            print(f"maeb: uncertainty: {line}", file=sys.stderr)
        print(f"maeb: uncertainty: {board.uncertainty.summary()}", file=sys.stderr)
    text = render(board, args.format, args.per_task, args.results, args.view, args.intervals)
    if args.out:
        from ..results.write import write_text_atomic

        write_text_atomic(args.out, text)
        print(f"wrote {args.out} ({count(len(board.rows), 'model')}, {count(len(board.tasks), 'task')})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


COMMANDS = {"leaderboard": cmd_leaderboard}
