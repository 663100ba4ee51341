"""Leaderboard outputs: csv (one row per model), markdown, the leaderboard's JSON results file, and a
self-contained HTML page (sortable table, heatmap of models x task types, radar chart per model
over domains, bars where there are fewer than three; inline SVG and a few lines of script, nothing
fetched).

Per-task scores come in two orientations: "columns" (one column per task beside the means; csv
always has them) and "rows" (tasks as rows, models as columns: readable when models are few)."""

from __future__ import annotations

import csv
import datetime as _dt
import html
import io
import json
import math
import re

from .. import __version__
from .leaderboard import Board
from .tables import BODY_CSS, CELL_CSS, cell, csv_safe, html_page, html_table, json_script, markdown_table, pct


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
    writer.writerow(["model", "rank_borda", "mean_task", "mean_tasktype", "n_tasks", *board.types, *map(csv_safe, task_names)])
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
            ]
        )
    return buf.getvalue()


def to_csv_by_task(board: Board) -> str:
    """Tasks as rows, one column per model (the model's score; empty where it is missing)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["task", "type", "category", "domains", *(csv_safe(r.model) for r in board.rows)])
    for t in board.tasks:
        described = [csv_safe(t.name), t.type, t.category or "", csv_safe(";".join(t.domains))]
        writer.writerow([*described, *(_num(r.tasks.get(t.name)) for r in board.rows)])
    return buf.getvalue()


def to_json(board: Board) -> dict:
    """The leaderboard's JSON results file: tasks, per-model ranks, means and scores (6 places), the
    uncertainty where computed; `generated` is the time of writing in UTC."""
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
            }
            for t in board.tasks
        ],
        "types": board.types,
        "domains": board.domains,
        "missing_tasks": board.missing_tasks,
        "task_filter": board.task_filter,
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
            }
            for r in board.rows
        ],
        **({"uncertainty": board.uncertainty.as_dict()} if board.uncertainty is not None else {}),
    }


def _task_pct(board: Board, row, task: str) -> str:
    """A task score in %, with its interval when the board carries maeb.analysis.uncertainty's."""
    value = row.tasks.get(task)
    return board.uncertainty.cell_text(row.model, task, value) if board.uncertainty is not None else pct(value)


def _rank_columns(board: Board, row) -> list[str]:
    u = board.uncertainty
    return [] if u is None else [u.rank_text(row.model), str(u.group_of(row.model))]


LEAK_MARK = "†"  # a dagger: results scored with clips shared by the training and evaluation splits


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


def to_markdown(board: Board, per_task=None) -> str:
    """The summary table; per_task "columns" (or True) adds a column per task, "rows" appends the
    tasks-as-rows table."""
    orientation = _orientation(per_task)
    head = ["Rank", "Model", "Mean (Task)", "Mean (TaskType)", "Tasks", *board.types]
    groups = sorted({g for r in board.rows for g in r.groups})
    head += [g.title() for g in groups] + [d.title() for d in board.domains]
    tasks = [t.name for t in board.tasks] if orientation == "columns" else []
    head += tasks
    if board.uncertainty is not None:
        head[2:2] = ["Rank interval", "Group"]
    rows = []
    for r in board.rows:
        model = r.model + (f" {LEAK_MARK}" if r.leaks else "")
        cells = [str(r.rank), model, *_rank_columns(board, r), pct(r.mean_task), pct(r.mean_tasktype)]
        cells += [f"{r.n_tasks}/{len(board.tasks)}"]
        cells += [pct(r.types.get(t)) for t in board.types] + [pct(r.groups.get(g)) for g in groups]
        cells += [pct(r.domains.get(d)) for d in board.domains]
        cells += [_task_pct(board, r, t) + (LEAK_MARK if t in r.leaks else "") for t in tasks]
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
    text = title + "\n\n" + "\n".join(lines) + "\n"
    for note in (_experiment_note(board), _leak_note(board)):
        if note:
            text += "\n" + note + "\n"
    if orientation == "rows":
        text += "\n" + to_markdown_by_task(board)
    return text


