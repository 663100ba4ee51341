"""Leaderboard outputs: csv (one row per model), markdown, the leaderboard's JSON results file, and the
self-contained HTML page to explore them (maeb.analysis.page, with the figures of maeb.analysis.figures).

Per-task scores come in two orientations: "columns" (one column per task beside the means; csv
always has them) and "rows" (tasks as rows, models as columns: readable when models are few)."""

from __future__ import annotations

import csv
import io
import json

from .boardjson import to_json
from .leaderboard import Board
from .notes import (
    FLAT_MARK,
    FRAGILE_MARK,
    LEAK_MARK,
    TIE_MARK,
    any_fragile,
    board_title,
    borda_line,
    clustering_note,
    count,
    experiment_note,
    flat_note,
    flat_tasks,
    fragile_mark,
    fragile_note,
    leak_note,
    num,
    shuffled_text,
    task_pct,
    tie_mark,
    tie_note,
)
from .tables import csv_safe, markdown_table, md_text, pct

# the marks, count and the JSON record live in .notes and .boardjson (which the page reads without
# this module); they stay readable here, where they were first written
__all__ = [
    "FLAT_MARK",
    "FRAGILE_MARK",
    "LEAK_MARK",
    "TIE_MARK",
    "borda_line",
    "count",
    "render",
    "to_csv",
    "to_csv_by_task",
    "to_json",
    "to_markdown",
    "to_markdown_by_task",
]


def _orientation(per_task) -> str | None:
    """None, "columns" or "rows"; True (the old flag) means columns."""
    if per_task in (None, False, ""):
        return None
    if per_task is True or per_task == "columns":
        return "columns"
    if per_task == "rows":
        return "rows"
    raise ValueError(f"per_task must be 'columns' or 'rows', got {per_task!r}")


def _short_names(board: Board) -> list[str]:
    """Model names without their organisation, unless two models would then read the same."""
    short = [r.model.split("/")[-1] for r in board.rows]
    return short if len(set(short)) == len(short) else [r.model for r in board.rows]


