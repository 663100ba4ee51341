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

from .boardjson import to_json
from .cards import Card, cards, csv_source, provenance, shuffled_controls
from .leaderboard import Board
from .notes import (
    FLAT_MARK,
    board_title,
    clustering_note,
    count,
    experiment_note,
    flat_note,
    flat_tasks,
    fragile_mark,
    fragile_note,
    fragile_span,
    leak_note,
    leak_span,
    shuffled_text,
    task_pct,
    tasks_table,
    tie_note,
    tie_span,
)
from .page_assets import CSS, SCRIPT
from .tables import json_script, pct

SIZES = ((1e8, "under 100M"), (1e9, "100M–1B"), (float("inf"), "1B and over"))


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
        leak = leak_span(r) + tie_span(r)
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
            where = f"{r.model} on {t.name}: {task_pct(board, r, t.name) or 'no complete result'}; {provenance(board, r.model, t.name)}"
            if (r.model, t.name) in shuffled:  # the model's own control on the task
                where += f"; its label-shuffled control: {pct(shuffled[(r.model, t.name)])}"
            marks = leak_span(r, t.name) + tie_span(r, t.name) + fragile_span(r, t.name)
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
    (
        "Chance",
        "random predictions (random labels, scores, cluster ids or orders), its expectation: exact where a closed form exists, a mean of seeded draws with its standard error otherwise (clustering)",
    ),
    (
        "Majority",
        "always the most frequent class (retrieval: the most often relevant documents first), its expectation over the order of tied classes or documents",
    ),
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

    from .baselines import board_chance_errors, chance_text

    errors = board_chance_errors(board)

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
            drawn = errors.get(t.name) if i == 0 else None
            text = "–" if v is None else chance_text(v, drawn) if i == 0 else pct(v)
            how = f' title="{html.escape(_chance_how(drawn))}"' if v is not None and drawn is not None else ""
            cells.append(f'<td class="task{hidden}" data-task="{html.escape(t.name)}"{how}>{html.escape(text)}</td>')
        rows.append(f'<tr class="reference">{"".join(cells)}</tr>')
    return f"<tfoot>{''.join(rows)}</tfoot>"


def _chance_how(known: tuple[str, float]) -> str:
    """How a task's chance level is known, for its cell's hover text."""
    rule, error = known
    if rule != "draws":
        return "chance: exact (closed form)"
    if error != error:  # nan: an older result stored no error
        return "chance: a mean of seeded draws; its standard error was not stored (an older result)"
    return f"chance: a mean of seeded draws, standard error {100 * error:.2f} points"


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
                (task_pct(board, r, t.name) or "–") + fragile_mark(r, t.name) + shuffled_text(shuffled, r.model, t.name),
                provenance(board, r.model, t.name),
            ]
            for t in board.tasks
        ]
        for r in board.rows
    }
    return {"cards": {m: c.as_dict() for m, c in model_cards.items()}, "scores": scores}


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
    from .notes import borda_line

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
    title = html.escape(board_title(board) if board.benchmark or board.task_filter is not None else "maeb results")
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
    flat = flat_tasks(board, base)
    notes = [
        (i, n)
        for i, n in (
            ("experiments", experiment_note(board)),
            ("leaks", leak_note(board)),
            ("ties", tie_note(board)),
            ("fragile", fragile_note(board)),
            ("separation", flat_note(flat)),
            ("clustering-chance", clustering_note(board, base)),
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
{tasks_table(board) if per_task == "rows" else ""}
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
<script>{SCRIPT}</script>"""
    return html_page(f"{title} leaderboard", (*CSS,), body).replace(
        '<meta charset="utf-8">', '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">', 1
    )
