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

from .cards import Card, cards, csv_source, provenance, shuffled_controls
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
    # a fact is one token (a revision hash, a URL): it may break anywhere rather than widen the card
    "dl.card { grid-template-columns: auto minmax(0, 1fr); } dl.card dd { margin: 0; overflow-wrap: anywhere; }",
    # the card breaks names where the script put <wbr> (camel case, / _ - .), never inside a word
    "dialog td, dialog th { overflow-wrap: break-word; word-break: normal; }",
    # fixed columns: a cell wraps at its <wbr> within its column, and breaks a piece only if it alone is wider
    "dialog table { table-layout: fixed; } dialog th:nth-child(1) { width: 32%; } dialog th:nth-child(2) { width: 18%; }"
    " dialog th:nth-child(3) { width: 20%; }",
    ".filters .what { flex-basis: 100%; font-weight: bold; }",
    "details.pick { position: relative; } details.pick summary { cursor: pointer; padding: 2px 0; }",
    "details.pick .opts { position: absolute; z-index: 5; background: #fff; border: 1px solid #999; padding: 4px 8px;"
    " max-height: 50vh; overflow: auto; max-width: min(22rem, 80vw); }",
    "details.pick .opts label { flex-direction: row; gap: 4px; white-space: nowrap; }",
    # a closed panel takes no room; on a phone an open one sits in the flow, never past the window's edge
    "details.pick:not([open]) .opts { display: none; }",
    "@media (max-width: 600px) { details.pick .opts { position: static; max-width: 100%; }"
    " details.pick .opts label { white-space: normal; overflow-wrap: anywhere; } }",
    ".actions { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; }",
    "thead th[aria-sort=ascending]::after { content: ' \\25B2'; } thead th[aria-sort=descending]::after { content: ' \\25BC'; }",
    "thead th:focus, tbody tr:focus, abbr.blank:focus { outline: 2px solid #14c; outline-offset: -2px; }",
    "#info { min-height: 1.4em; font-size: 13px; color: #333; } #nomatch { padding: 8px; font-style: italic; }",
    "#cite pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; background: #f6f6f6; padding: 6px; }",
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
    return f'<td data-v=""><abbr class="blank" tabindex="0" title="{html.escape(why)}">n/a</abbr></td>'


def _mean_cell(row, value: float | None, names: list[str], attrs: str = "") -> str:
    if value is None:
        return _blank(row, names).replace("<td ", f"<td{attrs} ", 1)
    return f'<td{attrs} data-v="{value}"{_colour(value)}>{pct(value)}</td>'


def _table(board: Board, model_cards: dict[str, Card], facts: dict[str, str], show_tasks: bool, base: dict, flat: dict) -> str:
    u = board.uncertainty
    shuffled = shuffled_controls(board)
    type_tasks = {ty: [t.name for t in board.tasks if t.type == ty] for ty in board.types}
    # every header is reached by Tab and sorts with Enter; data-first: the order of its first sort (best first)
    key = ' tabindex="0" aria-sort="none"'
    head = [
        f'<th class="rank" data-first="asc"{key} title="Borda rank (the rule is named under the table): see Ranks below">Rank</th>',
        f'<th class="model" data-first="asc"{key}>Model</th>',
    ]
    if u is not None:
        head.append(
            f'<th class="interval" data-first="asc"{key} title="{round(100 * u.level)}% interval of the rank over {u.draws} '
            + (
                'bootstrap draws, redone for the chosen tasks and Borda rule">Rank interval</th>'
                if u.recipe is not None
                else 'bootstrap draws, of the whole board under its rule (hidden for another choice)">Rank interval</th>'
            )
        )
    head += [
        f'<th class="mtask"{key} title="mean over the chosen tasks; n/a where a model lacks one">Mean (Task)</th>',
        f'<th class="mtype"{key} title="mean of the task types\' means; n/a where a model lacks a task">Mean (TaskType)</th>',
        f'<th class="ntasks"{key} title="the chosen tasks the model has a complete score on">Tasks</th>',
    ]
    head += [
        f'<th class="ty" data-type="{html.escape(ty)}"{key} title="mean of the {ty} tasks">{_camel(ty)}</th>'
        for ty in board.types
    ]
    hidden = "" if show_tasks else " hidden"
    for t in board.tasks:
        first = ' data-first="asc"' if t.lower_is_better else ""
        head.append(
            f'<th class="task{hidden}" data-task="{html.escape(t.name)}" data-type="{html.escape(t.type)}"{first}{key} '
            f'title="{html.escape(facts[t.name])}">{_camel(t.name)}'
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
            "data-modality": "|".join(card.modalities) or "unknown",  # '|': a size bucket's name holds spaces
            "data-size": _size(card.n_parameters),
            "data-license": card.license or "unknown",
            "data-open": {True: "yes", False: "no", None: "unknown"}[card.open_weights],
        }
        tr = " ".join(f'{k}="{html.escape(v)}"' for k, v in attrs.items()) + ' tabindex="0"'  # Enter opens the card
        cls = ' class="baseline"' if card.baseline else ""
        leak = _leak_span(r) + _tie_span(r)
        cells = [
            f'<td class="rank" data-v="{r.rank}">{r.rank}</td>',
            f'<td class="model" data-v="{html.escape(r.model)}">{_breakable(r.model)}{leak}</td>',
        ]
        if u is not None:
            cells.append(f'<td class="interval" data-v="{u.rank_low[r.model]}">{html.escape(u.rank_text(r.model))}</td>')
        all_tasks = [t.name for t in board.tasks]
        cells += [
            _mean_cell(r, r.mean_task, all_tasks, ' class="mtask"'),
            _mean_cell(r, r.mean_tasktype, all_tasks, ' class="mtype"'),
        ]
        cells.append(f'<td class="ntasks" data-v="{r.n_tasks}">{r.n_tasks}/{len(board.tasks)}</td>')
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
        f"<tbody>{''.join(body)}</tbody>{foot}</table>"
        '<p id="nomatch" hidden>No model matches these filters: clear the search or a row filter.</p></div>'
    )