def to_csv(board: Board) -> str:
    """One row per model in board order: rank, means, per-type and per-task scores (6 places, empty where missing)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    task_names = [t.name for t in board.tasks]
    fragile = any_fragile(board)  # the column only where a cell is fragile (as the JSON's key)
    writer.writerow(
        [
            "model",
            "rank_borda",
            "mean_task",
            "mean_tasktype",
            "n_tasks",
            *board.types,
            *map(csv_safe, task_names),
            "borda_rule",  # a column, not a comment line: pandas.read_csv loads the file as it is
            "tie_dependent",  # the markers stay the last columns, as the docs say
            *(["fragile"] if fragile else []),
        ]
    )
    for r in board.rows:
        writer.writerow(
            [
                csv_safe(r.model),
                r.rank,
                num(r.mean_task),
                num(r.mean_tasktype),
                r.n_tasks,
                *(num(r.types.get(t)) for t in board.types),
                *(num(r.tasks.get(t)) for t in task_names),
                board.borda,
                csv_safe(";".join(r.tie_dependent)),  # the tasks whose score moves with the order of tied items
                *([csv_safe(";".join(r.fragile))] if fragile else []),  # the tasks whose score is fragile
            ]
        )
    return buf.getvalue()


def to_csv_by_task(board: Board) -> str:
    """Tasks as rows, one column per model (the model's score; empty where it is missing)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    fragile = any_fragile(board)
    head = ["task", "type", "category", "domains", *(csv_safe(r.model) for r in board.rows), "tie_dependent"]
    writer.writerow(head + (["fragile"] if fragile else []))
    for t in board.tasks:
        tied = csv_safe(";".join(r.model for r in board.rows if t.name in r.tie_dependent))
        described = [csv_safe(t.name), t.type, t.category or "", csv_safe(";".join(t.domains))]
        marked = [csv_safe(";".join(r.model for r in board.rows if t.name in r.fragile))] if fragile else []
        writer.writerow([*described, *(num(r.tasks.get(t.name)) for r in board.rows), tied, *marked])
    return buf.getvalue()


def _rank_columns(board: Board, row) -> list[str]:
    u = board.uncertainty
    return [] if u is None else [u.rank_text(row.model), str(u.group_of(row.model))]


def to_markdown(board: Board, per_task=None) -> str:
    """The summary table; per_task "columns" (or True) adds a column per task, "rows" appends the
    tasks-as-rows table."""
    orientation = _orientation(per_task)
    head = ["Rank", "Model", "Mean (Task)", "Mean (TaskType)", "Tasks", *board.types]
    groups = sorted({g for r in board.rows for g in r.groups})
    head += [g.title() for g in groups] + [d.title() for d in board.domains]
    tasks = [t.name for t in board.tasks] if orientation == "columns" else []
    flat = flat_tasks(board) if tasks else {}
    head += [t + (f" {FLAT_MARK}" if t in flat else "") for t in tasks]
    if board.uncertainty is not None:
        head[2:2] = ["Rank interval", "Group"]
    rows = []
    for r in board.rows:
        model = r.model + (f" {LEAK_MARK}" if r.leaks else "") + (f" {TIE_MARK}" if r.tie_dependent else "")
        cells = [str(r.rank), model, *_rank_columns(board, r), pct(r.mean_task), pct(r.mean_tasktype)]
        cells += [f"{r.n_tasks}/{len(board.tasks)}"]
        cells += [pct(r.types.get(t)) for t in board.types] + [pct(r.groups.get(g)) for g in groups]
        cells += [pct(r.domains.get(d)) for d in board.domains]
        cells += [
            task_pct(board, r, t) + (LEAK_MARK if t in r.leaks else "") + tie_mark(r, t) + fragile_mark(r, t) for t in tasks
        ]
        rows.append(cells)
    lines = markdown_table(head, rows)
    title = (
        f"**{board_title(board)}**: {count(len(board.rows), 'model')}, {count(len(board.tasks), 'task')}; scores in %, "
        "empty means = a task is missing."
    )
    if board.missing_tasks:
        title += f" No results at all for: {', '.join(board.missing_tasks)}."
    if board.uncertainty is not None:
        title += f" Uncertainty: {board.uncertainty.summary()}."
    # the title and notes name models and tasks too: escaped as the cells are
    text = md_text(title) + "\n\n" + "\n".join(lines) + "\n"
    text += "\n" + md_text(borda_line(board)) + "\n"
    fragile = fragile_note(board) if tasks else ""  # (the tasks-as-rows table has its own)
    for note in (experiment_note(board), leak_note(board), tie_note(board), fragile, flat_note(flat)):
        if note:
            text += "\n" + md_text(note) + "\n"
    if orientation == "rows":
        text += "\n" + to_markdown_by_task(board)
    return text


def to_markdown_by_task(board: Board) -> str:
    """Tasks as rows and models as columns: readable when there are few models. Chance and Majority
    columns where results record baselines; a model's label-shuffled control, where its run recorded one,
    in brackets after its score (a control is the model's, not the task's)."""
    from .baselines import board_baselines, board_chance_errors, chance_text
    from .cards import shuffled_controls

    base, shuffled = board_baselines(board), shuffled_controls(board)
    errors = board_chance_errors(board)
    flat = flat_tasks(board, base)
    rows = [
        [
            t.name + (f" {FLAT_MARK}" if t.name in flat else ""),
            t.type,
            *(
                (task_pct(board, r, t.name) or "–")
                + (LEAK_MARK if t.name in r.leaks else "")
                + tie_mark(r, t.name)
                + fragile_mark(r, t.name)
                + shuffled_text(shuffled, r.model, t.name)
                for r in board.rows
            ),
        ]
        for t in board.tasks
    ]
    head = ["Task", "Type", *_short_names(board)]
    if base:  # beside the scores, what chance and the majority class reach (maeb.baselines)
        head += ["Chance", "Majority"]
        for row, t in zip(rows, board.tasks):
            row += [chance_text(base[t.name][0], errors.get(t.name)), pct(base[t.name][1])] if t.name in base else ["–", "–"]
    notes = [n for n in (fragile_note(board), flat_note(flat), clustering_note(board, base)) if n]
    return "\n".join(markdown_table(head, rows)) + "\n" + "".join("\n" + md_text(n) + "\n" for n in notes)


def render(board: Board, fmt: str, per_task=None, results=(), views=None, intervals: bool = False) -> str:
    """per_task: None, "columns" or "rows" (json always holds every task's score); results: the folders read,
    where the html page finds robust.json for its figures; views and intervals: tex's tables (maeb.analysis.latex)."""
    orientation = _orientation(per_task)
    if fmt == "tex":
        from .latex import VIEWS, to_latex

        return to_latex(board, views or VIEWS, intervals, orientation)
    if fmt == "csv":
        return to_csv_by_task(board) if orientation == "rows" else to_csv(board)
    if fmt == "json":
        return json.dumps(to_json(board), indent=2) + "\n"
    if fmt == "html":
        from .page import to_html

        return to_html(board, orientation, results)
    return to_markdown(board, orientation)
