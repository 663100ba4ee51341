"""The leaderboard as a page to explore (`leaderboard --format html`, MAEB-lite's leaderboard.html): one
self-contained file, nothing fetched.

The table sits in a box that scrolls (sticky header and model column), so the page itself never runs off
the window; cells are shaded on one colour scale (its legend above the table) and say on hover where their
score comes from; a blank mean says where it is blank why it is blank. Filters choose the columns
(benchmark, task type, domain) and the rows (model, modality, size, licence, open weights, search); a click
on a row opens the model's card (maeb.analysis.cards) with its per-task scores and intervals. The
publication figures (maeb.analysis.figures) are embedded as SVG when matplotlib is installed."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable
from pathlib import Path

from .cards import Card, cards, provenance, shuffled_controls
from .leaderboard import Board
from .report import (
    FLAT_MARK,
    _clustering_note,
    _experiment_note,
    _flat,
    _flat_note,
    _fragile,
    _fragile_note,
    _fragile_span,
    _leak_note,
    _leak_span,
    _shuffled_text,
    _task_pct,
    _tasks_table,
    _tie_note,
    _tie_span,
    _title,
    count,
    to_json,
)
from .tables import BODY_CSS, json_script, pct

SIZES = ((1e8, "under 100M"), (1e9, "100M–1B"), (float("inf"), "1B and over"))

_CSS = (
    BODY_CSS,
    "body { max-width: 100%; } h1 { font-size: 1.5rem; } p, li { max-width: 60rem; line-height: 1.4; }",
    ".filters { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 0.5rem 0; font-size: 13px; }",
    ".filters label { display: flex; flex-direction: column; gap: 2px; }",
    ".filters select, .filters input { font-size: 13px; max-width: 12rem; }",
    ".tablebox { overflow: auto; max-width: 100%; max-height: 75vh; border: 1px solid #ccc; }",
    "table { border-collapse: separate; border-spacing: 0; font-size: 13px; }",
    "th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; text-align: right; white-space: nowrap; }",
    "thead th { position: sticky; top: 0; background: #f4f4f4; cursor: pointer; z-index: 2; vertical-align: bottom; }",
    # headers wrap (task type and task names at their capitals, <wbr>): long names no longer widen the table
    "thead th { white-space: normal; }",
    # model names break after '/', '-' or '_' (<wbr>), within a word only when nothing else fits
    "th.model, td.model { position: sticky; left: 0; background: #fff; text-align: left; z-index: 1;"
    " white-space: normal; overflow-wrap: anywhere; min-width: 13rem; max-width: 20rem; }",
    "@media (max-width: 600px) { th.model, td.model { min-width: 8rem; max-width: 10rem; } }",
    "thead th.model { z-index: 3; background: #f4f4f4; }",
    "tbody tr { cursor: pointer; } tbody tr:hover td { outline: 1px solid #999; }",
    "tr.baseline td.model::after { content: ' baseline'; font-size: 11px; color: #555; }",
    # chance and majority: under the models, grey and italic, no score shading, never sorted among them
    "tfoot td { background: #f1f1f1; color: #444; font-style: italic; border-top: 1px dashed #888; }",
    "tfoot td.model { background: #f1f1f1; } tfoot tr { cursor: default; }",
    "span.flat { color: #a33; cursor: help; }",
    "abbr.blank { color: #555; text-decoration: underline dotted; cursor: help; }",
    ".legend { display: flex; align-items: center; gap: 6px; font-size: 12px; flex-wrap: wrap; }",
    ".scale { width: 160px; height: 12px; border: 1px solid #999; }",
    "figure { margin: 1rem 0; max-width: 100%; } figure img { max-width: 100%; height: auto; }",
    "figcaption { font-size: 13px; color: #444; }",
    "dialog { width: min(46rem, 90vw); max-height: 88vh; overflow: auto; box-sizing: border-box; padding: 12px; }",
    "dialog h2 { font-size: 1.1rem; overflow-wrap: anywhere; }",
    # the card's table wraps its cells (provenance lines are long) rather than run off a phone's screen
    "dialog table { font-size: 12px; width: 100%; }",
    "dialog td, dialog th { white-space: normal; overflow-wrap: anywhere; text-align: left; }",
    "@media (max-width: 600px) { dialog td:nth-child(2), dialog th:nth-child(2) { display: none; } }",  # type: room for names
    "dl.card { display: grid; grid-template-columns: auto 1fr; gap: 2px 12px; font-size: 13px; }",
    "dl.card dd { margin: 0; overflow-wrap: anywhere; }",
)


def _colour(value: float | None, lower_is_better: bool = False) -> str:
    """A light blue whose depth rises with the score (0-1), dark text stays readable on it; none for others."""
    if value is None or lower_is_better or not 0.0 <= value <= 1.0:
        return ""
    return f' style="background: hsl(212, 70%, {97 - 42 * value:.0f}%)"'


def _size(n: int | None) -> str:
    if not n:
        return "unknown"
    return next(name for limit, name in SIZES if n < limit)


def _task_facts(board: Board) -> dict[str, str]:
    """A task's description for its header's hover: the catalog's text, type, domains and main score."""
    from ..core.errors import MaebError
    from ..spec import catalog

    out = {}
    for t in board.tasks:
        try:
            description = catalog.find_task(t.name).description if t.name in catalog.task_files() else ""
        except MaebError:
            description = ""
        facts = f"{t.type}; domains: {', '.join(t.domains) or 'none recorded'}; main score: {t.main_score or 'unknown'}"
        out[t.name] = f"{t.name}: {description.strip()} ({facts})" if description else f"{t.name} ({facts})"
    return out


