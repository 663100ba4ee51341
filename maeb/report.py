"""Leaderboard outputs: csv (one row per model), markdown, the leaderboard's JSON results file, and a
self-contained HTML page (sortable table, heatmap of models x task types, radar chart per model
over domains; inline SVG and a few lines of script, nothing fetched)."""

from __future__ import annotations

import csv
import datetime as _dt
import html
import io
import json
import math

from . import __version__
from .leaderboard import Board


def _num(value, places: int = 6):
    return "" if value is None else round(float(value), places)


def to_csv(board: Board) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    task_names = [t.name for t in board.tasks]
    writer.writerow(["model", "rank_borda", "mean_task", "mean_tasktype", "n_tasks", *board.types, *task_names])
    for r in board.rows:
        writer.writerow(
            [
                r.model,
                r.rank,
                _num(r.mean_task),
                _num(r.mean_tasktype),
                r.n_tasks,
                *(_num(r.types.get(t)) for t in board.types),
                *(_num(r.tasks.get(t)) for t in task_names),
            ]
        )
    return buf.getvalue()


def to_json(board: Board) -> dict:
    return {
        "benchmark": board.benchmark,
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "maeb_version": __version__,
        "tasks": [
            {
                "name": t.name,
                "type": t.type,
                "category": t.category,
                "group": t.group,
                "domains": list(t.domains),
                "languages": list(t.languages),
            }
            for t in board.tasks
        ],
        "types": board.types,
        "domains": board.domains,
        "missing_tasks": board.missing_tasks,
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
            }
            for r in board.rows
        ],
    }


def _pct(value) -> str:
    return "" if value is None else f"{100 * value:.1f}"


def to_markdown(board: Board, per_task: bool = False) -> str:
    head = ["Rank", "Model", "Mean (Task)", "Mean (TaskType)", "Tasks", *board.types]
    groups = sorted({g for r in board.rows for g in r.groups})
    head += [g.title() for g in groups] + [d.title() for d in board.domains]
    tasks = [t.name for t in board.tasks] if per_task else []
    head += tasks
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in board.rows:
        cells = [str(r.rank), r.model, _pct(r.mean_task), _pct(r.mean_tasktype), f"{r.n_tasks}/{len(board.tasks)}"]
        cells += [_pct(r.types.get(t)) for t in board.types] + [_pct(r.groups.get(g)) for g in groups]
        cells += [_pct(r.domains.get(d)) for d in board.domains] + [_pct(r.tasks.get(t)) for t in tasks]
        lines.append("| " + " | ".join(cells) + " |")
    title = f"**{board.benchmark or 'Results'}**: {len(board.rows)} models, {len(board.tasks)} tasks; scores in %, empty means = a task is missing."
    if board.missing_tasks:
        title += f" No results at all for: {', '.join(board.missing_tasks)}."
    return title + "\n\n" + "\n".join(lines) + "\n"


def to_markdown_by_task(board: Board) -> str:
    """Tasks as rows and models as columns: readable when there are few models."""
    names = [r.model.split("/")[-1] for r in board.rows]
    lines = ["| Task | Type | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for t in board.tasks:
        cells = [_pct(r.tasks.get(t.name)) or "–" for r in board.rows]
        lines.append(f"| {t.name} | {t.type} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _colour(value) -> str:
    if value is None:
        return "#eeeeee"
    v = max(0.0, min(1.0, float(value)))
    return f"hsl({int(10 + 110 * v)}, 65%, {int(85 - 35 * v)}%)"


def _heatmap(board: Board) -> str:
    cell_w, cell_h, left, top = 96, 22, 260, 110
    width, height = left + cell_w * len(board.types) + 10, top + cell_h * len(board.rows) + 10
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
                f"<title>{html.escape(r.model)} / {html.escape(t)}: {_pct(v) or 'missing'}</title></rect>"
            )
            parts.append(
                f'<text x="{left + j * cell_w + cell_w / 2}" y="{y + 15}" text-anchor="middle" font-size="10">{_pct(v)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


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


_SORT_SCRIPT = """
document.querySelectorAll('#leaderboard th').forEach(function (th, col) {
  th.addEventListener('click', function () {
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


def to_html(board: Board) -> str:
    head = ["Rank (Borda)", "Model", "Mean (Task)", "Mean (TaskType)", "Tasks", *board.types]
    rows = []
    for r in board.rows:
        cells = [
            (r.rank, str(r.rank)),
            (r.model, html.escape(r.model)),
            (r.mean_task, _pct(r.mean_task)),
            (r.mean_tasktype, _pct(r.mean_tasktype)),
            (r.n_tasks, str(r.n_tasks)),
        ]
        cells += [(r.types.get(t), _pct(r.types.get(t))) for t in board.types]
        tds = "".join(f'<td data-v="{"" if v is None else html.escape(str(v))}">{text}</td>' for v, text in cells)
        rows.append(f"<tr>{tds}</tr>")
    title = html.escape(board.benchmark or "maeb results")
    data = json.dumps(to_json(board)).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} leaderboard</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }}
table {{ border-collapse: collapse; font-size: 13px; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: right; }}
th {{ cursor: pointer; background: #f4f4f4; position: sticky; top: 0; }}
td:nth-child(2), th:nth-child(2) {{ text-align: left; white-space: nowrap; }}
.radars {{ display: flex; flex-wrap: wrap; gap: 8px; }}
</style></head>
<body>
<h1>{title}</h1>
<p>{len(board.rows)} models, {len(board.tasks)} tasks. Scores in %; Borda rank as in mteb; an empty mean means a task is missing.
Click a column to sort.</p>
<table id="leaderboard"><thead><tr>{"".join(f"<th>{html.escape(h)}</th>" for h in head)}</tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<h2>Task types</h2>
{_heatmap(board)}
<h2>Domains</h2>
<div class="radars" id="radars">{"".join(_radar(r, board.domains) for r in board.rows)}</div>
<script type="application/json" id="leaderboard-data">{data}</script>
<script>{_SORT_SCRIPT}</script>
</body></html>
"""


def render(board: Board, fmt: str) -> str:
    if fmt == "csv":
        return to_csv(board)
    if fmt == "json":
        return json.dumps(to_json(board), indent=2) + "\n"
    if fmt == "html":
        return to_html(board)
    return to_markdown(board)
