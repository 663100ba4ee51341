"""What the board's formats write beside its scores: its title and counts, the marks after a model
or a score (a train/eval leak, tie order, fragility, tasks that separate no models) with the notes
that explain them, and the cells and tasks table the html page builds from them. The markdown and
csv writers (maeb.analysis.report) and the page (maeb.analysis.page) both read them from here."""

from __future__ import annotations

import html
import re

from .leaderboard import BORDA_RULES, Board
from .tables import cell, html_table, pct


def count(n: int, noun: str) -> str:
    """'1 task', '3 tasks': what every count in maeb's output reads like."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def num(value, places: int = 6):
    """A score for the JSON record: rounded to `places` digits, "" where the model has none."""
    return "" if value is None else round(float(value), places)


def board_title(board: Board) -> str:
    """The board's heading: its benchmark's name, saying so when a task filter narrowed it."""
    name = board.benchmark or "Results"
    if board.task_filter is not None:
        n = len(board.task_filter)
        name += f" (restricted to {n} task{'s' if n != 1 else ''})"
    return name


def task_pct(board: Board, row, task: str) -> str:
    """A task score in %, with its interval when the board carries maeb.analysis.uncertainty's."""
    value = row.tasks.get(task)
    return board.uncertainty.cell_text(row.model, task, value) if board.uncertainty is not None else pct(value)


def shuffled_text(shuffled: dict[tuple[str, str], float], model: str, task: str) -> str:
    """What follows a model's score on a task where its run recorded the label-shuffled control."""
    return f" (shuffled {pct(shuffled[(model, task)])})" if (model, task) in shuffled else ""


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


def any_fragile(board: Board) -> bool:
    """Whether any row carries a score its stability record calls fragile (the legend is then shown)."""
    return any(r.fragile for r in board.rows)


def fragile_mark(row, task: str) -> str:
    """FRAGILE_MARK after a task's score that the result's stability record calls fragile."""
    return FRAGILE_MARK if task in row.fragile else ""


def fragile_note(board: Board) -> str:
    """The legend of FRAGILE_MARK, naming each model and task it marks; "" when nothing is marked."""
    marked = [f"{r.model} on {t}" for r in board.rows for t in r.fragile]
    return f"{FRAGILE_LEGEND} (the result's maeb.stability): {', '.join(marked)}." if marked else ""


def tie_mark(row, task: str | None = None) -> str:
    """TIE_MARK after a task's score (or a model, for any of its tasks) that depends on tie order."""
    return TIE_MARK if (task in row.tie_dependent if task is not None else row.tie_dependent) else ""


def tie_note(board: Board) -> str:
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


def experiment_note(board: Board) -> str:
    """What rows named "model [setting]" are, when the board has any; "" otherwise."""
    rows = [r.model for r in board.rows if _EXPERIMENT.search(r.model)]
    if not rows:
        return ""
    return (
        f"{count(len(rows), 'row')} named model [setting] {'is an experiment' if len(rows) == 1 else 'are experiments'}: "
        "runs under non-default settings (perturbation, long audio, resampler, options), ranked beside the plain runs; "
        "their means are empty where they lack tasks. `maeb leaderboard --plain` ranks the plain protocol only."
    )


def leak_note(board: Board) -> str:
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


def flat_tasks(board: Board, base: dict | None = None) -> dict[str, str]:
    """Task -> why its models are not separated (maeb.analysis.baselines.not_separating)."""
    from .baselines import not_separating

    return not_separating(board, base)


def flat_note(flat: dict[str, str]) -> str:
    """The line under a board that names its tasks that separate no models, with the rule and each reason."""
    from .baselines import SEPARATION_RULE

    if not flat:
        return ""
    named = "; ".join(f"{t}: {why}" for t, why in flat.items())
    return f"{FLAT_MARK} not separating models ({SEPARATION_RULE}): {named}."


def clustering_note(board: Board, base: dict) -> str:
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


def leak_span(row, task: str | None = None) -> str:
    """LEAK_MARK after a model (any of its tasks) or a score (that task), with its reason on hover."""
    leaks = row.leaks if task is None else {task: row.leaks[task]} if task in row.leaks else {}
    if not leaks:
        return ""
    why = "; ".join(
        f"{t}: {n} clip{'s' if n != 1 else ''} shared by the training and evaluation splits" for t, n in leaks.items()
    )
    return f' <span class="leak" title="{html.escape(why)}">{LEAK_MARK}</span>'


def tie_span(row, task: str | None = None) -> str:
    """TIE_MARK after a model or a score that depends on the order of tied items, its reason on hover."""
    if not tie_mark(row, task):
        return ""
    why = "the score depends on the order of tied items: " + ", ".join(row.tie_dependent if task is None else [task])
    return f' <span class="ties" title="{html.escape(why)}">{TIE_MARK}</span>'


def fragile_span(row, task: str) -> str:
    """FRAGILE_MARK after a fragile score, its reason on hover."""
    if not fragile_mark(row, task):
        return ""
    return f' <span class="fragile" title="{html.escape(FRAGILE_LEGEND)}">{FRAGILE_MARK}</span>'


def tasks_table(board: Board) -> str:
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
                html.escape(task_pct(board, r, t.name))
                + leak_span(r, t.name)
                + tie_span(r, t.name)
                + fragile_span(r, t.name)
                + html.escape(shuffled_text(shuffled, r.model, t.name)),  # the model's control, not the task's
            )
            for r in board.rows
        ]
        if base:  # beside the scores, what chance and the majority class reach (maeb.baselines)
            cells += [cell(v, pct(v)) for v in base.get(t.name, (None, None))]
        rows.append(cells)
    return "<h2>Tasks</h2>\n" + html_table(head, rows, "tasks")
