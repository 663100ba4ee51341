"""MAEB-robust: selected tasks x perturbation ladders (maeb.audio.perturb), reported as each model's
degradation curve (mean main score against ladder step, clean first) and its area, in markdown,
JSON and an HTML page with one inline-SVG plot per ladder.

`python -m maeb robust` runs it on MAEB-lite offline (built or reused first); results are written
in mteb's layout (the clean run in the model's folder, each step in an experiments folder), so an
interrupted view resumes and a rerun only reads them.

Area: the trapezoid rule over equally spaced steps (clean at 0, the last step at 1), so it is
the ladder's mean score in score units; retained = area / clean (1.0: the model loses nothing)."""

from __future__ import annotations

import argparse
import html
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.tables import PLAIN_CSS, cell, html_page, html_table, json_script, markdown_table, pct

TASKS = (  # one or two per domain and several task types, where the offline models score well above chance
    "LiteSpokenDigits",
    "LiteLanguageID",
    "LiteSpeakerPairs",
    "LiteInstrumentFamily",
    "LiteSoundEvents",
    "LiteBirdSpecies",
)
LADDERS = {
    "noise": ("noise:snr=20", "noise:snr=10", "noise:snr=5", "noise:snr=0"),
    "codec": ("codec:format=mp3,bitrate=128", "codec:format=mp3,bitrate=32", "codec:format=mp3,bitrate=16"),
    "telephone": ("telephone",),
    "reverb": ("reverb:rt60=0.3", "reverb:rt60=0.8"),
}
MODELS = ("maeb/mfcc-stats", "google/speech-embedding", "resemble-ai/resemblyzer", "openai/whisper-tiny.en-clipwindow")
_CSS = (*PLAIN_CSS, "td:nth-child(1), th:nth-child(1) { text-align: left; white-space: nowrap; }")
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")


@dataclass
class Curve:
    """One model's mean main score over the tasks at each step of one ladder, clean first."""

    model: str
    ladder: str
    steps: list[str]  # "clean" first
    scores: list[float]  # mean main score over the tasks, per step
    per_task: dict[str, list[float]] = field(default_factory=dict)

    @property
    def area(self) -> float:
        """The ladder's mean score by the trapezoid rule (see `area`)."""
        return area(self.scores)

    @property
    def retained(self) -> float | None:
        """area / clean score; None when the clean score is 0."""
        return self.area / self.scores[0] if self.scores[0] else None


def area(scores: list[float]) -> float:
    """Trapezoid area over equally spaced steps from 0 to 1: the mean score in score units (a
    single step is its own score)."""
    if len(scores) == 1:
        return float(scores[0])
    pairs = zip(scores, scores[1:])
    return sum((a + b) / 2 for a, b in pairs) / (len(scores) - 1)


def run_view(models, tasks, ladders: dict, output_dir: Path, cache_dir: Path, lite_dir: Path | None, log=print) -> list[Curve]:
    """Every model on the tasks, clean and at every step of every ladder (each configuration a
    maeb.run.runner.run), gathered into curves."""
    from ..run.options import RunOptions
    from ..run.runner import run
    from ..spec import catalog

    specs = [catalog.find_task(t) for t in tasks]
    curves = []
    for name in models:
        meta = catalog.find_model(name)
        scores: dict[str, dict[str, float]] = {}
        for step in ("clean", *dict.fromkeys(s for steps in ladders.values() for s in steps)):
            perturb = () if step == "clean" else (step,)
            cfg = RunOptions(output_dir=output_dir, cache_dir=cache_dir, show_progress=False, lite_dir=lite_dir, perturb=perturb)
            summary = run(meta, specs, cfg, log=lambda m: None)
            scores[step] = {r.task: r.main_score for r in summary.results}
            log(f"{meta.name} {step}: mean {sum(scores[step].values()) / len(scores[step]):.4f}")
        for ladder, steps in ladders.items():
            chain = ["clean", *steps]
            per_task = {t: [scores[s][t] for s in chain] for t in tasks}
            means = [sum(scores[s][t] for t in tasks) / len(tasks) for s in chain]
            curves.append(Curve(meta.name, ladder, chain, means, per_task))
    return curves


def to_json(curves: list[Curve]) -> dict:
    """robust.json: every curve with its steps, scores, area, retained and per-task scores (6 places)."""
    return {
        "curves": [
            {
                "model": c.model,
                "ladder": c.ladder,
                "steps": c.steps,
                "scores": [round(s, 6) for s in c.scores],
                "area": round(c.area, 6),
                "retained": None if c.retained is None else round(c.retained, 6),
                "per_task": {t: [round(s, 6) for s in v] for t, v in c.per_task.items()},
            }
            for c in curves
        ]
    }


def to_markdown(curves: list[Curve]) -> str:
    """A table per ladder: models as rows, the steps' scores in %, area and retained."""
    out = []
    for ladder in dict.fromkeys(c.ladder for c in curves):
        group = [c for c in curves if c.ladder == ladder]
        rows = [[c.model, *(pct(s) for s in c.scores), pct(c.area), _retained(c)] for c in group]
        out += [f"### {ladder}\n", *markdown_table(["Model", *group[0].steps, "area", "retained"], rows), ""]
    return "\n".join(out)