REFERENCES = (
    ("Chance", "random predictions (random labels, scores, cluster ids or orders), mean of seeded draws"),
    ("Majority", "always the most frequent class (retrieval: the most often relevant documents first)"),
)


def _reference_rows(board: Board, base: dict, type_tasks: dict[str, list[str]], hidden: str, interval: bool) -> str:
    """The chance and majority levels of each task (maeb.analysis.baselines) as rows under the models, in the
    table's foot: not ranked, in no model's mean, never sorted among the models. Their own means are
    shown where every task of the mean has a level (the page's script recomputes them for the chosen tasks).
    Where no result records the levels, one row says so and why: every board has its chance row or its reason."""
    if not base:
        span = 5 + int(interval) + len(board.types) + len(board.tasks)
        return (
            f'<tfoot><tr class="reference" id="no-chance"><td colspan="{span}" class="model">'
            f"Chance and majority: not shown, {html.escape(_no_chance_reason(board))}</td></tr></tfoot>"
        )

    def level(names: list[str], i: int) -> float | None:
        values = [base[t][i] for t in names if t in base]
        return sum(values) / len(values) if names and len(values) == len(names) else None

    def mean(value: float | None, attrs: str = "") -> str:
        return f'<td{attrs} data-v="">{"–" if value is None else pct(value)}</td>'

    rows = []
    all_tasks = [t.name for t in board.tasks]
    for i, (name, what) in enumerate(REFERENCES):
        why = f"{name}: {what}; a reference, not a model: not ranked and in no mean"
        cells = ['<td class="rank" title="not ranked">–</td>', f'<td class="model" title="{html.escape(why)}">{name}</td>']
        cells += ['<td class="interval"></td>'] if interval else []
        types = [level(type_tasks[ty], i) for ty in board.types]
        known = [v for v in types if v is not None]
        by_type = sum(known) / len(known) if known and len(known) == len(types) else None
        cells += [mean(level(all_tasks, i), ' class="mtask"'), mean(by_type, ' class="mtype"')]
        cells.append(f'<td class="ntasks">{sum(t in base for t in all_tasks)}/{len(all_tasks)}</td>')
        cells += [mean(v, f' class="ty" data-type="{html.escape(ty)}"') for ty, v in zip(board.types, types)]
        for t in board.tasks:
            v = base.get(t.name, (None, None))[i]
            cells.append(f'<td class="task{hidden}" data-task="{html.escape(t.name)}">{"–" if v is None else pct(v)}</td>')
        rows.append(f'<tr class="reference">{"".join(cells)}</tr>')
    return f"<tfoot>{''.join(rows)}</tfoot>"


def _no_chance_reason(board: Board) -> str:
    """Why a board has no chance row: what its results are, and what would record the levels."""
    sources = [s.source for scores in board.cells.values() for s in scores]
    if sources and all(csv_source(src)[0] for src in sources):
        return (
            "the published scores (a main_scores.csv) record no chance or majority levels; "
            "maeb run writes them (maeb.baselines) into each result file it writes"
        )
    return (
        "no result file here records maeb.baselines (mteb's own result files carry none); "
        "maeb run writes them into each result file it writes"
    )


def _breakable(name: str) -> str:
    """A model name (escaped) that may break after '/', '-' and '_': 'LCO-Embedding/' then 'LCO-Embedding-Omni-7B'."""
    return re.sub(r"([/_-])", r"\1<wbr>", html.escape(name))