def to_markdown_by_task(board: Board) -> str:
    """Tasks as rows and models as columns: readable when there are few models."""
    from .baselines import board_baselines

    rows = [
        [t.name, t.type, *((_task_pct(board, r, t.name) or "–") + (LEAK_MARK if t.name in r.leaks else "") for r in board.rows)]
        for t in board.tasks
    ]
    head = ["Task", "Type", *_short_names(board)]
    base = board_baselines(board)
    if base:  # beside the scores, what chance and the majority class reach (maeb.baselines)
        head += ["Chance", "Majority"]
        for row, t in zip(rows, board.tasks):
            row += [pct(v) for v in base[t.name]] if t.name in base else ["–", "–"]
    return "\n".join(markdown_table(head, rows)) + "\n"


def _colour(value) -> str:
    if value is None:
        return "#eeeeee"
    v = max(0.0, min(1.0, float(value)))
    return f"hsl({int(10 + 110 * v)}, 65%, {int(85 - 35 * v)}%)"


GLYPH_WIDTH = 0.62  # a generous average glyph width of a sans-serif font, in font sizes


def _heatmap(board: Board) -> str:
    """Models x task types; the margins are sized from the labels' text (column headers rotated by
    30 degrees, model names right-aligned), so no label runs off the picture."""
    cell_w, cell_h, font = 96, 22, 11
    slope = math.radians(30)
    header = [len(t) * GLYPH_WIDTH * font for t in board.types]
    left = max(260, int(max((len(r.model) for r in board.rows), default=0) * GLYPH_WIDTH * font) + 16)
    top = max(110, int(max(header, default=0) * math.sin(slope) + font + 16))
    reach = max((left + j * cell_w + cell_w / 2 + w * math.cos(slope) for j, w in enumerate(header)), default=0)
    width = int(max(left + cell_w * len(board.types), reach) + 10)
    height = top + cell_h * len(board.rows) + 10
    parts = [
        f'<svg id="heatmap" class="heatmap" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="models by task type">'
    ]
    for j, t in enumerate(board.types):
        x = left + j * cell_w + cell_w / 2
        parts.append(f'<text x="{x}" y="{top - 8}" transform="rotate(-30 {x} {top - 8})" font-size="11">{html.escape(t)}</text>')
    for i, r in enumerate(board.rows):
        y = top + i * cell_h
        parts.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end" font-size="11">{html.escape(r.model)}</text>')
        for j, t in enumerate(board.types):
            v = r.types.get(t)
            parts.append(
                f'<rect class="cell" x="{left + j * cell_w}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{_colour(v)}">'
                f"<title>{html.escape(r.model)} / {html.escape(t)}: {pct(v) or 'missing'}</title></rect>"
            )
            parts.append(
                f'<text x="{left + j * cell_w + cell_w / 2}" y="{y + 15}" text-anchor="middle" font-size="10">{pct(v)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _domain_bars(row, domains: list[str]) -> str:
    """One or two domains make no polygon: bars instead."""
    bar_w, left, height = 140, 90, 24 * len(domains) + 26
    parts = [
        f'<svg class="domain-bars" xmlns="http://www.w3.org/2000/svg" width="{left + bar_w + 50}" height="{height}" role="img" aria-label="{html.escape(row.model)} by domain">'
    ]
    for i, d in enumerate(domains):
        v = row.domains.get(d)
        y = 4 + 24 * i
        parts.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" font-size="10">{html.escape(d)}</text>')
        parts.append(
            f'<rect class="bar" x="{left}" y="{y}" width="{bar_w * max(0.0, min(1.0, v or 0.0)):.1f}" height="18" fill="#2864c8">'
            f"<title>{html.escape(row.model)} / {html.escape(d)}: {pct(v) or 'missing'}</title></rect>"
        )
        parts.append(f'<text x="{left + bar_w + 4}" y="{y + 14}" font-size="10">{pct(v) or "missing"}</text>')
    parts.append(f'<text x="4" y="{height - 4}" font-size="12">{html.escape(row.model)}</text></svg>')
    return "".join(parts)


def _domain_chart(row, domains: list[str]) -> str:
    return _radar(row, domains) if len(domains) >= 3 else _domain_bars(row, domains)


def _radar(row, domains: list[str]) -> str:
    size, radius = 220, 80
    cx = cy = size / 2
    parts = [
        f'<svg class="radar" xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size + 20}" role="img" aria-label="{html.escape(row.model)} by domain">'
    ]
    n = max(len(domains), 1)

    def point(i, value):
        angle = -math.pi / 2 + 2 * math.pi * i / n
        return cx + radius * value * math.cos(angle), cy + radius * value * math.sin(angle)

    for ring in (0.25, 0.5, 0.75, 1.0):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, ring) for i in range(n)))
        parts.append(f'<polygon points="{pts}" fill="none" stroke="#ccc"/>')
    for i, d in enumerate(domains):
        x, y = point(i, 1.18)
        parts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" font-size="10">{html.escape(d)}</text>')
    values = [row.domains.get(d) or 0.0 for d in domains]
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, v) for i, v in enumerate(values)))
    parts.append(f'<polygon class="score" points="{pts}" fill="rgba(40,110,200,0.35)" stroke="#2864c8"/>')
    parts.append(f'<text x="{cx}" y="{size + 14}" text-anchor="middle" font-size="12">{html.escape(row.model)}</text></svg>')
    return "".join(parts)


