"""Leaderboard outputs: csv (one row per model), markdown, the leaderboard's JSON results file, and the
self-contained HTML page to explore them (maeb.analysis.page, with the figures of maeb.analysis.figures).

Per-task scores come in two orientations: "columns" (one column per task beside the means; csv
always has them) and "rows" (tasks as rows, models as columns: readable when models are few)."""

from __future__ import annotations

import csv
import datetime as _dt
import html
import io
import json
import re

from .. import __version__
from .leaderboard import BORDA_RULES, Board
from .tables import cell, csv_safe, html_table, markdown_table, md_text, pct


def count(n: int, noun: str) -> str:
    """'1 task', '3 tasks': what every count in maeb's output reads like."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _num(value, places: int = 6):
    return "" if value is None else round(float(value), places)


def _orientation(per_task) -> str | None:
    """None, "columns" or "rows"; True (the old flag) means columns."""
    if per_task in (None, False, ""):
        return None
    if per_task is True or per_task == "columns":
        return "columns"
    if per_task == "rows":
        return "rows"
    raise ValueError(f"per_task must be 'columns' or 'rows', got {per_task!r}")


def _title(board: Board) -> str:
    name = board.benchmark or "Results"
    if board.task_filter is not None:
        n = len(board.task_filter)
        name += f" (restricted to {n} task{'s' if n != 1 else ''})"
    return name


def _short_names(board: Board) -> list[str]:
    """Model names without their organisation, unless two models would then read the same."""
    short = [r.model.split("/")[-1] for r in board.rows]
    return short if len(set(short)) == len(short) else [r.model for r in board.rows]


def to_csv(board: Board) -> str:
    """One row per model in board order: rank, means, per-type and per-task scores (6 places, empty where missing)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    task_names = [t.name for t in board.tasks]
    fragile = _any_fragile(board)  # the column only where a cell is fragile (as the JSON's key)
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
                _num(r.mean_task),
                _num(r.mean_tasktype),
                r.n_tasks,
                *(_num(r.types.get(t)) for t in board.types),
                *(_num(r.tasks.get(t)) for t in task_names),
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
    fragile = _any_fragile(board)
    head = ["task", "type", "category", "domains", *(csv_safe(r.model) for r in board.rows), "tie_dependent"]
    writer.writerow(head + (["fragile"] if fragile else []))
    for t in board.tasks:
        tied = csv_safe(";".join(r.model for r in board.rows if t.name in r.tie_dependent))
        described = [csv_safe(t.name), t.type, t.category or "", csv_safe(";".join(t.domains))]
        marked = [csv_safe(";".join(r.model for r in board.rows if t.name in r.fragile))] if fragile else []
        writer.writerow([*described, *(_num(r.tasks.get(t.name)) for r in board.rows), tied, *marked])
    return buf.getvalue()


def to_json(board: Board) -> dict:
    """The leaderboard's JSON results file: tasks, per-model ranks, means and scores (6 places), the
    uncertainty where computed; `generated` is the time of writing in UTC. A task's chance and majority
    levels (None where its results record none), why it separates no models (None where it does) and,
    where they record one, each model's label-shuffled control per task (the model's `shuffled`: a
    control belongs to a model's run, never to the task). Where any cell is fragile (maeb.stability), each
    model's `fragile` says per task whether its score is; absent, none is."""
    from .baselines import board_baselines
    from .cards import shuffled_controls

    base, shuffled = board_baselines(board), shuffled_controls(board)
    flat = _flat(board, base)
    fragile = _any_fragile(board)
    return {
        "benchmark": board.benchmark,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "maeb_version": __version__,
        "tasks": [
            {
                "name": t.name,
                "type": t.type,
                "category": t.category,
                "group": t.group,
                "domains": list(t.domains),
                "languages": list(t.languages),
                "family": t.family,
                "main_score": t.main_score,
                "chance": _num(base[t.name][0]) if t.name in base else None,
                "majority": _num(base[t.name][1]) if t.name in base else None,
                "not_separating": flat.get(t.name),
            }
            for t in board.tasks
        ],
        "types": board.types,
        "domains": board.domains,
        "missing_tasks": board.missing_tasks,
        "task_filter": board.task_filter,
        "borda_rule": board.borda,  # the rule that ranked the models (maeb.analysis.leaderboard.BORDA_RULES)
        "models": [
            {
                "model": r.model,
                "revisions": r.revisions,
                "rank_borda": r.rank,
                "borda_points": round(r.points, 6),
                "mean_task": None if r.mean_task is None else _num(r.mean_task),
                "mean_tasktype": None if r.mean_tasktype is None else _num(r.mean_tasktype),
                "n_tasks": r.n_tasks,
                "types": {k: (None if v is None else _num(v)) for k, v in r.types.items()},
                "groups": {k: (None if v is None else _num(v)) for k, v in r.groups.items()},
                "domains": {k: (None if v is None else _num(v)) for k, v in r.domains.items()},
                "scores": {k: (None if v is None else _num(v)) for k, v in r.tasks.items()},
                "train_eval_shared_clips": dict(r.leaks),
                "tie_dependent": list(r.tie_dependent),
                **({"fragile": {t: t in r.fragile for t in r.tasks}} if fragile else {}),  # only where a cell is
                **_shuffled_of(shuffled, r.model),  # only where its runs recorded the control
            }
            for r in board.rows
        ],
        **({"uncertainty": board.uncertainty.as_dict()} if board.uncertainty is not None else {}),
    }


