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
    plot.add_argument(
        "--width",
        default="page",
        help="the width figures are printed at: column (3.3 in), page (7 in, the default) or inches; text stays at 6 pt or more",
    )
    plot.add_argument(
        "--top", type=int, help="show at most the first N models of the board per figure (the rest named in a note under it)"
    )
    plot.add_argument(
        "--borda",
        choices=["mteb", "paper"],
        default="mteb",
        help="Borda rule: mteb (n_models - rank, a missing task scores 0; the public board) or paper (points only against the models that ran each task)",
    )


def cmd_plot(args) -> int:
    """`maeb plot`: the board of the results, its uncertainty, then every figure the data allow."""
    from ..analysis import figures
    from ..analysis.cards import cards
    from ..analysis.figlayout import width_inches
    from ..analysis.leaderboard import load_board, report_lines
    from ..analysis.uncertainty import compute, min_draws

    for path in args.results:
        if not path.exists():
            raise MaebError(f"plot: no results at {path}")
    if args.draws < min_draws():
        raise MaebError(f"--draws: at least {min_draws()} for a 95% interval, not {args.draws}")
    if args.top is not None and args.top < 1:
        raise MaebError(f"--top: at least 1 model, not {args.top}")
    width = width_inches(args.width)
    figures.pyplot()  # the missing extra is the first thing said, before any work
    board, problems = load_board(args.results, args.benchmark, {}, plain=args.plain, borda=args.borda)
    for line in report_lines(problems, board.notes):
        print(line, file=sys.stderr)
    if not board.rows:
        raise MaebError(f"plot: no model has a complete task under {', '.join(map(str, args.results))}")
    board.uncertainty = compute(board, draws=args.draws, extra_results=[p for p in args.results if p.is_dir()])
    figs, skipped = figures.build(board, cards(board), args.results, width, args.top)
    notes = [line for f in figs for line in f.notes]
    extras = [name for f in figs for name in f.extras]
    written = figures.write(figs, args.out, args.formats)
    for why in skipped:
        print(f"maeb: plot: left out {why}", file=sys.stderr)
    for line in notes:
        print(f"maeb: plot: {line} (at {width:g} in wide, 6 pt text, 9 in high at most; --top to choose)", file=sys.stderr)
    print(
        f"wrote {count(len(figs), 'figure')} ({len(written)} files) to {args.out} "
        f"({count(len(board.rows), 'model')}, {count(len(board.tasks), 'task')}; {width:g} in wide, {board.borda} Borda rule)"
        + (f"; beside them {', '.join(extras)}" if extras else ""),
        file=sys.stderr,
    )
    return 0


COMMANDS = {"plot": cmd_plot}
