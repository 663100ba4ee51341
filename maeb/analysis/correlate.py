"""`maeb correlate`: how well per-model means on a task set predict an external score (for example
an audio LLM's MMAU score against its encoder's MAEB scores).

Per model: the mean of its main scores over the chosen tasks (each task's score as the leaderboard
computes it, maeb.analysis.leaderboard.load_board); a model missing any task of the set is left out and
listed. External scores come from a CSV (a model column and a score column); names are matched
exactly, then by the part after the last "/" ignoring case (a suffix two result models share
matches neither); unmatched names are listed.

Statistics over the n matched models, x = the per-model means, y = the external scores:
- Pearson r (scipy.stats.pearsonr), Spearman rho (scipy.stats.spearmanr: Pearson r of the ranks,
  ties sharing their average rank), and R^2 of the least-squares line y = a + b x, which for one
  predictor with an intercept is exactly r^2.
- Bootstrap intervals, two of each: over tasks (draw T tasks from the T with replacement, recompute
  every model's mean, recompute the statistic against the same y) and over models (draw n of the
  (x, y) pairs with replacement). 95% percentile intervals (the 2.5th and 97.5th percentiles of the
  replicates); a replicate whose statistic is undefined (all x or all y equal: a model drawn n
  times) is left out and counted.

Preset "maeb-llm", the paper's setting: MAEB (arXiv 2602.16008) correlates four audio LLMs' MMAU
scores (Qwen2-Audio, SALMONN, LTU, Pengi) with their encoders' scores on "26 MAEB+ classification
tasks" (R^2 = 0.86), but does not name the 26. The preset is every MAEB+ task of type
AudioClassification (the linear-probe classification type; multilabel and zero-shot classification
are types of their own in MAEB): 30 tasks, 4 more than the paper's 26, which cannot be told apart
from what is published. Give --tasks for another list."""

from __future__ import annotations

import csv
import html
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, rankdata, spearmanr

from ..core.errors import DataError, MaebError
from .notes import count
from .tables import PLAIN_CSS, html_page, html_table, markdown_table, td

PAPER_TASK_COUNT = 26
PRESET_NOTES = {
    "maeb-llm": (
        "preset maeb-llm: the {n} MAEB+ tasks of type AudioClassification. The paper correlates MMAU with "
        f"{PAPER_TASK_COUNT} MAEB+ classification tasks but does not list them, so its exact set cannot be rebuilt; "
        "pass --tasks to use another list."
    )
}
STATS = ("pearson_r", "spearman_rho", "r_squared")


def preset_tasks(name: str) -> list[str]:
    """The tasks of a named preset, in the catalog's order."""
    from ..spec import catalog

    if name != "maeb-llm":
        raise MaebError(f"unknown correlate preset {name!r}; the presets are: {', '.join(PRESET_NOTES)}")
    bench = catalog.find_benchmark("MAEB+")
    return [s.name for s in catalog.benchmark_specs(bench) if s.mteb_type == "AudioClassification"]


def preset_note(name: str) -> str:
    """What a preset's task set is and how it differs from the paper's, with its task count."""
    return PRESET_NOTES[name].format(n=len(preset_tasks(name)))


# -- external scores --------------------------------------------------------------------------
def read_external(path: Path, model_column: str = "model", score_column: str = "score") -> dict[str, float]:
    """Model name -> score from a CSV; a row with an empty score is passed over (not yet measured)."""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            columns = reader.fieldnames or []
            for wanted, option in ((model_column, "--model-column"), (score_column, "--score-column")):
                if wanted not in columns:
                    raise DataError(f"{path}: no column {wanted!r} ({option}); its columns are: {', '.join(columns)}")
            out: dict[str, float] = {}
            for number, row in enumerate(reader, start=2):
                name, text = (row[model_column] or "").strip(), (row[score_column] or "").strip().rstrip("%")
                if not name or not text:
                    continue
                try:
                    value = float(text)
                except ValueError:
                    raise DataError(f"{path}:{number}: {score_column} {text!r} of {name!r} is not a number") from None
                if not np.isfinite(value):
                    raise DataError(f"{path}:{number}: {score_column} of {name!r} is {text}; give a finite number")
                if name in out:
                    raise DataError(f"{path}:{number}: {name!r} appears twice; keep one row per model")
                out[name] = value
    except OSError as exc:
        raise DataError(f"{path}: cannot read the external scores ({exc.strerror})") from None
    return out


