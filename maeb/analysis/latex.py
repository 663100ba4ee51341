"""`maeb leaderboard --format tex`: a paper's tables of a board, as LaTeX (booktabs rules, best per
column in bold, `--` where a score is missing, the Borda rule named in each caption).

Three views (VIEWS): "ranks" (Borda rank, points and the means), "types" (each model's mean per task
type) and "tasks" (each task's score; models as rows, or with per_task="rows" tasks as rows and
models as columns, the best per task then bold along its row). With `intervals` (the board carries
maeb.analysis.uncertainty's) a rank shows its interval and a task score its stability band (±) and
few-shot range ([low--high]).

The output is a fragment to \\input: it needs \\usepackage{booktabs} and \\usepackage{graphicx} (a
table wider than the line is scaled to it with \\resizebox), both in a plain LaTeX install (Debian's
texlive-latex-base and texlive-latex-recommended). Names are escaped here: a model or task name
holding _ & % # $ { } ~ ^ \\ < > | ' " ` -- reads as itself, never as markup; a character pdflatex
cannot print without other packages (Greek, CJK) is named in a comment atop the output and on stderr."""

from __future__ import annotations

import logging
import math
import unicodedata
from collections.abc import Sequence

from .leaderboard import BORDA_RULES, Board, Row

VIEWS = ("ranks", "types", "tasks")
MISSING = "--"
# a table wider than the line (30 tasks, long model names) is scaled down to it, a narrower one left as it is
# (graphicx's \width is the table's own width)
FIT = r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%"

# characters LaTeX reads as markup, and the text that prints each of them
_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",  # the default OT1 font prints < and > as ¡ and ¿
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    # what maeb's own text holds that pdflatex's utf8 input does not define
    "–": "--",
    "—": "---",
    "±": r"$\pm$",
    "\r": " ",
    "\n": " ",
    # the OT1 font makes ligatures of these (`` '' into curly quotes, !` ?` into inverted marks) and prints " as a
    # closing quote: a name holding them would print other characters
    "`": r"\textasciigrave{}",
    "'": r"\textquotesingle{}",
    '"': r"{\ttfamily\char34}",  # OT1 has no straight double quote but in its typewriter font
}
# characters above ASCII that pdflatex's utf8 input (LaTeX 2018 on, no other package) prints: Latin-1 and Latin
# Extended-A but for the few it leaves undefined, and common punctuation (tests/test_leaderboard_tex.py compiles
# them). Any other one (Greek, CJK, an emoji) stops pdflatex with "Unicode character ... not set up".
_PDFLATEX = ({chr(c) for c in range(0xA0, 0x180)} - set("\u0126\u0127\u0138\u013f\u0140\u0149\u0166\u0167\u017f")) | set(
    "\u2018\u2019\u201c\u201d\u2022\u2026\u20ac\u2122\u2190\u2192"
)
LOG = logging.getLogger("maeb")


def _char(ch: str, after: str) -> str:
    if ch in _SPECIALS:
        return _SPECIALS[ch]
    kind = unicodedata.category(ch)
    if kind == "Cc":  # a control character: pdflatex stops on ^^A
        return " "
    if kind in ("Cf", "Cs", "Co", "Cn"):  # invisible (a soft hyphen, a joiner) or no character at all
        return ""
    if ch == "-" and after == "-":
        return "-{}"  # -- and --- would print dashes: each hyphen stays one
    return ch


def escape(text: object) -> str:
    """Text that LaTeX prints as it reads: each special character replaced by the command printing it
    (a control character by a space, an invisible one left out)."""
    text = str(text)
    return "".join(_char(ch, text[i + 1 : i + 2]) for i, ch in enumerate(text))


def beyond_pdflatex(text: str) -> list[str]:
    """The characters of `text` (as escape() writes them) that pdflatex without other packages cannot print."""
    return sorted({ch for ch in text if ord(ch) > 0x7E and ch not in _PDFLATEX})


def _finite(value: float | None) -> float | None:
    """None for a missing value and for one that is no number to print (NaN, inf: never bold, never a cell)."""
    return None if value is None or not math.isfinite(value) else value


def _pct(value: float | None) -> str:
    value = _finite(value)
    return MISSING if value is None else f"{100 * value:.1f}"