def _shuffled_of(shuffled: dict[tuple[str, str], float], model: str) -> dict:
    """A model's `shuffled` entry for the JSON file: task -> its control, or nothing where it recorded none."""
    mine = {t: _num(v) for (m, t), v in shuffled.items() if m == model}
    return {"shuffled": mine} if mine else {}


def _shuffled_text(shuffled: dict[tuple[str, str], float], model: str, task: str) -> str:
    """What follows a model's score on a task where its run recorded the label-shuffled control."""
    return f" (shuffled {pct(shuffled[(model, task)])})" if (model, task) in shuffled else ""


def _task_pct(board: Board, row, task: str) -> str:
    """A task score in %, with its interval when the board carries maeb.analysis.uncertainty's."""
    value = row.tasks.get(task)
    return board.uncertainty.cell_text(row.model, task, value) if board.uncertainty is not None else pct(value)


def _rank_columns(board: Board, row) -> list[str]:
    u = board.uncertainty
    return [] if u is None else [u.rank_text(row.model), str(u.group_of(row.model))]


LEAK_MARK = "†"  # a dagger: results scored with clips shared by the training and evaluation splits
TIE_MARK = "‡"  # a double dagger: a score that moves with the order of tied items (maeb.ties)
FLAT_MARK = "≈"  # after a task's name: its models are not separated (maeb.analysis.baselines.not_separating)
# a section sign after a score that rounding-level noise in the vectors moves by more than one item's share
# (the result's maeb.stability "fragile"); not a dagger, which LEAK_MARK already is
FRAGILE_MARK = "§"
FRAGILE_LEGEND = (
    f"{FRAGILE_MARK}: fragile: rounding-level noise in the vectors (another CPU) moves this score by more than one "
    "item's share; compare such cells with their band, not to the last digit"
)


def _any_fragile(board: Board) -> bool:
    return any(r.fragile for r in board.rows)


def _fragile(row, task: str) -> str:
    """FRAGILE_MARK after a task's score that the result's stability record calls fragile."""
    return FRAGILE_MARK if task in row.fragile else ""


def _fragile_note(board: Board) -> str:
    """The legend of FRAGILE_MARK, naming each model and task it marks; "" when nothing is marked."""
    marked = [f"{r.model} on {t}" for r in board.rows for t in r.fragile]
    return f"{FRAGILE_LEGEND} (the result's maeb.stability): {', '.join(marked)}." if marked else ""


def _tie(row, task: str | None = None) -> str:
    """TIE_MARK after a task's score (or a model, for any of its tasks) that depends on tie order."""
    return TIE_MARK if (task in row.tie_dependent if task is not None else row.tie_dependent) else ""


def _tie_note(board: Board) -> str:
    """The legend of TIE_MARK, naming each model and task it marks; "" when nothing is marked."""
    marked = [f"{r.model} on {t}" for r in board.rows for t in r.tie_dependent]
    if not marked:
        return ""
    return (
        f"{TIE_MARK} the score depends on the order of tied items by more than one query's (clip's, pair's) share: the "
        f"model gives several of them one score, and the order a machine's rounding puts them in decides points "
        f"(the result's maeb.ties holds the range; --protocol mteb-2.26-tie-aware scores the expected value): "
        f"{', '.join(marked)}."
    )