def _camel(name: str) -> str:
    """A task or type name (escaped) that may break before each capital after a small letter: Audio<wbr>Clustering."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "<wbr>", html.escape(name))


def _select(name: str, label: str, options: Iterable[str], first: str = "all") -> str:
    opts = "".join(f'<option value="{html.escape(o)}">{html.escape(o)}</option>' for o in options)
    return f'<label>{label}<select id="f-{name}"><option value="">{first}</option>{opts}</select></label>'


def _pick(name: str, label: str, options: Iterable[str]) -> str:
    """A choice of several (task types, domains, languages, task modalities, tasks): checkboxes in a panel
    that opens from its summary, none ticked meaning all; reached by Tab, ticked by Space or a tap."""
    boxes = "".join(f'<label><input type="checkbox" value="{html.escape(o)}"> {html.escape(o)}</label>' for o in options)
    return (
        f'<details class="pick" id="f-{name}" data-label="{html.escape(label)}"><summary>{html.escape(label)}: all</summary>'
        f'<div class="opts">{boxes}</div></details>'
    )


def _filters(board: Board, model_cards: dict[str, Card], benches: dict[str, list[str]], show_tasks: bool) -> str:
    """The choice of tasks (which recomputes ranks and means) and of rows (which only hides rows)."""
    from .leaderboard import BORDA_RULES

    cs = list(model_cards.values())
    views = ["task types", "tasks", "both"]
    view = "".join(f"<option{' selected' if (v == 'both') == show_tasks and v != 'tasks' else ''}>{v}</option>" for v in views)
    rules = "".join(f'<option value="{r}"{" selected" if r == board.borda else ""}>{r}</option>' for r in BORDA_RULES)
    languages = sorted({lang for t in board.tasks for lang in t.languages})
    groups = sorted({t.group for t in board.tasks if t.group})
    return (
        '<div class="filters" id="filters"><span class="what">Tasks (ranks and means are recomputed over them):</span>'
        + _select("bench", "Benchmark", benches, "all tasks")
        + _pick("type", "Task types", board.types)
        + _pick("domain", "Domains", board.domains)
        + _pick("lang", "Languages", languages)
        + _pick("group", "Task modality", groups)
        + _pick("task", "Tasks", [t.name for t in board.tasks])
        + f'<label>Borda rule<select id="f-rule">{rules}</select></label>'
        + f'<label>Columns<select id="f-view">{view}</select></label>'
        + "</div>"
        '<div class="filters" id="row-filters"><span class="what">Rows (hidden, never re-ranked):</span>'
        '<label>Search<input id="f-search" type="search" placeholder="model name"></label>'
        + _select("model", "Model", [r.model for r in board.rows])
        + _select("modality", "Model modality", sorted({m for c in cs for m in (c.modalities or ["unknown"])}))
        + _select("size", "Size", [name for _, name in SIZES] + ["unknown"])
        + _select("license", "Licence", sorted({c.license or "unknown" for c in cs}))
        + _select("open", "Open weights", ["yes", "no", "unknown"])
        + '<span class="actions"><button type="button" id="download">Download this view (CSV)</button>'
        '<a id="share" href="#">Link to this view</a><button type="button" id="reset">Reset</button></span>'
        "</div>"
    )


def _explore_data(board: Board, base: dict) -> dict:
    """What the page's script recomputes a selection from, as maeb.analysis.leaderboard.aggregate does: each
    task's facts, the per-model means that vote in its Borda count (partial ones too, and of models the board
    does not show), each shown model's complete scores, and the chance and majority levels."""
    return {
        "rule": board.borda,
        "tasks": [
            {
                "name": t.name,
                "type": t.type,
                "domains": list(t.domains),
                "languages": list(t.languages),
                "group": t.group,
                "lower": t.lower_is_better,
            }
            for t in board.tasks
        ],
        # full precision: the script's ranks equal Python's on the same numbers; a board built by hand (no
        # partial means) votes with its complete scores
        "partial": {
            t.name: board.partial.get(t.name) or {r.model: r.tasks[t.name] for r in board.rows if r.tasks.get(t.name) is not None}
            for t in board.tasks
        },
        "complete": {r.model: {t: v for t, v in r.tasks.items() if v is not None} for r in board.rows},
        "base": {t: list(v) for t, v in base.items()},
        # what redoes the rank intervals for a choice of tasks and rule (maeb.analysis.uncertainty: the seed, the
        # draws, each moving cell's band and experiments); "intervals": whether the table shows any
        "bootstrap": board.uncertainty.recipe if board.uncertainty is not None else None,
        "intervals": board.uncertainty is not None,
    }


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