def _bold_best(cells: list[str], values: list[float | None], lower_is_better: bool) -> list[str]:
    """`cells` with the best of `values` in bold (every cell tied with it at the shown precision); missing ones never."""
    shown = [None if v is None else round(v, 6) for v in values]
    present = [v for v in shown if v is not None]
    if not present:
        return cells
    best = min(present) if lower_is_better else max(present)
    return [rf"\textbf{{{c}}}" if v is not None and v == best else c for c, v in zip(cells, shown)]


def _rounded(value: float | None, scale: float = 100.0) -> float | None:
    """The value as its cell shows it (one decimal), so that two cells reading the same are both bold."""
    return None if value is None else round(scale * value, 1)


def _task_cell(board: Board, row: Row, task: str, intervals: bool) -> str:
    value = _finite(row.tasks.get(task))
    text = _pct(value)
    u = board.uncertainty
    if value is None or not intervals or u is None:
        return text
    found = u.cells.get((row.model, task))
    if found is not None and found.band:
        text += rf" $\pm${100 * found.band:.1f}"
    if found is not None and found.experiments:
        text += f" [{100 * found.low:.1f}--{100 * found.high:.1f}]"
    return text


def _type_lower_is_better(board: Board, kind: str) -> bool:
    """A type's mean ranks the smallest first only when every task of the type does (FD, KL, WER)."""
    tasks = [t for t in board.tasks if t.type == kind]
    return bool(tasks) and all(t.lower_is_better for t in tasks)


def _columns(rows: list[list[str]], bold: Sequence[str]) -> list[list[str]]:
    """Each column j of `rows` with its best cell bold as bold[j] says ('min', 'max'; '' for none), by the shown number."""
    out = [list(r) for r in rows]
    for j, how in enumerate(bold):
        if not how:
            continue
        values = [_number(r[j]) for r in rows]
        for i, text in enumerate(_bold_best([r[j] for r in rows], values, how == "min")):
            out[i][j] = text
    return out


def _number(text: str) -> float | None:
    """The leading number a cell shows ('81.2 $\\pm$0.3' -> 81.2); None for a missing cell."""
    head = text.split(" ", 1)[0]
    try:
        return float(head)
    except ValueError:
        return None


def _tabular(head: Sequence[str], rows: list[list[str]], align: str) -> list[str]:
    """A booktabs tabular: the header (escaped here), its rules and the rows (LaTeX already)."""
    lines = [rf"\begin{{tabular}}{{{align}}}", r"\toprule", " & ".join(rf"\textbf{{{escape(h)}}}" for h in head) + r" \\"]
    lines.append(r"\midrule")
    lines += [" & ".join(cells) + r" \\" for cells in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return [FIT, *lines, "}"]


def _table(board: Board, view: str, caption: str, head: Sequence[str], rows: list[list[str]], align: str) -> str:
    rule = board.borda
    text = (
        f"{escape(caption)} Scores in \\%; the best of each column in bold; {MISSING} = missing. "
        f"Ranks: {escape(BORDA_RULES[rule])} (\\texttt{{--borda {escape(rule)}}})."
    )
    lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{text}}}", rf"\label{{tab:maeb-{view}}}"]
    lines += _tabular(head, rows, align) + [r"\end{table}"]
    return "\n".join(lines) + "\n"


def _title(board: Board) -> str:
    name = board.benchmark or "Results"
    return f"{name}: {len(board.rows)} model{'s' if len(board.rows) != 1 else ''}, {len(board.tasks)} task{'s' if len(board.tasks) != 1 else ''}."


def ranks_table(board: Board, intervals: bool = False) -> str:
    """Rank (with its interval), model, Borda points, Mean (Task), Mean (TaskType) and tasks completed."""
    u = board.uncertainty if intervals else None
    head = [
        "Rank",
        *(["Rank interval"] if u is not None else []),
        "Model",
        "Borda points",
        "Mean (Task)",
        "Mean (TaskType)",
        "Tasks",
    ]
    rows = []
    for r in board.rows:
        cells = [str(r.rank)]
        cells += [u.rank_text(r.model).replace("–", "--")] if u is not None else []
        cells += [escape(r.model), f"{r.points:.1f}", _pct(r.mean_task), _pct(r.mean_tasktype), f"{r.n_tasks}/{len(board.tasks)}"]
        rows.append(cells)
    bold = ["min", *([""] if u is not None else []), "", "max", "max", "max", ""]
    align = "r" * (2 if u is not None else 1) + "l" + "r" * 4
    caption = f"{_title(board)} Borda ranks" + (f"; rank intervals: {u.summary()}" if u is not None else "") + "."
    return _table(board, "ranks", caption, head, _columns(rows, bold), align)