_CSS = (  # the leaderboard's table sorts by a click on its header, which stays in view
    BODY_CSS,
    "table { border-collapse: collapse; font-size: 13px; }",
    CELL_CSS,
    "th { cursor: pointer; background: #f4f4f4; position: sticky; top: 0; }",
    "td:nth-child(2), th:nth-child(2) { text-align: left; white-space: nowrap; }",
    "#tasks td:nth-child(1), #tasks th:nth-child(1) { text-align: left; white-space: nowrap; }",
    ".radars { display: flex; flex-wrap: wrap; gap: 8px; }",
)
_SORT_SCRIPT = """
document.querySelectorAll('#leaderboard th, #tasks th').forEach(function (th) {
  th.addEventListener('click', function () {
    var col = th.cellIndex;  // the column within its own table (there may be two tables)
    var body = th.closest('table').tBodies[0];
    var rows = Array.from(body.rows);
    var dir = th.dataset.dir === 'asc' ? -1 : 1;
    th.dataset.dir = dir === 1 ? 'asc' : 'desc';
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
      var nx = parseFloat(x), ny = parseFloat(y);
      if (isNaN(nx) && isNaN(ny)) return dir * String(x).localeCompare(String(y));
      if (isNaN(nx)) return 1;
      if (isNaN(ny)) return -1;
      return dir * (nx - ny);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
document.body.dataset.ready = 'yes';
"""


def _leak_span(row, task: str | None = None) -> str:
    """LEAK_MARK after a model (any of its tasks) or a score (that task), with its reason on hover."""
    leaks = row.leaks if task is None else {task: row.leaks[task]} if task in row.leaks else {}
    if not leaks:
        return ""
    why = "; ".join(
        f"{t}: {n} clip{'s' if n != 1 else ''} shared by the training and evaluation splits" for t, n in leaks.items()
    )
    return f' <span class="leak" title="{html.escape(why)}">{LEAK_MARK}</span>'