def _benchmarks(board: Board) -> dict[str, list[str]]:
    """Each catalog benchmark that holds tasks of the board, with those tasks."""
    from ..spec import catalog

    names = {t.name for t in board.tasks}
    out = {}
    for bench in catalog.benchmarks().values():
        held = [t for t in bench.tasks if t in names]
        if held:
            out[bench.name] = held
    return out


def _blank(row, names: list[str]) -> str:
    """The cell of a mean that is blank: 'n/a', and on hover which tasks it lacks and what that means."""
    lacking = [t for t in names if row.tasks.get(t) is None]
    why = (
        f"no mean: {row.model} lacks {count(len(lacking), 'task')} of this mean ({', '.join(lacking)}); "
        "its Borda rank still counts every task it has"
    )
    return f'<td data-v=""><abbr class="blank" title="{html.escape(why)}">n/a</abbr></td>'


def _mean_cell(row, value: float | None, names: list[str], attrs: str = "") -> str:
    if value is None:
        return _blank(row, names).replace("<td ", f"<td{attrs} ", 1)
    return f'<td{attrs} data-v="{value}"{_colour(value)}>{pct(value)}</td>'


def _table(board: Board, model_cards: dict[str, Card], facts: dict[str, str], show_tasks: bool, base: dict, flat: dict) -> str:
    u = board.uncertainty
    shuffled = shuffled_controls(board)
    type_tasks = {ty: [t.name for t in board.tasks if t.type == ty] for ty in board.types}
    head = ['<th class="rank" title="Borda rank: see Ranks below">Rank</th>', '<th class="model">Model</th>']
    if u is not None:
        head.append(f'<th title="{round(100 * u.level)}% interval of the rank over {u.draws} bootstrap draws">Rank interval</th>')
    head += ["<th>Mean (Task)</th>", "<th>Mean (TaskType)</th>", "<th>Tasks</th>"]
    head += [
        f'<th class="ty" data-type="{html.escape(ty)}" title="mean of the {ty} tasks">{_camel(ty)}</th>' for ty in board.types
    ]
    hidden = "" if show_tasks else " hidden"
    for t in board.tasks:
        head.append(
            f'<th class="task{hidden}" data-task="{html.escape(t.name)}" data-type="{html.escape(t.type)}" '
            f'data-domains="{html.escape(" ".join(t.domains))}" title="{html.escape(facts[t.name])}">{_camel(t.name)}'
            + (
                f' <span class="flat" title="{html.escape("not separating models: " + flat[t.name])}">{FLAT_MARK}</span>'
                if t.name in flat
                else ""
            )
            + "</th>"
        )
    body = []
    for r in board.rows:
        card = model_cards[r.model]
        attrs = {
            "data-model": r.model,
            "data-modality": " ".join(card.modalities) or "unknown",
            "data-size": _size(card.n_parameters),
            "data-license": card.license or "unknown",
            "data-open": {True: "yes", False: "no", None: "unknown"}[card.open_weights],
        }
        tr = " ".join(f'{k}="{html.escape(v)}"' for k, v in attrs.items())
        cls = ' class="baseline"' if card.baseline else ""
        leak = _leak_span(r) + _tie_span(r)
        cells = [
            f'<td data-v="{r.rank}">{r.rank}</td>',
            f'<td class="model" data-v="{html.escape(r.model)}">{_breakable(r.model)}{leak}</td>',
        ]
        if u is not None:
            cells.append(f'<td data-v="{u.rank_low[r.model]}">{html.escape(u.rank_text(r.model))}</td>')
        all_tasks = [t.name for t in board.tasks]
        cells += [_mean_cell(r, r.mean_task, all_tasks), _mean_cell(r, r.mean_tasktype, all_tasks)]
        cells.append(f'<td data-v="{r.n_tasks}">{r.n_tasks}/{len(board.tasks)}</td>')
        cells += [
            _mean_cell(r, r.types.get(ty), type_tasks[ty], f' class="ty" data-type="{html.escape(ty)}"') for ty in board.types
        ]
        for t in board.tasks:
            v = r.tasks.get(t.name)
            where = f"{r.model} on {t.name}: {_task_pct(board, r, t.name) or 'no complete result'}; {provenance(board, r.model, t.name)}"
            if (r.model, t.name) in shuffled:  # the model's own control on the task
                where += f"; its label-shuffled control: {pct(shuffled[(r.model, t.name)])}"
            marks = _leak_span(r, t.name) + _tie_span(r, t.name) + _fragile_span(r, t.name)
            text = html.escape(pct(v)) + marks if v is not None else "–"
            cells.append(
                f'<td class="task{hidden}" data-task="{html.escape(t.name)}" data-v="{"" if v is None else v}"'
                f'{_colour(v, t.lower_is_better)} title="{html.escape(where)}">{text}</td>'
            )
        body.append(f"<tr {tr}{cls}>{''.join(cells)}</tr>")
    foot = _reference_rows(board, base, type_tasks, hidden, u is not None)
    return (
        f'<div class="tablebox" id="tablebox"><table id="leaderboard"><thead><tr>{"".join(head)}</tr></thead>\n'
        f"<tbody>{''.join(body)}</tbody>{foot}</table></div>"
    )