def types_table(board: Board) -> str:
    """Each model's mean per task type, then its Mean (TaskType), in board (rank) order."""
    head = ["Model", *board.types, "Mean (TaskType)"]
    rows = [[escape(r.model), *(_pct(r.types.get(t)) for t in board.types), _pct(r.mean_tasktype)] for r in board.rows]
    directions = ["min" if _type_lower_is_better(board, t) else "max" for t in board.types]
    bold = ["", *directions, "max"]
    caption = f"{_title(board)} Mean score per task type (a mean over a type's tasks; missing where a task is)."
    return _table(board, "types", caption, head, _columns(rows, bold), "l" + "r" * (len(head) - 1))


def tasks_table(board: Board, intervals: bool = False, per_task: str | None = None) -> str:
    """Each task's score: models as rows (tasks as columns), or with per_task="rows" tasks as rows and
    models as columns; the best model per task in bold either way."""
    shown = intervals and board.uncertainty is not None
    what = " with stability bands (±) and few-shot ranges ([low–high])" if shown else ""
    caption = f"{_title(board)} Score per task{what}."
    if per_task == "rows":
        head = ["Task", "Type", *(r.model.split("/")[-1] if _unique_short(board) else r.model for r in board.rows)]
        rows = []
        for t in board.tasks:
            cells = [_task_cell(board, r, t.name, shown) for r in board.rows]
            values = [_finite(r.tasks.get(t.name)) for r in board.rows]
            cells = _bold_best(cells, [_rounded(v) for v in values], t.lower_is_better)
            rows.append([escape(t.name), escape(t.type), *cells])
        return _table(board, "tasks", caption, head, rows, "ll" + "r" * len(board.rows))
    head = ["Model", *(t.name for t in board.tasks)]
    rows = [[escape(r.model), *(_task_cell(board, r, t.name, shown) for t in board.tasks)] for r in board.rows]
    bold = ["", *("min" if t.lower_is_better else "max" for t in board.tasks)]
    return _table(board, "tasks", caption, head, _columns(rows, bold), "l" + "r" * len(board.tasks))


def _unique_short(board: Board) -> bool:
    short = [r.model.split("/")[-1] for r in board.rows]
    return len(set(short)) == len(short)


def to_latex(board: Board, views: Sequence[str] = VIEWS, intervals: bool = False, per_task: str | None = None) -> str:
    """The tables of `views` (VIEWS, in the order given), one table environment each, after a comment
    naming the packages they need."""
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        from ..core.errors import MaebError

        raise MaebError(f"LaTeX view {unknown[0]!r}: choose among {', '.join(VIEWS)}")
    if intervals and board.uncertainty is None:
        from ..core.errors import MaebError

        # otherwise the tables come out without a single interval, as if none had been asked for
        raise MaebError(
            "LaTeX intervals: the board carries no uncertainty (set board.uncertainty = maeb.analysis.uncertainty.compute(board) first)"
        )
    parts = ["% maeb leaderboard --format tex: needs \\usepackage{booktabs} and \\usepackage{graphicx}\n"]
    for view in views:
        if view == "ranks":
            parts.append(ranks_table(board, intervals))
        elif view == "types":
            parts.append(types_table(board))
        else:
            parts.append(tasks_table(board, intervals, per_task))
    text = "\n".join(parts)
    beyond = beyond_pdflatex(text)
    if beyond:  # said once, in the file and on stderr, rather than as pdflatex's stop on the first of them
        shown = " ".join(beyond[:10]) + (" ..." if len(beyond) > 10 else "")
        note = f"names hold characters pdflatex cannot print without other packages ({shown}): compile with xelatex or lualatex"
        LOG.warning("LaTeX: %s", note)
        text = f"% {note}\n" + text
    return text
