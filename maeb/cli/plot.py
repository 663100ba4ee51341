"""`maeb plot`: publication figures (PDF, SVG, PNG) from result folders or a main_scores.csv
(maeb.analysis.figures; needs the `plots` extra)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.errors import MaebError
from .common import count


def add_parser(sub) -> None:
    """The `plot` subcommand's flags."""
    plot = sub.add_parser("plot", help="publication figures (PDF, SVG, PNG) from result folders or a main_scores.csv")
    plot.add_argument("results", nargs="+", type=Path, help="results folders (mteb layout) or CSV files")
    plot.add_argument("--out", type=Path, required=True, help="folder the figures go to (created)")
    plot.add_argument("--benchmark", help="restrict to a benchmark's tasks (default: every task found)")
    plot.add_argument("--plain", action="store_true", help="leave out experiment rows (runs under non-default settings)")
    plot.add_argument("--draws", type=int, default=1000, help="bootstrap draws for the intervals (default 1000)")
    plot.add_argument("--format", nargs="+", choices=["pdf", "svg", "png"], default=["pdf", "svg", "png"], dest="formats")


def cmd_plot(args) -> int:
    """`maeb plot`: the board of the results, its uncertainty, then every figure the data allow."""
    from ..analysis import figures
    from ..analysis.cards import cards
    from ..analysis.leaderboard import load_board, report_lines
    from ..analysis.uncertainty import compute, min_draws

    for path in args.results:
        if not path.exists():
            raise MaebError(f"plot: no results at {path}")
    if args.draws < min_draws():
        raise MaebError(f"--draws: at least {min_draws()} for a 95% interval, not {args.draws}")
    figures.pyplot()  # the missing extra is the first thing said, before any work
    board, problems = load_board(args.results, args.benchmark, {}, plain=args.plain)
    for line in report_lines(problems, board.notes):
        print(line, file=sys.stderr)
    if not board.rows:
        raise MaebError(f"plot: no model has a complete task under {', '.join(map(str, args.results))}")
    board.uncertainty = compute(board, draws=args.draws, extra_results=[p for p in args.results if p.is_dir()])
    figs, skipped = figures.build(board, cards(board), args.results)
    written = figures.write(figs, args.out, args.formats)
    for why in skipped:
        print(f"maeb: plot: left out {why}", file=sys.stderr)
    print(
        f"wrote {count(len(figs), 'figure')} ({len(written)} files) to {args.out} "
        f"({count(len(board.rows), 'model')}, {count(len(board.tasks), 'task')})",
        file=sys.stderr,
    )
    return 0


COMMANDS = {"plot": cmd_plot}