REFERENCES = (
    ("Chance", "random predictions (random labels, scores, cluster ids or orders), mean of seeded draws"),
    ("Majority", "always the most frequent class (retrieval: the most often relevant documents first)"),
)


def _reference_rows(board: Board, base: dict, type_tasks: dict[str, list[str]], hidden: str, interval: bool) -> str:
    """The chance and majority levels of each task (maeb.analysis.baselines) as rows under the models, in the
    table's foot: not ranked, in no model's mean, never sorted among the models. Their own means are
    shown where every task of the mean has a level."""
    if not base:
        return ""

    def level(names: list[str], i: int) -> float | None:
        values = [base[t][i] for t in names if t in base]
        return sum(values) / len(values) if names and len(values) == len(names) else None

    def mean(value: float | None, attrs: str = "") -> str:
        return f'<td{attrs} data-v="">{"–" if value is None else pct(value)}</td>'

    rows = []
    all_tasks = [t.name for t in board.tasks]
    for i, (name, what) in enumerate(REFERENCES):
        why = f"{name}: {what}; a reference, not a model: not ranked and in no mean"
        cells = ['<td title="not ranked">–</td>', f'<td class="model" title="{html.escape(why)}">{name}</td>']
        cells += ["<td></td>"] if interval else []
        types = [level(type_tasks[ty], i) for ty in board.types]
        known = [v for v in types if v is not None]
        by_type = sum(known) / len(known) if known and len(known) == len(types) else None
        cells += [mean(level(all_tasks, i)), mean(by_type)]
        cells.append(f"<td>{sum(t in base for t in all_tasks)}/{len(all_tasks)}</td>")
        cells += [mean(v, f' class="ty" data-type="{html.escape(ty)}"') for ty, v in zip(board.types, types)]
        for t in board.tasks:
            v = base.get(t.name, (None, None))[i]
            cells.append(f'<td class="task{hidden}" data-task="{html.escape(t.name)}">{"–" if v is None else pct(v)}</td>')
        rows.append(f'<tr class="reference">{"".join(cells)}</tr>')
    return f"<tfoot>{''.join(rows)}</tfoot>"