def _retained(c: Curve) -> str:
    return "–" if c.retained is None else f"{c.retained:.3f}"


def _plot(group: list[Curve]) -> str:
    """Score (%) against ladder step, one line per model."""
    width, height, left, top, bottom = 520, 260, 48, 16, 70
    steps = group[0].steps
    plot_w, plot_h = width - left - 150, height - top - bottom
    low = max(0.0, min(min(c.scores) for c in group) - 0.05)
    high = min(1.0, max(max(c.scores) for c in group) + 0.05)
    span = high - low or 1.0

    def xy(i, v):
        x = left + (plot_w * i / (len(steps) - 1) if len(steps) > 1 else plot_w / 2)
        return x, top + plot_h * (1 - (v - low) / span)

    ladder = html.escape(group[0].ladder)
    parts = [
        f'<svg class="robust" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{ladder} degradation curves">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#999"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#999"/>',
    ]
    for k in range(5):
        v = low + span * k / 4
        _, y = xy(0, v)
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{100 * v:.0f}</text>')
    for i, step in enumerate(steps):
        x, _ = xy(i, low)
        label = html.escape(step.split(":", 1)[-1])
        parts.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 12}" font-size="10" text-anchor="end" '
            f'transform="rotate(-35 {x:.1f} {top + plot_h + 12})">{label}</text>'
        )
    for n, c in enumerate(group):
        colour = PALETTE[n % len(PALETTE)]
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(i, v) for i, v in enumerate(c.scores)))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>')
        for i, v in enumerate(c.scores):
            x, y = xy(i, v)
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{html.escape(c.model)} {html.escape(c.steps[i])}: {pct(v)}</title></circle>'
            )
        ly = top + 14 * n + 8
        parts.append(f'<rect x="{left + plot_w + 12}" y="{ly - 8}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{left + plot_w + 26}" y="{ly + 1}" font-size="11">{html.escape(c.model.split("/")[-1])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def to_html(curves: list[Curve], tasks) -> str:
    """robust.html: per ladder a plot and a table, then the curves as JSON; nothing fetched."""
    sections = []
    for ladder in dict.fromkeys(c.ladder for c in curves):
        group = [c for c in curves if c.ladder == ladder]
        head = ["Model", *group[0].steps, "area", "retained"]
        rows = []
        for c in group:
            cells = [(c.model, html.escape(c.model)), *[(s, pct(s)) for s in c.scores], (c.area, pct(c.area))]
            cells.append((c.retained, _retained(c)))
            rows.append([cell(v, t) for v, t in cells])
        sections.append(f"<h2>{html.escape(ladder)}</h2>\n{_plot(group)}\n{html_table(head, rows, sep='')}")
    body = f"""<h1>MAEB-robust</h1>
<p>Mean main score (%) over {len(tasks)} tasks ({html.escape(", ".join(tasks))}) against each perturbation ladder's step,
clean first. Area: the ladder's mean score by the trapezoid rule; retained: area / clean.</p>
{"".join(sections)}
{json_script("robust-data", to_json(curves))}"""
    return html_page("MAEB-robust", _CSS, body)


def write(curves: list[Curve], tasks, folder: Path) -> None:
    """robust.json, robust.md and robust.html into `folder`, each written atomically."""
    from ..results.write import write_text_atomic

    write_text_atomic(folder / "robust.json", json.dumps(to_json(curves), indent=2) + "\n")
    write_text_atomic(folder / "robust.md", to_markdown(curves))
    write_text_atomic(folder / "robust.html", to_html(curves, tasks))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `python -m maeb robust` (and of the old `python -m maeb.benchmarks.robust`)."""
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), help="MAEB-lite tasks (default: one or two per domain)")
    parser.add_argument("--ladders", nargs="+", choices=list(LADDERS), default=list(LADDERS))
    parser.add_argument("--output-dir", type=Path, default=Path("runs/maeb-robust"))
    parser.add_argument("--cache-dir", type=Path, help="the cache folder (default: $MAEB_CACHE_DIR or ~/.cache/maeb)")
    parser.add_argument("--lite-dir", type=Path, help="MAEB-lite's data (default: $MAEB_LITE_DIR or under the cache)")


def command(args: argparse.Namespace, cache_dir: Path, lite_dir: Path | None) -> int:
    """Build or reuse MAEB-lite in lite_dir (None: under the cache), run the view, write and print it
    (the front passes the folders, the environment's defaults filled in)."""
    from .lite import under_cache
    from .lite.build import build

    lite = lite_dir or under_cache(cache_dir)
    build(lite, log=print)
    curves = run_view(args.models, args.tasks, {k: LADDERS[k] for k in args.ladders}, args.output_dir, cache_dir, lite)
    write(curves, args.tasks, args.output_dir)
    print(to_markdown(curves))
    print(f"wrote {args.output_dir}/robust.{{html,md,json}}")
    return 0


if __name__ == "__main__":
    # `python -m maeb.benchmarks.robust` ran this view through maeb 0.3.x; since 0.4.0 the command line has it
    import sys

    print("maeb.benchmarks.robust is not a command since maeb 0.4.0: run `python -m maeb robust` (same flags)", file=sys.stderr)
    raise SystemExit(2)