_EXPERIMENT = re.compile(r" \[[^\]]+\]$")  # "model [setting]": a run from mteb's experiments folder


def _experiment_note(board: Board) -> str:
    """What rows named "model [setting]" are, when the board has any; "" otherwise."""
    rows = [r.model for r in board.rows if _EXPERIMENT.search(r.model)]
    if not rows:
        return ""
    return (
        f"{count(len(rows), 'row')} named model [setting] {'is an experiment' if len(rows) == 1 else 'are experiments'}: "
        "runs under non-default settings (perturbation, long audio, resampler, options), ranked beside the plain runs; "
        "their means are empty where they lack tasks. `maeb leaderboard --plain` ranks the plain protocol only."
    )


def _leak_note(board: Board) -> str:
    """The footnote of LEAK_MARK, naming each model and task it marks; "" when nothing leaks."""
    marked = [f"{r.model} on {t} ({n} clip{'s' if n != 1 else ''})" for r in board.rows for t, n in r.leaks.items()]
    if not marked:
        return ""
    return (
        f"{LEAK_MARK} scored with clips byte-identical in the task's training and evaluation splits (a train/eval leak: "
        f"the probe saw test clips, so the score is optimistic): {', '.join(marked)}."
    )


def borda_line(board: Board) -> str:
    """The line under a ranked board naming the Borda rule that ranked it (its --borda name and what it counts)."""
    return f"Ranks: {BORDA_RULES[board.borda]} (--borda {board.borda})."


def to_markdown(board: Board, per_task=None) -> str:
    """The summary table; per_task "columns" (or True) adds a column per task, "rows" appends the
    tasks-as-rows table."""
    orientation = _orientation(per_task)
    head = ["Rank", "Model", "Mean (Task)", "Mean (TaskType)", "Tasks", *board.types]
    groups = sorted({g for r in board.rows for g in r.groups})
    head += [g.title() for g in groups] + [d.title() for d in board.domains]
    tasks = [t.name for t in board.tasks] if orientation == "columns" else []
    flat = _flat(board) if tasks else {}
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
        cells += [_task_pct(board, r, t) + (LEAK_MARK if t in r.leaks else "") + _tie(r, t) + _fragile(r, t) for t in tasks]
        rows.append(cells)
    lines = markdown_table(head, rows)
    title = (
        f"**{_title(board)}**: {count(len(board.rows), 'model')}, {count(len(board.tasks), 'task')}; scores in %, "
        "empty means = a task is missing."
    )
    if board.missing_tasks:
        title += f" No results at all for: {', '.join(board.missing_tasks)}."
    if board.uncertainty is not None:
        title += f" Uncertainty: {board.uncertainty.summary()}."
    # the title and notes name models and tasks too: escaped as the cells are
    text = md_text(title) + "\n\n" + "\n".join(lines) + "\n"
    text += "\n" + md_text(borda_line(board)) + "\n"
    fragile = _fragile_note(board) if tasks else ""  # (the tasks-as-rows table has its own)
    for note in (_experiment_note(board), _leak_note(board), _tie_note(board), fragile, _flat_note(flat)):
        if note:
            text += "\n" + md_text(note) + "\n"
    if orientation == "rows":
        text += "\n" + to_markdown_by_task(board)
    return text


def to_markdown_by_task(board: Board) -> str:
    """Tasks as rows and models as columns: readable when there are few models. Chance and Majority
    columns where results record baselines; a model's label-shuffled control, where its run recorded one,
    in brackets after its score (a control is the model's, not the task's)."""
    from .baselines import board_baselines
    from .cards import shuffled_controls

    base, shuffled = board_baselines(board), shuffled_controls(board)
    flat = _flat(board, base)
    rows = [
        [
            t.name + (f" {FLAT_MARK}" if t.name in flat else ""),
            t.type,
            *(
                (_task_pct(board, r, t.name) or "–")
                + (LEAK_MARK if t.name in r.leaks else "")
                + _tie(r, t.name)
                + _fragile(r, t.name)
                + _shuffled_text(shuffled, r.model, t.name)
                for r in board.rows
            ),
        ]
        for t in board.tasks
    ]
    head = ["Task", "Type", *_short_names(board)]
    if base:  # beside the scores, what chance and the majority class reach (maeb.baselines)
        head += ["Chance", "Majority"]
        for row, t in zip(rows, board.tasks):
            row += [pct(v) for v in base[t.name]] if t.name in base else ["–", "–"]
    notes = [n for n in (_fragile_note(board), _flat_note(flat), _clustering_note(board, base)) if n]
    return "\n".join(markdown_table(head, rows)) + "\n" + "".join("\n" + md_text(n) + "\n" for n in notes)