def _suffix(name: str) -> str:
    return name.rsplit("/", 1)[-1].strip().lower()


def match_names(external: list[str], models: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """External name -> result model, and external name -> why it matched none. Exact matches are
    made first so that a suffix match cannot take a model another row names exactly."""
    by_suffix = defaultdict(list)
    for m in models:
        by_suffix[_suffix(m)].append(m)
    matched = {name: name for name in external if name in set(models)}
    taken = {m: e for e, m in matched.items()}
    unmatched = {}
    for name in external:
        if name in matched:
            continue
        hits = by_suffix.get(_suffix(name), [])
        if len(hits) == 1 and hits[0] not in taken:
            matched[name] = taken[hits[0]] = hits[0]
        elif len(hits) == 1:
            unmatched[name] = f"its model {hits[0]} is already matched by {taken[hits[0]]!r}"
        elif hits:
            unmatched[name] = f"ambiguous: {', '.join(hits)}"
        else:
            unmatched[name] = "no result model of that name"
    return matched, unmatched


# -- statistics -------------------------------------------------------------------------------
def batch_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row of x with the same row of y (NaN where a row is constant): the
    bootstrap's thousands of replicates in one array operation instead of one scipy call each."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=-1) / np.sqrt((xc * xc).sum(axis=-1) * (yc * yc).sum(axis=-1))
    # a spread that is rounding noise (all values equal up to the last bits) is no spread; noise
    # relative to the values' own size, so scores on any scale (1e-13 or 1e6) keep their spread
    flat = (np.ptp(x, axis=-1) <= 1e-12 * np.abs(x).max(axis=-1)) | (np.ptp(y, axis=-1) <= 1e-12 * np.abs(y).max(axis=-1))
    return np.where(flat, np.nan, np.clip(r, -1.0, 1.0))


def batch_stats(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Pearson r, Spearman rho (Pearson on ranks) and R^2 of each row pair, as arrays."""
    r = batch_pearson(x, y)
    rho = batch_pearson(rankdata(x, axis=-1), rankdata(y, axis=-1))
    return {"pearson_r": r, "spearman_rho": rho, "r_squared": r * r}


def point_stats(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The statistics on the observed points, by scipy's functions (batch_stats is their vectorised twin)."""
    r = float(pearsonr(x, y).statistic)
    return {"pearson_r": r, "spearman_rho": float(spearmanr(x, y).statistic), "r_squared": r * r}


def _interval(values: np.ndarray) -> dict:
    ok = values[np.isfinite(values)]
    low, high = (float(v) for v in np.percentile(ok, [2.5, 97.5])) if ok.size else (None, None)
    return {"low": low, "high": high, "undefined": int(values.size - ok.size)}


def bootstrap(matrix: np.ndarray, y: np.ndarray, n: int, seed: int) -> dict[str, dict[str, dict]]:
    """Percentile intervals of each statistic; matrix is models x tasks, y the external scores."""
    rng = np.random.default_rng(seed)
    n_models, n_tasks = matrix.shape
    tasks = rng.integers(0, n_tasks, size=(n, n_tasks))
    x_tasks = matrix[:, tasks].mean(axis=2).T  # replicate x model
    over_tasks = batch_stats(x_tasks, np.broadcast_to(y, x_tasks.shape))
    models = rng.integers(0, n_models, size=(n, n_models))
    over_models = batch_stats(matrix.mean(axis=1)[models], y[models])
    return {
        "tasks": {k: _interval(v) for k, v in over_tasks.items()},
        "models": {k: _interval(v) for k, v in over_models.items()},
    }


# -- the whole analysis -----------------------------------------------------------------------
@dataclass
class Correlation:
    """The analysis' result: the points, the statistics, their intervals and what was left out."""

    tasks: list[str]
    models: list[dict]  # model, external_name, mean, external: the points
    stats: dict[str, float]
    intervals: dict[str, dict[str, dict]]
    fit: dict[str, float]  # least-squares line: external = intercept + slope * mean
    bootstrap: int
    seed: int
    external: str
    score_column: str
    left_out: dict[str, list[str]] = field(default_factory=dict)  # model -> its missing tasks
    left_out_names: dict[str, str] = field(default_factory=dict)  # left-out model -> its name in the CSV
    unmatched: dict[str, str] = field(default_factory=dict)  # external name -> why
    without_external: list[str] = field(default_factory=list)  # complete models the CSV lacks
    preset: str | None = None
    note: str | None = None

    def as_dict(self) -> dict:
        """Every field, as plain JSON-ready values."""
        from dataclasses import asdict

        return asdict(self)


def correlate(
    results: list[Path],
    external: Path,
    tasks: list[str] | None = None,
    preset: str | None = None,
    model_column: str = "model",
    score_column: str = "score",
    n_bootstrap: int = 1000,
    seed: int = 0,
) -> tuple[Correlation, list[str]]:
    """The analysis, and the reader's report lines (rejected files, notes) for stderr."""
    from .leaderboard import load_board, report_lines

    if (tasks is None) == (preset is None):
        raise MaebError("correlate needs a task set: give --tasks or --preset, not both")
    if n_bootstrap < 1:
        raise MaebError(f"--bootstrap {n_bootstrap}: give a number of resamples of at least 1")
    scores = read_external(external, model_column, score_column)  # a bad column fails before the results are read
    board, problems = load_board(results, tasks=preset_tasks(preset) if preset else tasks)
    names = board.task_filter or []
    if board.missing_tasks:
        raise MaebError(
            f"no results at all for {len(board.missing_tasks)} of the {len(names)} tasks ({', '.join(board.missing_tasks)}); "
            "every model would be left out: drop them with --tasks"
        )
    left_out = {r.model: [t for t in names if r.tasks.get(t) is None] for r in board.rows}
    left_out = {m: missing for m, missing in left_out.items() if missing}
    matched, unmatched = match_names(list(scores), [r.model for r in board.rows])
    by_model = {m: e for e, m in matched.items()}
    complete = [r for r in board.rows if r.model not in left_out]
    points = [r for r in complete if r.model in by_model]
    if len(points) < 3:
        raise MaebError(
            f"only {len(points)} model(s) have all {len(names)} tasks and an external score in {external} "
            f"({len(left_out)} left out for missing tasks, {len(unmatched)} external names unmatched); a correlation needs 3"
        )
    matrix = np.array([[r.tasks[t] for t in names] for r in points], dtype=float)
    x = matrix.mean(axis=1)
    y = np.array([scores[by_model[r.model]] for r in points], dtype=float)
    for values, what in ((y, f"the external scores ({score_column!r})"), (x, f"the models' means on the {len(names)} tasks")):
        if np.ptp(values) <= 1e-12 * np.abs(values).max():  # the rule batch_pearson applies to each resample
            raise MaebError(f"{what} of the {len(points)} models are all equal ({values[0]:g}); a correlation is not defined")
    slope, intercept = np.polyfit(x, y, 1)
    result = Correlation(
        tasks=names,
        models=[
            {"model": r.model, "external_name": by_model[r.model], "mean": float(m), "external": float(v)}
            for r, m, v in zip(points, x, y)
        ],
        stats=point_stats(x, y),
        intervals=bootstrap(matrix, y, n_bootstrap, seed),
        fit={"slope": float(slope), "intercept": float(intercept)},
        bootstrap=n_bootstrap,
        seed=seed,
        external=str(external),
        score_column=score_column,
        left_out=left_out,
        left_out_names={m: by_model[m] for m in left_out if m in by_model},
        unmatched=unmatched,
        without_external=[r.model for r in complete if r.model not in by_model],
        preset=preset,
        note=preset_note(preset) if preset else None,
    )
    return result, report_lines(problems, board.notes)


# -- outputs ----------------------------------------------------------------------------------
_CSS = (*PLAIN_CSS, "td:first-child, th:first-child { text-align: left; white-space: nowrap; }")
LABELS = {"pearson_r": "Pearson r", "spearman_rho": "Spearman rho", "r_squared": "R^2"}


STATS_HEAD = ("statistic", "value", "95% CI over tasks", "95% CI over models")


def _stats_rows(c: Correlation) -> list[list[str]]:
    return [[LABELS[k], f"{c.stats[k]:.3f}", _ci(c.intervals["tasks"][k]), _ci(c.intervals["models"][k])] for k in STATS]


def _points_head(c: Correlation, external_name: str) -> list[str]:
    return ["model", external_name, "mean (%)", c.score_column]


def _points_rows(c: Correlation) -> list[list[str]]:
    """The points' cells as text (HTML escapes them)."""
    return [[p["model"], p["external_name"], f"{100 * p['mean']:.1f}", f"{p['external']:g}"] for p in c.models]


def _ci(interval: dict) -> str:
    if interval["low"] is None:
        return "undefined"
    text = f"[{interval['low']:.3f}, {interval['high']:.3f}]"
    return text + (f" ({interval['undefined']} undefined)" if interval["undefined"] else "")


def to_text(c: Correlation) -> str:
    """The markdown report the command prints: statistics, points and what was left out."""
    lines = [
        f"Per-model mean on {count(len(c.tasks), 'task')} vs {c.score_column!r} of {c.external}: "
        f"{count(len(c.models), 'model')}, {count(len(c.tasks), 'task')}; {c.bootstrap} bootstrap resamples (seed {c.seed}), 95% percentile intervals",
    ]
    if c.note:
        lines.append(c.note)
    lines += ["", *markdown_table(STATS_HEAD, _stats_rows(c))]
    lines += ["", *markdown_table(_points_head(c, "name in the CSV"), _points_rows(c))]
    if c.left_out:
        lines += ["", "Left out (missing tasks of the set):"]
        for m, t in c.left_out.items():
            named = f" (in the CSV as {c.left_out_names[m]!r})" if m in c.left_out_names else ""
            lines.append(f"- {m}{named}: lacks {', '.join(t[:5])}{f' and {len(t) - 5} more' if len(t) > 5 else ''}")
    if c.unmatched:
        lines += ["", f"External names matching no result model ({c.external}):"]
        lines += [f"- {name}: {why}" for name, why in c.unmatched.items()]
    if c.without_external:
        lines += ["", f"Models with every task but no external score: {', '.join(c.without_external)}"]
    return "\n".join(lines) + "\n"


def to_json(c: Correlation) -> str:
    """The analysis as a JSON document, with the maeb version that made it."""
    from .. import __version__

    return json.dumps({"maeb_version": __version__, **c.as_dict()}, indent=2) + "\n"


def scatter_svg(c: Correlation, width: int = 640, height: int = 440) -> str:
    """Inline SVG: one circle per model with its label, and the least-squares line."""
    left, right, top, bottom = 70, 170, 20, 50  # room for axis labels and the model names on the right
    xs = [100 * p["mean"] for p in c.models]
    ys = [p["external"] for p in c.models]
    pad_x = (max(xs) - min(xs)) * 0.08 or 1.0
    pad_y = (max(ys) - min(ys)) * 0.08 or 1.0
    x0, x1, y0, y1 = min(xs) - pad_x, max(xs) + pad_x, min(ys) - pad_y, max(ys) + pad_y

    def px(v):
        return left + (v - x0) / (x1 - x0) * (width - left - right)

    def py(v):
        return height - bottom - (v - y0) / (y1 - y0) * (height - top - bottom)

    out = [
        f'<svg id="scatter" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="per-model mean against {html.escape(c.score_column)}">',
        f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" fill="none" stroke="#bbb"/>',
    ]
    for v in np.linspace(x0, x1, 5):
        out.append(f'<text x="{px(v):.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="10">{v:.1f}</text>')
    for v in np.linspace(y0, y1, 5):
        out.append(f'<text x="{left - 6}" y="{py(v) + 3:.1f}" text-anchor="end" font-size="10">{v:.3g}</text>')
    out.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle" font-size="12">'
        f"mean main score over {count(len(c.tasks), 'task')} (%)</text>"
    )
    out.append(
        f'<text x="14" y="{(top + height - bottom) / 2}" transform="rotate(-90 14 {(top + height - bottom) / 2})" '
        f'text-anchor="middle" font-size="12">{html.escape(c.score_column)}</text>'
    )
    # the fit is in the data's own units (mean in [0, 1]) while the x axis is in %; the line is
    # clipped to the plot box, where a steep fit would otherwise run over the labels
    a, b = c.fit["intercept"], c.fit["slope"]
    box = f'x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}"'
    out.append(f'<defs><clipPath id="plot-area"><rect {box}/></clipPath></defs>')
    out.append(
        f'<line class="fit" x1="{px(x0):.1f}" y1="{py(a + b * x0 / 100):.1f}" x2="{px(x1):.1f}" '
        f'y2="{py(a + b * x1 / 100):.1f}" stroke="#c83232" stroke-dasharray="5 3" clip-path="url(#plot-area)"/>'
    )
    for p, x, y in zip(c.models, xs, ys):
        name = html.escape(p["model"])
        out.append(
            f'<circle class="point" cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="#2864c8">'
            f"<title>{name}: {x:.1f} / {y:g}</title></circle>"
        )
        out.append(
            f'<text class="label" x="{px(x) + 6:.1f}" y="{py(y) - 5:.1f}" font-size="10">{html.escape(p["model"].split("/")[-1])}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def to_html(c: Correlation) -> str:
    """A page in the style of the leaderboard's (maeb.analysis.report): no script, nothing fetched."""
    title = f"Per-model mean on {count(len(c.tasks), 'task')} vs {html.escape(c.score_column)}"
    stats = html_table(STATS_HEAD, [[td(text) for text in row] for row in _stats_rows(c)], "stats")
    points = [[td(html.escape(text)) for text in row] for row in _points_rows(c)]
    extra = ""
    if c.left_out:
        items = "".join(f"<li>{html.escape(m)}: lacks {html.escape(', '.join(t))}</li>" for m, t in c.left_out.items())
        extra += f"<h2>Left out (missing tasks)</h2><ul>{items}</ul>"
    if c.unmatched:
        items = "".join(f"<li>{html.escape(n)}: {html.escape(w)}</li>" for n, w in c.unmatched.items())
        extra += f"<h2>Unmatched external names</h2><ul>{items}</ul>"
    note = f"<p>{html.escape(c.note)}</p>" if c.note else ""
    body = f"""<h1>{title}</h1>
<p>{count(len(c.models), "model")}, {count(len(c.tasks), "task")}; external scores: column {html.escape(c.score_column)} of
{html.escape(c.external)}. {c.bootstrap} bootstrap resamples (seed {c.seed}), 95% percentile intervals.</p>
{note}
{stats}
{scatter_svg(c)}
<h2>Models</h2>
{html_table(_points_head(c, "external name"), points, "points")}
{extra}
<h2>Tasks</h2><p>{html.escape(", ".join(c.tasks))}</p>"""
    return html_page(title, _CSS, body)


def command(args) -> int:
    """The command line's `correlate`: text to stdout, report lines to stderr, --json/--html files."""
    import sys

    from ..results.write import write_text_atomic

    result, lines = correlate(
        args.results,
        args.external,
        args.tasks,
        args.preset,
        args.model_column,
        args.score_column,
        args.bootstrap,
        args.seed,
    )
    for line in lines:
        print(line, file=sys.stderr)
    sys.stdout.write(to_text(result))
    for path, render in ((args.json, to_json), (args.html, to_html)):
        if path:
            write_text_atomic(path, render(result))
            print(f"wrote {path}", file=sys.stderr)
    return 0