def _tasks_table(board: Board) -> str:
    """Tasks as rows, models as columns."""
    from .baselines import board_baselines

    head = ["Task", "Type", *(r.model for r in board.rows)]
    base = board_baselines(board)
    head += ["Chance", "Majority"] if base else []
    rows = []
    for t in board.tasks:
        cells = [cell(t.name, html.escape(t.name)), cell(t.type, html.escape(t.type))]
        cells += [cell(r.tasks.get(t.name), html.escape(_task_pct(board, r, t.name)) + _leak_span(r, t.name)) for r in board.rows]
        if base:  # beside the scores, what chance and the majority class reach (maeb.baselines)
            cells += [cell(v, pct(v)) for v in base.get(t.name, (None, None))]
        rows.append(cells)
    return "<h2>Tasks</h2>\n" + html_table(head, rows, "tasks")


def to_html(board: Board, per_task=None) -> str:
    """The self-contained leaderboard page: sortable table, notes, tasks table (per_task "rows"),
    heatmap of task types, a chart per model over domains and the JSON results file."""
    orientation = _orientation(per_task)
    task_cols = [t.name for t in board.tasks] if orientation == "columns" else []
    head = ["Rank (Borda)", "Model", "Mean (Task)", "Mean (TaskType)", "Tasks", *board.types, *task_cols]
    if board.uncertainty is not None:
        head[2:2] = ["Rank interval", "Group"]
    rows = []
    for r in board.rows:
        u = board.uncertainty
        cells = [
            (r.rank, str(r.rank)),
            (r.model, html.escape(r.model) + _leak_span(r)),
            *(
                []
                if u is None
                else [(u.rank_low[r.model], html.escape(u.rank_text(r.model))), (u.group_of(r.model), str(u.group_of(r.model)))]
            ),
            (r.mean_task, pct(r.mean_task)),
            (r.mean_tasktype, pct(r.mean_tasktype)),
            (r.n_tasks, str(r.n_tasks)),
        ]
        cells += [(r.types.get(t), pct(r.types.get(t))) for t in board.types]
        cells += [(r.tasks.get(t), html.escape(_task_pct(board, r, t)) + _leak_span(r, t)) for t in task_cols]
        rows.append([cell(v, text) for v, text in cells])
    title = html.escape(_title(board) if board.benchmark or board.task_filter is not None else "maeb results")
    if board.domains:
        domains = f'<div class="radars" id="radars">{"".join(_domain_chart(r, board.domains) for r in board.rows)}</div>'
    else:
        domains = '<p id="radars">No task of this board records a domain.</p>'
    tasks_table = _tasks_table(board) if orientation == "rows" else ""
    if board.uncertainty is not None:
        tasks_table = f'<p id="uncertainty">Uncertainty: {html.escape(board.uncertainty.summary())}.</p>\n{tasks_table}'
    body = f"""<h1>{title}</h1>
<p>{count(len(board.rows), "model")}, {count(len(board.tasks), "task")}. Scores in %; Borda rank as in mteb; an empty mean means a task is missing.
Click a column to sort.</p>
{html_table(head, rows, "leaderboard")}
{f'<p id="experiments">{html.escape(_experiment_note(board))}</p>' if _experiment_note(board) else ""}
{f'<p id="leaks">{html.escape(_leak_note(board))}</p>' if _leak_note(board) else ""}
{tasks_table}
<h2>Task types</h2>
{_heatmap(board)}
<h2>Domains</h2>
{domains}
{json_script("leaderboard-data", to_json(board))}
<script>{_SORT_SCRIPT}</script>"""
    return html_page(f"{title} leaderboard", _CSS, body)


def render(board: Board, fmt: str, per_task=None) -> str:
    """per_task: None, "columns" or "rows" (json always holds every task's score)."""
    orientation = _orientation(per_task)
    if fmt == "csv":
        return to_csv_by_task(board) if orientation == "rows" else to_csv(board)
    if fmt == "json":
        return json.dumps(to_json(board), indent=2) + "\n"
    if fmt == "html":
        return to_html(board, orientation)
    return to_markdown(board, orientation)