def _flat(board: Board, base: dict | None = None) -> dict[str, str]:
    """Task -> why its models are not separated (maeb.analysis.baselines.not_separating)."""
    from .baselines import not_separating

    return not_separating(board, base)


def _flat_note(flat: dict[str, str]) -> str:
    """The line under a board that names its tasks that separate no models, with the rule and each reason."""
    from .baselines import SEPARATION_RULE

    if not flat:
        return ""
    named = "; ".join(f"{t}: {why}" for t, why in flat.items())
    return f"{FLAT_MARK} not separating models ({SEPARATION_RULE}): {named}."


def _clustering_note(board: Board, base: dict) -> str:
    """What a clustering task's chance level means, under a board that shows one (it is no floor)."""
    from .baselines import CLUSTERING_CHANCE

    tasks = [t.name for t in board.tasks if t.type == "AudioClustering" and t.name in base]
    if not tasks:
        return ""
    below = [
        f"{t} (chance {pct(base[t][0])}, above {count(n, 'model')})"
        for t in tasks
        if (n := sum(r.tasks.get(t) is not None and r.tasks[t] < base[t][0] for r in board.rows))
    ]
    return CLUSTERING_CHANCE + (f" Here: {'; '.join(below)}." if below else "")


def _leak_span(row, task: str | None = None) -> str:
    """LEAK_MARK after a model (any of its tasks) or a score (that task), with its reason on hover."""
    leaks = row.leaks if task is None else {task: row.leaks[task]} if task in row.leaks else {}
    if not leaks:
        return ""
    why = "; ".join(
        f"{t}: {n} clip{'s' if n != 1 else ''} shared by the training and evaluation splits" for t, n in leaks.items()
    )
    return f' <span class="leak" title="{html.escape(why)}">{LEAK_MARK}</span>'


def _tie_span(row, task: str | None = None) -> str:
    """TIE_MARK after a model or a score that depends on the order of tied items, its reason on hover."""
    if not _tie(row, task):
        return ""
    why = "the score depends on the order of tied items: " + ", ".join(row.tie_dependent if task is None else [task])
    return f' <span class="ties" title="{html.escape(why)}">{TIE_MARK}</span>'


def _fragile_span(row, task: str) -> str:
    """FRAGILE_MARK after a fragile score, its reason on hover."""
    if not _fragile(row, task):
        return ""
    return f' <span class="fragile" title="{html.escape(FRAGILE_LEGEND)}">{FRAGILE_MARK}</span>'


def _tasks_table(board: Board) -> str:
    """Tasks as rows, models as columns."""
    from .baselines import board_baselines
    from .cards import shuffled_controls

    head = ["Task", "Type", *(r.model for r in board.rows)]
    base, shuffled = board_baselines(board), shuffled_controls(board)
    head += ["Chance", "Majority"] if base else []
    rows = []
    for t in board.tasks:
        cells = [cell(t.name, html.escape(t.name)), cell(t.type, html.escape(t.type))]
        cells += [
            cell(
                r.tasks.get(t.name),
                html.escape(_task_pct(board, r, t.name))
                + _leak_span(r, t.name)
                + _tie_span(r, t.name)
                + _fragile_span(r, t.name)
                + html.escape(_shuffled_text(shuffled, r.model, t.name)),  # the model's control, not the task's
            )
            for r in board.rows
        ]
        if base:  # beside the scores, what chance and the majority class reach (maeb.baselines)
            cells += [cell(v, pct(v)) for v in base.get(t.name, (None, None))]
        rows.append(cells)
    return "<h2>Tasks</h2>\n" + html_table(head, rows, "tasks")


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