def _breakable(name: str) -> str:
    """A model name (escaped) that may break after '/', '-' and '_': 'LCO-Embedding/' then 'LCO-Embedding-Omni-7B'."""
    return re.sub(r"([/_-])", r"\1<wbr>", html.escape(name))


def _camel(name: str) -> str:
    """A task or type name (escaped) that may break before each capital after a small letter: Audio<wbr>Clustering."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "<wbr>", html.escape(name))


def _select(name: str, label: str, options: Iterable[str], first: str = "all") -> str:
    opts = "".join(f'<option value="{html.escape(o)}">{html.escape(o)}</option>' for o in options)
    return f'<label>{label}<select id="f-{name}"><option value="">{first}</option>{opts}</select></label>'


def _filters(board: Board, model_cards: dict[str, Card], benches: dict[str, list[str]], show_tasks: bool) -> str:
    cs = list(model_cards.values())
    views = ["task types", "tasks", "both"]
    view = "".join(f"<option{' selected' if (v == 'both') == show_tasks and v != 'tasks' else ''}>{v}</option>" for v in views)
    return (
        '<div class="filters" id="filters">'
        '<label>Search<input id="f-search" type="search" placeholder="model name"></label>'
        f'<label>Columns<select id="f-view">{view}</select></label>'
        + _select("bench", "Benchmark", benches, "all tasks")
        + _select("type", "Task type", board.types)
        + _select("domain", "Domain", board.domains)
        + _select("model", "Model", [r.model for r in board.rows])
        + _select("modality", "Modality", sorted({m for c in cs for m in (c.modalities or ["unknown"])}))
        + _select("size", "Size", [name for _, name in SIZES] + ["unknown"])
        + _select("license", "Licence", sorted({c.license or "unknown" for c in cs}))
        + _select("open", "Open weights", ["yes", "no", "unknown"])
        + "</div>"
    )


def _figures(board: Board, model_cards: dict[str, Card], results: Iterable[Path]) -> str:
    """The publication figures as inline SVG images, or a line saying how to get them."""
    from ..core.errors import MaebError
    from . import figures

    try:
        figs, skipped = figures.build(board, model_cards, results)
    except MaebError as exc:  # matplotlib missing: the page is still whole
        return f'<p id="no-figures">{html.escape(str(exc))} (or use `python -m maeb plot` where it is installed).</p>'
    parts = []
    for f in figs:
        svg = figures.svg_text(f)
        size = re.search(r'<svg[^>]*width="([0-9.]+)pt" height="([0-9.]+)pt"', svg)
        dims = f' width="{float(size.group(1)) * 4 / 3:.0f}" height="{float(size.group(2)) * 4 / 3:.0f}"' if size else ""
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        parts.append(
            f'<figure id="fig-{f.name}"><img src="data:image/svg+xml;base64,{data}"{dims} alt="{html.escape(f.caption)}">'
            f"<figcaption>{html.escape(f.caption)}</figcaption></figure>"
        )
    if skipped:
        parts.append(f"<p>Not drawn: {html.escape('; '.join(skipped))}.</p>")
    return "\n".join(parts)


def _page_data(board: Board, model_cards: dict[str, Card]) -> dict:
    """What the model card dialog shows: each card, and each model's per-task scores, intervals and provenance."""
    shuffled = shuffled_controls(board)  # each model's own control, beside its own score
    scores = {
        r.model: [
            [
                t.name,
                t.type,
                (_task_pct(board, r, t.name) or "–") + _fragile(r, t.name) + _shuffled_text(shuffled, r.model, t.name),
                provenance(board, r.model, t.name),
            ]
            for t in board.tasks
        ]
        for r in board.rows
    }
    return {"cards": {m: c.as_dict() for m, c in model_cards.items()}, "scores": scores}


_SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('page-data').textContent);
  var table = document.getElementById('leaderboard');
  var benches = JSON.parse(document.getElementById('bench-data').textContent);
  function val(id) { return document.getElementById(id).value; }
  function apply() {
    var view = val('f-view'), bench = val('f-bench'), type = val('f-type'), domain = val('f-domain');
    var inBench = bench ? benches[bench] : null;
    table.querySelectorAll('th.task, td.task').forEach(function (c) {
      var th = table.tHead.rows[0].querySelector('th[data-task="' + CSS.escape(c.dataset.task) + '"]');
      var ok = view !== 'task types' && (!inBench || inBench.indexOf(c.dataset.task) >= 0)
        && (!type || th.dataset.type === type) && (!domain || th.dataset.domains.split(' ').indexOf(domain) >= 0);
      c.hidden = !ok;
    });
    table.querySelectorAll('th.ty, td.ty').forEach(function (c) {
      c.hidden = view === 'tasks' || (type && c.dataset.type !== type);
    });
    var q = val('f-search').toLowerCase(), model = val('f-model');
    var rowFilters = {modality: val('f-modality'), size: val('f-size'), license: val('f-license'), open: val('f-open')};
    Array.from(table.tBodies[0].rows).forEach(function (tr) {
      var ok = (!q || tr.dataset.model.toLowerCase().indexOf(q) >= 0) && (!model || tr.dataset.model === model);
      Object.keys(rowFilters).forEach(function (k) {
        var want = rowFilters[k];
        if (want && tr.dataset[k].split(' ').indexOf(want) < 0) ok = false;
      });
      tr.hidden = !ok;
    });
  }
  document.querySelectorAll('#filters select, #filters input').forEach(function (el) {
    el.addEventListener('input', apply);
  });
  table.tHead.querySelectorAll('th').forEach(function (th) {
    th.addEventListener('click', function () {
      var col = th.cellIndex, body = table.tBodies[0], rows = Array.from(body.rows);
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
  var dialog = document.getElementById('card');
  function el(tag, text) { var e = document.createElement(tag); e.textContent = text; return e; }
  function show(model) {
    var card = data.cards[model], box = document.getElementById('card-body');
    box.replaceChildren(el('h2', model));
    var dl = document.createElement('dl'); dl.className = 'card';
    var facts = [['Parameters', card.n_parameters == null ? 'not recorded' : Number(card.n_parameters).toLocaleString('en')],
      ['Embedding dimension', card.embed_dim == null ? 'not recorded' : card.embed_dim],
      ['Licence', card.license || 'not recorded'], ['Open weights', card.open_weights == null ? 'not recorded' : (card.open_weights ? 'yes' : 'no')],
      ['Modalities', (card.modalities || []).join(', ') || 'not recorded'], ['Revision', card.revisions.join(', ')],
      ['Protocol', card.protocol || 'not recorded'], ['Reference', card.reference || 'not recorded'],
      ['Facts from', card.source || 'nowhere: neither its results nor the catalog record them']];
    facts.forEach(function (f) {
      dl.appendChild(el('dt', f[0]));
      var dd = document.createElement('dd');
      if (f[0] === 'Reference' && /^https?:[/][/][^\\s]+$/i.test(f[1])) { var a = el('a', f[1]); a.href = f[1]; dd.appendChild(a); }
      else dd.textContent = f[1];
      dl.appendChild(dd);
    });
    box.appendChild(dl);
    var t = document.createElement('table'), head = t.createTHead().insertRow();
    ['Task', 'Type', 'Score (%) ±band [interval]', 'From'].forEach(function (h) { head.appendChild(el('th', h)); });
    var body = t.createTBody();
    data.scores[model].forEach(function (s) {
      var tr = body.insertRow();
      s.forEach(function (v) { tr.appendChild(el('td', v)); });
    });
    box.appendChild(t);
    dialog.showModal();
  }
  table.tBodies[0].addEventListener('click', function (e) {
    var tr = e.target.closest('tr');
    if (tr) show(tr.dataset.model);
  });
  document.getElementById('card-close').addEventListener('click', function () { dialog.close(); });
  apply();
  document.body.dataset.ready = 'yes';
})();
"""


BORDA = (
    "Rank is the Borda count, as on mteb's leaderboard: within each task the models are ranked, a model earns one point "
    "for each model it beats (ties share), and the ranks order the total points. A model that lacks a task earns "
    "nothing for it, and a large win counts no more than a narrow one, so a model with a higher mean can rank below "
    "one with a lower mean that beats more models on more tasks. Means are blank (n/a) where a task of the mean is "
    "missing: hover over n/a for which."
)


def to_html(board: Board, per_task=None, results: Iterable[Path] = ()) -> str:
    """The page: summary, how to read it, filters, the table in its scrolling box, notes, the figures, the
    model card dialog and the JSON results file. per_task "columns" shows the task columns at first; any
    other value shows the task-type means (the Columns filter switches)."""
    from .tables import html_page

    model_cards = cards(board)
    facts = _task_facts(board)
    benches = _benchmarks(board)
    show_tasks = per_task in (True, "columns")
    title = html.escape(_title(board) if board.benchmark or board.task_filter is not None else "maeb results")
    blanks = sum(r.mean_task is None for r in board.rows)
    blank_note = (
        f" {count(blanks, 'model')} of {len(board.rows)} {'lacks' if blanks == 1 else 'lack'} a task, so "
        f"{'its' if blanks == 1 else 'their'} Mean (Task) reads n/a."
        if blanks
        else ""
    )
    from .baselines import board_baselines

    base = board_baselines(board)
    refs = "; grey rows under the models: chance and majority levels (not ranked, in no mean)" if base else ""
    legend = (
        '<div class="legend"><span>Cell shade: score</span><span>0</span>'
        '<span class="scale" style="background: linear-gradient(to right, hsl(212,70%,97%), hsl(212,70%,55%))"></span>'
        "<span>100</span><span>– no result; n/a: a mean lacks a task (hover); hover a cell for where its score comes from;"
        f" click a row for the model's card{refs}</span></div>"
    )
    flat = _flat(board, base)
    notes = [
        (i, n)
        for i, n in (
            ("experiments", _experiment_note(board)),
            ("leaks", _leak_note(board)),
            ("ties", _tie_note(board)),
            ("fragile", _fragile_note(board)),
            ("separation", _flat_note(flat)),
            ("clustering-chance", _clustering_note(board, base)),
        )
        if n
    ]
    if board.missing_tasks:
        notes.append(("missing", f"No results at all for: {', '.join(board.missing_tasks)}."))
    body = f"""<h1>{title}</h1>
<p>{count(len(board.rows), "model")}, {count(len(board.tasks), "task")}; scores in %.{blank_note}
Filters choose what is shown; ranks and means are those of the whole board.</p>
{_filters(board, model_cards, benches, show_tasks)}
{legend}
{_table(board, model_cards, facts, show_tasks, base, flat)}
{"".join(f'<p id="{i}">{html.escape(n)}</p>' for i, n in notes)}
{f'<p id="uncertainty">Uncertainty: {html.escape(board.uncertainty.summary())}.</p>' if board.uncertainty else ""}
{_tasks_table(board) if per_task == "rows" else ""}
<h2 id="ranks">Ranks</h2>
<p id="borda">{html.escape(BORDA)}</p>
<h2>Figures</h2>
{_figures(board, model_cards, results)}
<dialog id="card"><button id="card-close" type="button">Close</button><div id="card-body"></div></dialog>
{json_script("leaderboard-data", to_json(board))}
{json_script("page-data", _page_data(board, model_cards))}
{json_script("bench-data", benches)}
<script>{_SCRIPT}</script>"""
    return html_page(f"{title} leaderboard", (*_CSS,), body).replace(
        '<meta charset="utf-8">', '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">', 1
    )