_SCRIPT = r"""
(function () {
  var data = JSON.parse(document.getElementById('page-data').textContent);
  var X = JSON.parse(document.getElementById('explore-data').textContent);
  var meta = JSON.parse(document.getElementById('leaderboard-data').textContent);
  var benches = JSON.parse(document.getElementById('bench-data').textContent);
  var table = document.getElementById('leaderboard'), body = table.tBodies[0], headRow = table.tHead.rows[0];
  var info = {}, order = X.tasks.map(function (t) { info[t.name] = t; return t.name; });
  var RULES = {mteb: "mteb's rule: on each task a model earns n_models - rank points (n_models: the models shown for this choice of tasks)",
    paper: "the MAEB paper's rule: on each task a model earns n_task - rank points (n_task: the models that ran that task), so it scores only against them"};
  function $(id) { return document.getElementById(id); }
  function picked(name) {
    return Array.from($('f-' + name).querySelectorAll('input:checked')).map(function (i) { return i.value; });
  }
  function mean(values) {
    if (!values.length || values.some(function (v) { return v == null; })) return null;
    return values.reduce(function (a, b) { return a + b; }, 0) / values.length;
  }
  function averageRanks(values) {  // scipy's rankdata(method="average"): 1 for the smallest, ties share
    var idx = values.map(function (v, i) { return i; }).sort(function (a, b) { return values[a] - values[b]; });
    var out = new Array(values.length), i = 0;
    while (i < idx.length) {
      var j = i;
      while (j + 1 < idx.length && values[idx[j + 1]] === values[idx[i]]) j++;
      for (var k = i; k <= j; k++) out[idx[k]] = (i + j) / 2 + 1;
      i = j + 1;
    }
    return out;
  }
  // -- the rank intervals of the chosen tasks, as maeb.analysis.uncertainty.compute draws them on their board: every
  // random number is a hash of the seed, the draw, what it moves and its place there (uncertainty.uniforms), and
  // each sum is made in compute's order, so the draws and the intervals are Python's
  var B = X.bootstrap, moving = {}, drawn = {}, intervalsOf = {};
  if (B) B.cells.forEach(function (c) { (moving[c[1]] = moving[c[1]] || []).push(c); });
  function mix(x) {  // murmur3's 32-bit finaliser
    x ^= x >>> 16; x = Math.imul(x, 0x85ebca6b); x ^= x >>> 13; x = Math.imul(x, 0xc2b2ae35); x ^= x >>> 16;
    return x >>> 0;
  }
  function step(x, v) { return mix((((x ^ v) >>> 0) + 0x9e3779b9) >>> 0); }
  function nameKey(model, task) {  // FNV-1a of "model NUL task" in UTF-8 (uncertainty.name_key)
    var h = 0x811c9dc5;
    new TextEncoder().encode(model + '\0' + task).forEach(function (b) { h = Math.imul(h ^ b, 0x01000193) >>> 0; });
    return h;
  }
  function streamOf(stream, key) { return step(step(B.seed >>> 0, stream), key); }
  function uniform(x, d, j) { return step(step(x, d), j) / 4294967296; }
  function movedOf(c) {  // the cell's value in each draw (uncertainty._moved), drawn once per page
    var id = c[0] + '\0' + c[1];
    if (drawn[id]) return drawn[id];
    var key = nameKey(c[0], c[1]), value = X.partial[c[1]][c[0]], bounds = B.bounds[c[1]], combos = c[3];
    var xe = streamOf(2, key), xb = streamOf(3, key), out = new Float64Array(B.draws);
    var means = combos.map(function (v) { var s = 0; for (var i = 0; i < v.length; i++) s += v[i]; return v.length ? s / v.length : 0; });
    for (var d = 0; d < B.draws; d++) {
      var shift = 0;
      if (combos.length) {
        var total = 0, at = 0;
        for (var ci = 0; ci < combos.length; ci++) {
          var v = combos[ci], n = v.length, acc = 0;
          if (!n) continue;
          for (var e = 0; e < n; e++) acc += v[Math.floor(uniform(xe, d, at + e) * n)];
          at += n;
          total += acc / n - means[ci];
        }
        shift = total / combos.length;
      }
      if (c[2]) shift = shift + c[2] * (2 * uniform(xb, d, 0) - 1);
      var moved = value + shift;
      if (bounds && bounds[0] != null) moved = Math.max(moved, bounds[0]);  // within the metric's range, as np.maximum
      if (bounds && bounds[1] != null) moved = Math.min(moved, bounds[1]);  // then np.minimum do
      out[d] = moved;
    }
    drawn[id] = out;
    return out;
  }
  function intervals(names, rule, rows) {  // {model: [low, high]}, ranks among the shown rows in each draw
    var id = rule + '\n' + names.join('\n');
    if (intervalsOf[id]) return intervalsOf[id];
    var n = rows.length, k = names.length, at = {};
    rows.forEach(function (r, i) { at[r.model] = i; });
    var columns = names.map(function (t) {
      var p = X.partial[t] || {}, voters = Object.keys(p), sign = info[t].lower ? 1 : -1, nv = rule === 'mteb' ? n : voters.length;
      function points(values) {  // the rows' Borda points on the task, its voters' values given
        var r = averageRanks(values.map(function (v) { return sign * v; })), out = new Float64Array(n);
        voters.forEach(function (m, i) { if (m in at) out[at[m]] = nv - r[i]; });
        return out;
      }
      var values = voters.map(function (m) { return p[m]; });
      var cells = (moving[t] || []).map(function (c) { return [voters.indexOf(c[0]), movedOf(c)]; });
      return {base: points(values), values: values, cells: cells, points: points};
    });
    var resample = B.sources.indexOf('tasks') >= 0, xt = streamOf(1, 0), w = new Float64Array(k), tot = new Float64Array(n);
    var ranks = rows.map(function () { return new Float64Array(B.draws); });
    for (var d = 0; d < B.draws; d++) {
      w.fill(resample ? 0 : 1);
      if (resample) for (var i = 0; i < k; i++) w[Math.floor(uniform(xt, d, i) * k)] += 1;  // (uncertainty.task_weights)
      tot.fill(0);
      for (var j = 0; j < k; j++) {
        var col = columns[j], pts = col.base;
        if (!w[j]) continue;
        if (col.cells.length) {
          var vals = col.values.slice();
          col.cells.forEach(function (c) { vals[c[0]] = c[1][d]; });
          pts = col.points(vals);
        }
        for (var r = 0; r < n; r++) tot[r] += w[j] * pts[r];  // half points times whole weights: exact in any order
      }
      for (var a = 0; a < n; a++) {
        var above = 0;
        for (var b = 0; b < n; b++) if (tot[b] > tot[a]) above++;
        ranks[a][d] = above + 1;  // ties share the best rank
      }
    }
    var tail = (1 - B.level) / 2, lo = Math.floor((B.draws - 1) * tail), hi = Math.ceil((B.draws - 1) * (1 - tail));
    var out = {};  // numpy's quantile, methods "lower" and "higher"
    rows.forEach(function (r, i) { var s = Array.from(ranks[i]).sort(function (x, y) { return x - y; }); out[r.model] = [s[lo], s[hi]]; });
    intervalsOf[id] = out;
    return out;
  }
  // the board of the chosen tasks, as maeb.analysis.leaderboard.aggregate(scores, tasks=names, borda=rule) makes it
  function compute(names, rule) {
    var models = Object.keys(X.complete).filter(function (m) {
      return names.some(function (t) { return X.complete[m][t] != null; });
    }).sort();
    var points = {};
    names.forEach(function (t) {
      var p = X.partial[t] || {}, voters = Object.keys(p), sign = info[t].lower ? 1 : -1;
      var ranks = averageRanks(voters.map(function (m) { return sign * p[m]; }));
      var n = rule === 'mteb' ? models.length : voters.length;
      voters.forEach(function (m, i) { points[m] = (points[m] || 0) + n - ranks[i]; });
    });
    var ranked = Object.keys(points), rank = {};  // every model with a score takes a rank number, shown or not
    ranked.forEach(function (m) {
      rank[m] = 1 + ranked.filter(function (o) { return points[o] > points[m]; }).length;
    });
    var rows = models.map(function (m) {
      var tasks = {}, byType = {};
      names.forEach(function (t) {
        var v = X.complete[m][t]; tasks[t] = v == null ? null : v;
        (byType[info[t].type] = byType[info[t].type] || []).push(tasks[t]);
      });
      var types = {};
      Object.keys(byType).sort().forEach(function (ty) { types[ty] = mean(byType[ty]); });
      var mt = mean(names.map(function (t) { return tasks[t]; }));
      return {model: m, rank: rank[m], points: points[m] || 0, mean_task: mt,
        mean_tasktype: mean(Object.keys(types).map(function (k) { return types[k]; })),
        n_tasks: names.filter(function (t) { return tasks[t] != null; }).length, types: types, tasks: tasks};
    });
    rows.sort(function (a, b) {
      var x = a.mean_task == null ? -1 : a.mean_task, y = b.mean_task == null ? -1 : b.mean_task;
      return a.rank - b.rank || y - x || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0);
    });
    var shown = {}; models.forEach(function (m) { shown[m] = true; });
    var hidden = ranked.filter(function (m) { return !shown[m]; }).sort();
    return {rows: rows, hidden: hidden.map(function (m) { return [m, rank[m]]; }), n_models: models.length};
  }
  function selection() {
    var bench = $('f-bench').value, types = picked('type'), domains = picked('domain'), langs = picked('lang');
    var groups = picked('group'), tasks = picked('task');
    var inBench = bench ? benches[bench] : null;
    return order.filter(function (t) {
      var i = info[t];
      return (!inBench || inBench.indexOf(t) >= 0) && (!types.length || types.indexOf(i.type) >= 0)
        && (!domains.length || i.domains.some(function (d) { return domains.indexOf(d) >= 0; }))
        && (!langs.length || i.languages.some(function (l) { return langs.indexOf(l) >= 0; }))
        && (!groups.length || groups.indexOf(i.group) >= 0) && (!tasks.length || tasks.indexOf(t) >= 0);
    });
  }
  function pct(v) { return v == null ? '' : (100 * v).toFixed(1); }
  function shade(td, v) { td.style.background = v == null || v < 0 || v > 1 ? '' : 'hsl(212, 70%, ' + (97 - 42 * v).toFixed(0) + '%)'; }
  function setMean(td, row, v, names) {
    td.dataset.v = v == null ? '' : v;
    shade(td, v);
    if (v != null) { td.textContent = pct(v); return; }
    var lacking = names.filter(function (t) { return row.tasks[t] == null; });
    var ab = document.createElement('abbr'); ab.className = 'blank'; ab.tabIndex = 0; ab.textContent = 'n/a';
    ab.title = 'no mean: ' + row.model + ' lacks ' + lacking.length + ' task' + (lacking.length === 1 ? '' : 's')
      + ' of this mean (' + lacking.join(', ') + '); its Borda rank still counts every task it has';
    td.replaceChildren(ab);
  }
  var sort = null, last = null;  // the column a reader sorted by ({key, dir}); null: the board's own order
  function keyOf(th) {
    return th.dataset.task ? 'task:' + th.dataset.task : th.dataset.type ? 'type:' + th.dataset.type : th.className.split(' ')[0];
  }
  function cellOf(tr, key) {
    return Array.from(tr.cells).find(function (c) {
      return (c.dataset.task ? 'task:' + c.dataset.task : c.dataset.type ? 'type:' + c.dataset.type : c.className.split(' ')[0]) === key;
    });
  }
  function intervalNote(shown) {  // what the rank intervals are for this choice, or why there are none
    if (!X.intervals) return ' No rank intervals: the page was written without --uncertainty DRAWS.';
    if (!B) return shown ? '' : ' The rank intervals are of the whole board under its own rule (' + X.rule + '): this page holds no'
      + ' bootstrap recipe to redo them for this choice, so they are hidden.';
    var pct = Math.round(100 * B.level) + '%', over = B.sources.join(', ');
    var none = B.sources.some(function (s) { return s !== 'tasks'; }) && !B.cells.length
      ? ' No result records few-shot experiments or stability bands (a published main_scores.csv records none), so only the'
        + ' resampling of the tasks moves the ranks.' : '';
    return (shown ? ' Each rank interval holds the central ' + pct + ' of the ranks over ' + B.draws + ' bootstrap draws (over ' + over
      + '), redone for the chosen tasks and rule as maeb.analysis.uncertainty.compute does on their board.' : '') + none;
  }
  function apply(fromHash) {
    var names = selection(), rule = $('f-rule').value, view = $('f-view').value;
    var all = names.length === order.length, res = compute(names, rule), by = {};
    res.rows.forEach(function (r) { by[r.model] = r; });
    var types = {}; names.forEach(function (t) { types[info[t].type] = true; });
    var chosen = {}; names.forEach(function (t) { chosen[t] = true; });
    res.intervals = B && names.length && res.rows.length ? intervals(names, rule, res.rows) : null;
    var showInterval = !!res.intervals || (all && rule === X.rule && !B);
    table.querySelectorAll('th.task, td.task').forEach(function (c) { c.hidden = view === 'task types' || !chosen[c.dataset.task]; });
    table.querySelectorAll('th.ty, td.ty').forEach(function (c) { c.hidden = view === 'tasks' || !types[c.dataset.type]; });
    table.querySelectorAll('th.interval, td.interval').forEach(function (c) { c.hidden = !showInterval; });
    var q = $('f-search').value.toLowerCase(), model = $('f-model').value;
    var want = {size: $('f-size').value, license: $('f-license').value, open: $('f-open').value}, modality = $('f-modality').value;
    var visible = 0;
    Array.from(body.rows).forEach(function (tr) {
      var r = by[tr.dataset.model];
      var ok = !!r && (!q || tr.dataset.model.toLowerCase().indexOf(q) >= 0) && (!model || tr.dataset.model === model)
        && (!modality || tr.dataset.modality.split('|').indexOf(modality) >= 0);
      Object.keys(want).forEach(function (k) { if (want[k] && tr.dataset[k] !== want[k]) ok = false; });
      tr.hidden = !ok;
      if (ok) visible++;
      if (!r) return;
      var c = cellOf(tr, 'rank'); c.textContent = r.rank; c.dataset.v = r.rank;
      var iv = res.intervals && res.intervals[r.model];
      if (iv) { c = cellOf(tr, 'interval'); c.textContent = iv[0] === iv[1] ? iv[0] : iv[0] + '\u2013' + iv[1]; c.dataset.v = iv[0]; }
      setMean(cellOf(tr, 'mtask'), r, r.mean_task, names);
      setMean(cellOf(tr, 'mtype'), r, r.mean_tasktype, names);
      c = cellOf(tr, 'ntasks'); c.textContent = r.n_tasks + '/' + names.length; c.dataset.v = r.n_tasks;
      Object.keys(r.types).forEach(function (ty) {
        setMean(cellOf(tr, 'type:' + ty), r, r.types[ty], names.filter(function (t) { return info[t].type === ty; }));
      });
    });
    // the chance and majority rows: their means over the chosen tasks, where each has a level
    Array.from(table.tFoot ? table.tFoot.rows : []).forEach(function (tr, i) {
      if (tr.id === 'no-chance') return;
      function level(ns) { var v = ns.map(function (t) { return X.base[t] ? X.base[t][i] : null; }); return mean(v); }
      var tys = Object.keys(types).sort(), byType = tys.map(function (ty) { return level(names.filter(function (t) { return info[t].type === ty; })); });
      [['mtask', level(names)], ['mtype', mean(byType)]].forEach(function (kv) { var c = cellOf(tr, kv[0]); if (c) c.textContent = kv[1] == null ? '–' : pct(kv[1]); });
      tys.forEach(function (ty, k) { var c = cellOf(tr, 'type:' + ty); if (c) c.textContent = byType[k] == null ? '–' : pct(byType[k]); });
      var c = cellOf(tr, 'ntasks'); if (c) c.textContent = names.filter(function (t) { return X.base[t]; }).length + '/' + names.length;
    });
    // the board's order for this choice, then the reader's sort on top of it
    res.rows.forEach(function (r) { var tr = body.querySelector('tr[data-model="' + CSS.escape(r.model) + '"]'); if (tr) body.appendChild(tr); });
    Array.from(body.rows).forEach(function (tr) { if (!by[tr.dataset.model]) body.appendChild(tr); });
    if (sort) sortBy(sort.key, sort.dir);
    Array.from(headRow.cells).forEach(function (th) {
      th.setAttribute('aria-sort', sort && keyOf(th) === sort.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none');
    });
    $('nomatch').hidden = visible > 0;
    $('nomatch').textContent = names.length ? 'No model matches these filters: clear the search or a row filter.'
      : 'No task matches this choice of benchmark, task types, domains, languages, task modality and tasks.';
    document.querySelectorAll('details.pick').forEach(function (d) {
      var n = d.querySelectorAll('input:checked').length, of = d.querySelectorAll('input').length;
      d.querySelector('summary').textContent = d.dataset.label + ': ' + (n ? n + ' of ' + of : 'all');
    });
    var note = (all ? 'Ranked over all ' + names.length + ' tasks of the board' : 'Ranked over the ' + names.length + ' chosen tasks of ' + order.length
      + ' (as `maeb leaderboard --tasks` ranks them)') + ' by the Borda count under ' + RULES[rule] + '; a missing task earns 0; means over the chosen tasks.'
      + intervalNote(showInterval)
      + (res.hidden.length ? ' ' + res.hidden.length + ' model(s) with no complete chosen task are not shown but take rank numbers: '
        + res.hidden.slice(0, 5).map(function (h) { return h[0] + ' (rank ' + h[1] + ')'; }).join(', ') + '.' : '');
    if (!fromHash) ignored = [];  // a choice of the reader's own replaces the link's
    $('rule').textContent = note + (ignored.length ? ' The link names what this board does not hold, left out: ' + ignored.join(', ') + '.' : '');
    last = {names: names, rule: rule, result: res};
    var hash = toHash();
    $('share').href = hash || '#';
    if (!fromHash && location.hash !== hash) setUrl(hash);
    cite();
  }
  function sortBy(key, dir) {
    var rows = Array.from(body.rows), sign = dir === 'asc' ? 1 : -1;
    rows.sort(function (a, b) {
      var ca = cellOf(a, key), cb = cellOf(b, key), x = ca ? ca.dataset.v : '', y = cb ? cb.dataset.v : '';
      var nx = parseFloat(x), ny = parseFloat(y);
      if (isNaN(nx) && isNaN(ny)) return x === '' ? (y === '' ? 0 : 1) : y === '' ? -1 : sign * String(x).localeCompare(String(y));
      if (isNaN(nx)) return 1;  // blanks last, whichever the direction
      if (isNaN(ny)) return -1;
      return sign * (nx - ny);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function clickSort(th) {
    var key = keyOf(th);
    var dir = sort && sort.key === key ? (sort.dir === 'asc' ? 'desc' : 'asc') : (th.dataset.first || 'desc');  // best first
    sort = {key: key, dir: dir};
    apply();
    say(th.title ? th.textContent + ': ' + th.title : '');
  }
  Array.from(headRow.cells).forEach(function (th) {
    th.addEventListener('click', function () { clickSort(th); });
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); clickSort(th); } });
    th.addEventListener('focus', function () { say(th.title || ''); });
  });
  // what hover shows (a blank's reason, a cell's source, a task's description), shown on tap and focus too
  function say(text) { $('info').textContent = text; }
  table.addEventListener('focusin', function (e) { if (e.target.matches('abbr, span[title]')) say(e.target.title); });
  // -- the selection in the URL (#...): a view can be shared
  var FIELDS = ['bench', 'rule', 'view', 'search', 'model', 'modality', 'size', 'license', 'open'], PICKS = ['type', 'domain', 'lang', 'group', 'task'];
  var defaults = {};
  FIELDS.forEach(function (f) { defaults[f] = $('f-' + f).value; });
  function toHash() {
    var p = new URLSearchParams();
    FIELDS.forEach(function (f) { var v = $('f-' + f).value; if (v !== defaults[f]) p.set(f, v); });
    PICKS.forEach(function (f) { picked(f).forEach(function (v) { p.append(f, v); }); });
    if (sort) p.set('sort', sort.key + ':' + sort.dir);
    var s = p.toString();
    return s ? '#' + s : '';
  }
  var ignored = [];  // what the link named that this board does not hold (a typo, another board's task): said, not silently dropped
  function fromHash(given) {  // the view a link names: `given` (load's), else the page's own #...
    var p = new URLSearchParams((typeof given === 'string' ? given : location.hash).replace(/^#/, ''));
    ignored = [];
    FIELDS.forEach(function (f) {
      var el = $('f-' + f), v = p.has(f) ? p.get(f) : defaults[f];
      if (el.tagName === 'SELECT' && !Array.from(el.options).some(function (o) { return o.value === v; })) {
        if (p.has(f)) ignored.push(f + ' ' + v);
        v = defaults[f];
      }
      el.value = v;
    });
    PICKS.forEach(function (f) {
      var vs = p.getAll(f), inputs = Array.from($('f-' + f).querySelectorAll('input'));
      inputs.forEach(function (i) { i.checked = vs.indexOf(i.value) >= 0; });
      vs.forEach(function (v) { if (!inputs.some(function (i) { return i.value === v; })) ignored.push(f + ' ' + v); });
    });
    var s = p.get('sort') || '', cut = s.lastIndexOf(':'), key = s.slice(0, cut), dir = s.slice(cut + 1);  // a task key holds ':'
    sort = cut > 0 && (dir === 'asc' || dir === 'desc') && Array.from(headRow.cells).some(function (th) { return keyOf(th) === key; })
      ? {key: key, dir: dir} : null;
    apply(true);
  }
  window.addEventListener('hashchange', fromHash);
  function setUrl(hash) {  // an embedded page (srcdoc, a sandbox) may not change its URL: the view still works
    try { history.replaceState(null, '', hash || location.pathname + location.search); } catch (e) { /* no shared link there */ }
  }
  $('reset').addEventListener('click', function () { setUrl(''); fromHash(); });
  document.querySelectorAll('#filters select, #filters input, #row-filters select, #row-filters input').forEach(function (el) {
    el.addEventListener('input', function () { apply(); });
  });
  // -- the current view as CSV: the columns and rows shown, in their order, the numbers shown
  function csvCell(v) {
    v = String(v);
    // a spreadsheet would run it as a formula: prefixed with ' (OWASP); a number (a signed score, -3.2) stays a number
    if (/^[=+\-@\t\r]/.test(v) && !/^-?\d+(\.\d+)?$/.test(v)) v = "'" + v;
    return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  }
  function csv() {
    var heads = Array.from(headRow.cells).filter(function (th) { return !th.hidden; });
    var lines = [heads.map(function (th) {
      var c = th.cloneNode(true); c.querySelectorAll('.flat').forEach(function (f) { f.remove(); });  // the header, not its mark
      return csvCell(c.textContent.trim());
    }).join(',')];
    Array.from(body.rows).filter(function (tr) { return !tr.hidden; }).forEach(function (tr) {
      lines.push(heads.map(function (th) {
        var key = keyOf(th), c = cellOf(tr, key);
        if (!c) return '';
        if (key === 'model') return csvCell(tr.dataset.model);
        if (key === 'rank' || key === 'interval' || key === 'ntasks') return csvCell(c.textContent.trim());
        return c.dataset.v === '' ? '' : csvCell(pct(parseFloat(c.dataset.v)));
      }).join(','));
    });
    return lines.join('\n') + '\n';
  }
  $('download').addEventListener('click', function () {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([csv()], {type: 'text/csv'}));
    a.download = (meta.benchmark || 'maeb') + '-leaderboard.csv';
    document.body.appendChild(a); a.click(); a.remove();
  });
  // -- the cite box: this view of the board, with the rule and the tasks it ranks
  // a field's text as BibTeX and LaTeX read it: BibTeX counts every brace (\{ too), so a name's braces are
  // \textbraceleft{}, never one that closes the field and opens another (title = {X}, author = {...})
  var BIB = {'\\': '\\textbackslash{}', '{': '\\textbraceleft{}', '}': '\\textbraceright{}', '$': '\\$', '&': '\\&',
    '#': '\\#', '_': '\\_', '%': '\\%', '^': '\\textasciicircum{}', '~': '\\textasciitilde{}'};
  function bib(text) { return String(text).replace(/[\\{}$&#_%^~]/g, function (c) { return BIB[c]; }); }
  function cite() {
    var when = (meta.generated || '').slice(0, 10), n = last.names.length;
    // the link of this view as the page writes it (a link it was opened with may hold raw braces), braces and
    // backslashes of the address percent-encoded
    var link = (location.href.split('#')[0] + toHash()).replace(/[{}\\\s]/g, function (c) { return encodeURIComponent(c); });
    $('cite-text').textContent = '@misc{maeb_leaderboard_' + when.replace(/-/g, '') + ',\n'
      + '  title = {' + bib(meta.benchmark || 'maeb results') + ' leaderboard' + (n === order.length ? '' : ', ' + n + ' of ' + order.length + ' tasks') + '},\n'
      + '  note = {maeb ' + bib(meta.maeb_version) + ', Borda rule ' + bib(last.rule) + ', generated ' + bib(when) + '},\n'
      + '  howpublished = {\\url{' + link + '}}\n}';
  }
  // -- the model card
  var dialog = $('card'), opener = null;
  function el(tag, text) { var e = document.createElement(tag); e.textContent = text; return e; }
  function breakable(text) {  // break points before a capital or digit after a small letter, before the word of an acronym run
    // (Sound8KT2A|Retrieval), and after / _ - . : never inside a word
    var frag = document.createDocumentFragment();
    String(text).split(/(?<=[a-z])(?=[A-Z0-9])|(?<=[A-Z0-9])(?=[A-Z][a-z])|(?<=[\/_.\-])/).forEach(function (part, i) {
      if (i) frag.appendChild(document.createElement('wbr'));
      frag.appendChild(document.createTextNode(part));
    });
    return frag;
  }
  function show(model, from) {
    var card = data.cards[model], box = $('card-body');
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
      if (f[0] === 'Reference' && /^https?:[/][/][^\s]+$/i.test(f[1])) { var a = el('a', f[1]); a.href = f[1]; dd.appendChild(a); }
      else dd.appendChild(breakable(f[1]));
      dl.appendChild(dd);
    });
    box.appendChild(dl);
    var t = document.createElement('table'), head = t.createTHead().insertRow();
    ['Task', 'Type', 'Score (%) ±band [interval]', 'From'].forEach(function (h) { head.appendChild(el('th', h)); });
    var tb = t.createTBody();
    data.scores[model].forEach(function (s) {
      var tr = tb.insertRow();
      s.forEach(function (v) { var td = document.createElement('td'); td.appendChild(breakable(v)); tr.appendChild(td); });
    });
    box.appendChild(t);
    opener = from || null;
    dialog.showModal();
    $('card-close').focus();
  }
  body.addEventListener('click', function (e) {
    var marked = e.target.closest('abbr, span[title]');
    if (marked) { say(marked.title); return; }  // a tap on a blank or a mark shows its reason, not the card
    var td = e.target.closest('td'), tr = e.target.closest('tr');
    if (td && td.title) say(td.title);
    if (tr) show(tr.dataset.model, tr);
  });
  body.addEventListener('keydown', function (e) {
    var tr = e.target.closest('tr');
    if (tr && e.target === tr && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); show(tr.dataset.model, tr); }
  });
  $('card-close').addEventListener('click', function () { dialog.close(); });
  dialog.addEventListener('close', function () { if (opener) opener.focus(); });
  // for readers' scripts and the tests: load(hash) shows the view a shared link names
  window.maebView = {compute: compute, selection: selection, csv: csv, apply: apply, state: function () { return last; },
    load: function (hash) { setUrl(hash); fromHash(hash || ''); }};
  fromHash();
  document.body.dataset.ready = 'yes';
})();
"""


BORDA = (
    "Rank is the Borda count, as on mteb's leaderboard: within each task the models are ranked (ties share the average "
    "rank), a model earns points by its rank, and the ranks order the total points (ties share the best rank). Under "
    "mteb's rule a model earns n_models - rank on a task (n_models: the models shown); under the MAEB paper's rule "
    "n_task - rank (n_task: the models that ran the task), so only against the models that ran it. A model that lacks "
    "a task earns nothing for it, and a large win counts no more than a narrow one, so a model with a higher mean can "
    "rank below one with a lower mean that beats more models on more tasks. Choosing a benchmark, task types, domains, "
    "languages, a task modality or tasks recomputes ranks and means over the chosen tasks, as `maeb leaderboard --tasks "
    "... --borda RULE` does; the Borda rule choice switches the rule. Means are blank (n/a) where a task of the mean "
    "is missing: hover over or tap n/a for which."
)


def _borda_line(board: Board) -> str:
    """The line naming the rule that ranked the board (--borda), as markdown writes it under its table."""
    from .report import borda_line

    return borda_line(board)


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
        "<span>100</span><span>– no result; n/a: a mean lacks a task (hover or tap); hover or tap a cell for where its score"
        f" comes from; click a row (or Tab to it and press Enter) for the model's card; click a header to sort{refs}</span></div>"
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
The choice of tasks recomputes ranks and means; the row filters only hide rows.</p>
{_filters(board, model_cards, benches, show_tasks)}
{legend}
<p id="rule" aria-live="polite"></p>
{_table(board, model_cards, facts, show_tasks, base, flat)}
<p id="info" aria-live="polite"></p>
{"".join(f'<p id="{i}">{html.escape(n)}</p>' for i, n in notes)}
{f'<p id="uncertainty">Uncertainty: {html.escape(board.uncertainty.summary())}.</p>' if board.uncertainty else ""}
{_tasks_table(board) if per_task == "rows" else ""}
<h2 id="ranks">Ranks</h2>
<p id="borda">{html.escape(BORDA)}</p>
<p id="borda-rule">{html.escape(_borda_line(board))}</p>
<h2>Figures</h2>
{_figures(board, model_cards, results)}
<details id="cite"><summary>Cite this view</summary><p>This view of the board (its URL holds the choice of tasks
and rows). Cite also the benchmark's paper and each model's, as their authors ask.</p><pre id="cite-text"></pre></details>
<dialog id="card" aria-label="model card"><button id="card-close" type="button">Close</button><div id="card-body"></div></dialog>
{json_script("leaderboard-data", to_json(board))}
{json_script("explore-data", _explore_data(board, base))}
{json_script("page-data", _page_data(board, model_cards))}
{json_script("bench-data", benches)}
<script>{_SCRIPT}</script>"""
    return html_page(f"{title} leaderboard", (*_CSS,), body).replace(
        '<meta charset="utf-8">', '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">', 1
    )
