"""Issue 44 items 2 and 5: figures for a paper. A board of 67 models with long, alike names (wavlm-base-plus,
-sd, -sv; whisper-base, whisper-small ...) over tasks of 13 types, built from result files written here, drawn
at a column's width and a page's: each figure is as wide as asked and at most 9 in tall, no text under 6 pt,
every text and marker inside the figure (the forest's markers clear of its spines), the scatter labels
overlap no other label and no tick, the score axis is a mean over shared tasks with intervals, the models
left out are named, the Borda rule is named, and the correlation matrix is grouped by type with its counts
in a CSV. The text boxes are measured with matplotlib's renderer on the saved figure."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil

import numpy as np
import pytest

from maeb.analysis import figlayout as lay
from maeb.analysis.leaderboard import catalog_info, load_board
from maeb.spec import catalog

plt = pytest.importorskip("matplotlib.pyplot")
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.text import Text  # noqa: E402

BASES = [
    ("microsoft", "wavlm-base-plus", 94_400_000, 768),
    ("microsoft", "wavlm-base", 94_400_000, 768),
    ("microsoft", "wavlm-large", 315_000_000, 1024),
    ("openai", "whisper-base", 72_600_000, 512),
    ("openai", "whisper-small", 241_000_000, 768),
    ("openai", "whisper-medium", 769_000_000, 1024),
    ("facebook", "wav2vec2-base", 95_000_000, 768),
    ("facebook", "wav2vec2-large-xlsr-53", 317_000_000, 1024),
    ("facebook", "hubert-base-ls960", 94_700_000, 768),
    ("laion", "clap-htsat-unfused", 153_000_000, 512),
    ("laion", "larger_clap_general", 193_000_000, 512),
    ("google", "speech-embedding", 0, 96),
]
VARIANTS = ["", "-sd", "-sv", "-finetuned-librispeech", "-v2", "-fp16"]


def _names() -> list[tuple[str, int, int]]:
    out = []
    for variant in VARIANTS:
        for org, base, params, dim in BASES:
            out.append((f"{org}/{base}{variant}", params, dim))
    return out[:67]


def _tasks() -> list[tuple[str, str]]:
    """Up to two catalogue tasks of each type: (name, its main score)."""
    by_type: dict[str, list[tuple[str, str]]] = {}
    for name in catalog.task_names():
        info = catalog_info(name)
        if info is not None and not info.lower_is_better:
            by_type.setdefault(info.type, []).append((name, info.main_score))
    return [t for tasks in by_type.values() for t in tasks[:2]]


@pytest.fixture(scope="module")
def board67(tmp_path_factory):
    return write_board(tmp_path_factory.mktemp("board67"))


def write_board(root):
    """67 models' result files in mteb's layout under root, a few cells missing, every cell with a band."""
    rng = np.random.default_rng(44)
    tasks = _tasks()
    for k, (model, params, dim) in enumerate(_names()):
        folder = root / model.replace("/", "__", 1) / "r1"
        folder.mkdir(parents=True)
        meta = {"name": model, "revision": "r1", "n_parameters": params or None, "embed_dim": dim}
        (folder / "model_meta.json").write_text(json.dumps(meta))
        skill = 0.35 + 0.4 * rng.random()
        for j, (task, metric) in enumerate(tasks):
            if k >= 40 and (k + j) % 7 == 0:  # some of the later models lack a few tasks, as on a real board
                continue
            spec = catalog.find_task(task)
            value = float(np.clip(skill + 0.1 * rng.standard_normal(), 0.01, 0.99))
            scores = {
                split: [{metric: value, "main_score": value, "hf_subset": subset} for subset in spec.data.subsets]
                for split in spec.data.eval_splits
            }
            payload = {"task_name": task, "mteb_version": "2.26.24", "scores": scores, "evaluation_time": 1.0}
            payload["maeb"] = {"stability": {"band": 0.02}}  # an interval for every cell
            (folder / f"{task}.json").write_text(json.dumps(payload))
    return root


def _board(root, borda="mteb"):
    from maeb.analysis.uncertainty import compute, min_draws

    board, _ = load_board([root], None, {}, borda=borda)
    board.uncertainty = compute(board, draws=min_draws())
    return board


@pytest.fixture(scope="module")
def drawn(board67):
    """Every figure of the 67-model board at a column's width and at a page's, saved once (PNG) and measured."""
    from maeb.analysis import figures
    from maeb.analysis.cards import cards

    board = _board(board67)
    assert len(board.rows) == 67 and len(board.types) >= 13, (len(board.rows), board.types)
    out = {}
    for width in ("column", "page"):
        inches = lay.width_inches(width)
        figs, _ = figures.build(board, cards(board), [board67], inches)
        for f in figs:
            with plt.rc_context(figures.STYLE):
                f.figure.savefig(io.BytesIO(), format="png")  # the saved figure is the one measured
            f.figure.canvas.draw()  # at the figure's own dpi again (savefig drew the axis labels at 200)
        out[width] = (inches, {f.name: f for f in figs})
    return board, out


def _drawn_ticks(ax) -> list[Text]:
    """The tick labels matplotlib draws: those of the ticks inside the view (Axis._update_ticks' own choice)."""
    out = []
    for axis in (ax.xaxis, ax.yaxis):
        for tick in axis._update_ticks():
            out += [t for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text().strip()]
    return out


def _texts(fig) -> list[Text]:
    """The texts a reader sees: visible, not empty, in a visible axes; of the tick labels, those drawn."""
    ticks = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks |= {id(t) for tick in axis.get_major_ticks() + axis.get_minor_ticks() for t in (tick.label1, tick.label2)}
    drawn = {id(t) for ax in fig.axes if ax.get_visible() for t in _drawn_ticks(ax)}
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or (t.axes is not None and not t.axes.get_visible()):
            continue
        if id(t) in ticks and id(t) not in drawn:
            continue
        out.append(t)
    return out


def _markers(fig):
    """Per marker drawn: its axes and its box in display units (centre +- half its size and edge)."""
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        ticks = {
            id(x)
            for axis in (ax.xaxis, ax.yaxis)
            for t in axis.get_major_ticks() + axis.get_minor_ticks()
            for x in (t.tick1line, t.tick2line)
        }
        for line in ax.findobj(Line2D):  # the marks of the data, not the tick marks (a line each, some out of view)
            if id(line) in ticks or line.get_marker() in (None, "", "None", " ") or not line.get_visible():
                continue
            r = (line.get_markersize() / 2 + line.get_markeredgewidth() / 2) * fig.dpi / 72
            for x, y in line.get_transform().transform(line.get_xydata()):
                if np.isfinite(x) and np.isfinite(y):
                    yield ax, (x - r, y - r, x + r, y + r)


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("width", ["column", "page"])
def test_every_figure_fits_the_width_with_text_at_6_pt_or_more(drawn, width):
    _, out = drawn
    inches, figs = out[width]
    assert {"task_types", "borda_ranks", "score_vs_n_parameters", "score_vs_embed_dim", "task_correlation"} <= set(figs)
    for name, f in figs.items():
        fig = f.figure
        w, h = fig.get_size_inches()
        assert abs(w - inches) < 0.01 and h <= lay.MAX_HEIGHT + 1e-6, (name, width, w, h)
        renderer = fig.canvas.get_renderer()
        frame = fig.bbox
        for t in _texts(fig):
            assert t.get_fontsize() >= lay.MIN_FONT, (name, width, t.get_text()[:40], t.get_fontsize())
            box = t.get_window_extent(renderer)
            inside = (
                box.x0 >= frame.x0 - 0.5 and box.x1 <= frame.x1 + 0.5 and box.y0 >= frame.y0 - 0.5 and box.y1 <= frame.y1 + 0.5
            )
            assert inside, (name, width, t.get_text()[:40], box.bounds, frame.bounds)
        for _, (x0, y0, x1, y1) in _markers(fig):
            assert x0 >= frame.x0 and x1 <= frame.x1 and y0 >= frame.y0 and y1 <= frame.y1, (name, width, (x0, y0, x1, y1))


@pytest.mark.parametrize("width", ["column", "page"])
def test_model_names_never_overlap_in_the_row_figures(drawn, width):
    board, out = drawn
    _, figs = out[width]
    for name in ("task_types", "borda_ranks"):
        fig = figs[name].figure
        renderer = fig.canvas.get_renderer()
        labels = [t for t in fig.axes[0].get_yticklabels() if t.get_text()]
        boxes = [t.get_window_extent(renderer) for t in labels]
        # 14 task types at a column's width left room for two models in the panels: the matrix holds a line a model
        assert len(labels) >= (30 if name == "task_types" else 10), (name, width, len(labels))
        for a, b in zip(boxes, boxes[1:]):
            assert not _overlap(a, b), (name, width)
        shown = len(labels)
        if shown < len(board.rows):  # the rest named in the note under the figure
            text = " ".join(t.get_text() for t in _texts(fig)).replace("\n", " ")
            said = re.search(r"and (\d+) more", text)
            named = len(board.rows) - shown - (int(said.group(1)) if said else 0)
            missing = [r.model for r in board.rows[shown : shown + named] if r.model not in text]
            assert named > 0 and not missing, (name, width, missing[:5])
            assert f"board rows {shown + 1}–67" in text, (name, width)
            assert any(f"first {shown} of 67" in n for n in figs[name].notes), figs[name].notes


@pytest.mark.parametrize("width", ["column", "page"])
def test_scatter_labels_overlap_no_label_no_tick_and_stay_inside(drawn, width):
    _, out = drawn
    _, figs = out[width]
    for name in ("score_vs_n_parameters", "score_vs_embed_dim"):
        fig = figs[name].figure
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        labels = [Text.get_window_extent(t, renderer) for t in ax.texts]  # the text's box, without its leader line
        ticks = [t.get_window_extent(renderer) for t in _drawn_ticks(ax)]
        assert len(labels) >= (15 if width == "column" else 35), (name, width, len(labels))
        for i, a in enumerate(labels):
            assert all(not _overlap(a, b) for b in labels[i + 1 :]), (name, width, ax.texts[i].get_text())
            assert all(not _overlap(a, b) for b in ticks), (name, width, ax.texts[i].get_text())
            frame = ax.get_window_extent(renderer)
            assert frame.x0 <= a.x0 and a.x1 <= frame.x1 and frame.y0 <= a.y0 and a.y1 <= frame.y1, (name, ax.texts[i].get_text())
        drawn_names = {t.get_text() for t in ax.texts}
        alike = {"wavlm-base-plus", "wavlm-base-plus-sd", "wavlm-base-plus-sv", "whisper-base", "whisper-small"}
        if width == "page":  # each its own label, apart
            assert alike <= drawn_names, alike - drawn_names
        else:  # a label without room is named under the figure, never drawn over another
            note = " ".join(t.get_text() for t in fig.texts).replace("\n", " ")
            listed = set(re.split(r"[,:] | \.\.\. ", note.split("no room for the labels of: ")[-1]))
            assert alike <= drawn_names | listed, alike - drawn_names - listed
        # the y axis is a mean over the tasks the plotted models share, with intervals: never a Borda rank
        assert re.match(r"mean score over the \d+ tasks", ax.get_ylabel()), ax.get_ylabel()
        assert "bars: the mean of those tasks' intervals" in figs[name].caption
        assert any(len(c.get_segments()) for c in ax.collections), name  # the error bars


def test_forest_markers_clear_the_spines_and_name_the_rule(drawn, board67):
    from maeb.analysis import figures

    _, out = drawn
    for width in ("column", "page"):
        fig = out[width][1]["borda_ranks"].figure
        ax = fig.axes[0]
        frame = ax.get_window_extent(fig.canvas.get_renderer())
        for _, (x0, y0, x1, y1) in _markers(fig):
            assert frame.x0 < x0 and x1 < frame.x1 and frame.y0 < y0 and y1 < frame.y1, (width, (x0, y0, x1, y1), frame.bounds)
        assert "mteb rule" in ax.get_xlabel()
    assert "n_models - rank" in out["page"][1]["borda_ranks"].caption
    paper = figures.borda_forest(_board(board67, borda="paper"))
    assert "paper rule" in paper.figure.axes[0].get_xlabel() and "n_task - rank" in paper.caption


def test_correlation_is_grouped_by_type_with_the_models_per_cell(drawn, tmp_path):
    from maeb.analysis import figures

    board, out = drawn
    f = out["page"][1]["task_correlation"]
    assert "grouped by type" in f.caption and "clustered" in f.caption
    rows = list(csv.DictReader(io.StringIO(f.extras["task_correlation.csv"])))
    order = list(dict.fromkeys(r["task_a"] for r in rows))
    types = [next(t.type for t in board.tasks if t.name == name) for name in order]
    assert len(order) == len(board.tasks) and types == sorted(types, key=board.types.index)  # each type one block
    counts = {(r["task_a"], r["task_b"]): int(r["models"]) for r in rows}
    a, b = order[0], order[1]
    both = sum(r.tasks.get(a) is not None and r.tasks.get(b) is not None for r in board.rows)
    assert counts[(a, b)] == both and 0 < both < 67  # a missing cell lowers the count
    figures.write([f], tmp_path, ["svg"])
    assert (tmp_path / "task_correlation.csv").read_text() == f.extras["task_correlation.csv"]


def test_top_names_the_rest_and_the_cli_takes_width_top_and_borda(board67, tmp_path, capsys):
    from maeb.cli.commands import main

    out = tmp_path / "figs"
    args = ["plot", str(board67), "--out", str(out), "--width", "column", "--top", "12", "--borda", "paper"]
    assert main([*args, "--draws", "40", "--format", "png"]) == 0
    err = capsys.readouterr().err
    assert "3.3 in wide, paper Borda rule" in err and "task_correlation.csv" in err, err
    assert "borda_ranks: the first 12 of 67 models" in err, err
    assert (out / "task_correlation.csv").exists() and (out / "borda_ranks.png").exists()
    assert main(["plot", str(board67), "--out", str(out), "--width", "wide"]) == 2
    assert "--width 'wide': column (3.3 in), page (7 in) or a width in inches" in capsys.readouterr().err


def test_width_names_and_inches():
    # the sizes the tests above measure against: a 7 x 9 in text block and 6 pt text (lowering them fails here)
    assert lay.MAX_HEIGHT == 9.0 and lay.MIN_FONT == 6.0 and lay.SMALL >= 6.0 and lay.FONT >= 6.0
    assert lay.width_inches("column") == 3.3 and lay.width_inches("page") == 7.0 and lay.width_inches("5.5") == 5.5
    assert lay.short("org/a-very-long-model-name-sd", 20).endswith("-sd") and len(lay.short("x" * 80, 20)) == 20


def test_make_lite_ends_by_saying_where_the_page_and_figures_are():
    from pathlib import Path

    recipe = (Path(__file__).resolve().parent.parent / "Makefile").read_text().split("\nlite:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in recipe.splitlines() if line.strip()]
    assert lines[-1].startswith("exit $$status")
    assert "runs/maeb-lite/leaderboard.html" in lines[-3] and "runs/maeb-lite/figures/" in lines[-2], lines[-3:]


# --------------------------------------------------------------------------------------------------------------------
# every figure kind, measured in the file written: the SVG's width and each text's font size (svg.fonttype none
# keeps text as text; its viewBox is in points, so a font-size of 6px is 6 pt when printed at the figure's width)

KINDS = {"task_types", "borda_ranks", "score_vs_n_parameters", "score_vs_embed_dim", "task_correlation"}
LINE_KINDS = {"robustness", "durations", "score_by_layer"}


def write_extras(root, models: list[str], tasks: list[str]) -> None:
    """Beside a board's results: a robust.json of three ladders for every model, duration buckets in the first
    two tasks' results, embedding seconds in every result and a layer sweep (two layers) of the first model."""
    from maeb.benchmarks.robust import Curve, to_json

    curves = [
        Curve(m, ladder, ["clean", "s1", "s2", "s3"], [0.9, 0.8, 0.7, 0.5])
        for m in models
        for ladder in ("noise", "codec", "reverb")
    ]
    (root / "robust").mkdir()
    (root / "robust" / "robust.json").write_text(json.dumps(to_json(curves)))
    table = {
        "metric": "accuracy",
        "edges": [2.0, 10.0],
        "rows": [{"bucket": b, "score": 0.5, "items": 4} for b in ["<2 s", "2-10 s", ">=10 s"]],
    }
    for k, model in enumerate(models):
        folder = root / model.replace("/", "__", 1) / "r1"
        for path in sorted(folder.glob("*.json")):
            if path.name == "model_meta.json":
                continue
            payload = json.loads(path.read_text())
            payload["maeb"]["embedding"] = {"embed_wall_seconds": 1.0 + k + len(path.stem)}
            if path.stem in tasks[:2]:
                payload["maeb"]["identity"] = {"encoder": {"name": model}}
                payload["maeb"]["evaluation"] = {"test": {"default": {"duration_buckets": table}}}
            path.write_text(json.dumps(payload))
            if k == 0 and path.stem in tasks[:2]:
                for layer in (0, 1):
                    sweep = folder / "experiments" / f"hidden_layer_{layer}"
                    sweep.mkdir(parents=True, exist_ok=True)
                    (sweep / "model_meta.json").write_text(json.dumps({"name": model, "revision": "r1"}))
                    (sweep / path.name).write_text(json.dumps(payload))


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory):
    """The 67-model board with every kind of figure's data (robust.json, duration buckets, seconds, a layer sweep),
    and a 5-model one, each drawn at a column's and a page's width and written as SVG; also 2.5 in for 5 models."""
    from maeb.analysis import figures
    from maeb.analysis.cards import cards

    out = {}
    for n in (67, 5):
        root = tmp_path_factory.mktemp(f"every{n}")
        write_board(root)
        for model, _, _ in _names()[n:]:  # the board of the first n models
            shutil.rmtree(root / model.replace("/", "__", 1))
        write_extras(root, [m for m, _, _ in _names()[:n]], [t for t, _ in _tasks()])
        board = _board(root)
        for width in ("column", "page", *(["2.5"] if n == 5 else [])):
            inches = lay.width_inches(width)
            figs, _ = figures.build(board, cards(board), [root], inches)
            legends = {}
            for f in figs:  # the boxes measured as drawn (the figures close when written)
                if f.name in LINE_KINDS:  # the legend's box and the panels'
                    f.figure.canvas.draw()
                    r = f.figure.canvas.get_renderer()
                    boxes = [ax.get_tightbbox(r) for ax in f.figure.axes if ax.get_visible()]
                    legends[f.name] = (f.figure.legends[0].get_window_extent(r), boxes, len(f.figure.legends[0].get_texts()))
                if f.name == "task_types":  # each tick label's and cell text's box, with its text
                    f.figure.canvas.draw()
                    r = f.figure.canvas.get_renderer()
                    ax = f.figure.axes[0]
                    ticks = [t for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
                    texts = ticks + list(ax.texts)
                    legends[f.name] = (len(ticks), [(t.get_text(), tuple(t.get_window_extent(r).extents)) for t in texts])
            folder = root / f"svg-{width}"
            figures.write(figs, folder, ["svg"])
            out[(n, width)] = (inches, {f.name: f for f in figs}, folder, legends)
    return out


def svg_measure(path) -> tuple[float, float, list[float]]:
    """The SVG's width and height in inches and each <text>'s font size in points (one per text: a text without
    one, or scaled by a transform, fails here rather than passing unmeasured)."""
    svg = path.read_text(encoding="utf-8")
    head = re.search(r'<svg[^>]*width="([\d.]+)pt" height="([\d.]+)pt" viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    assert head, path
    w, h, view_w, view_h = map(float, head.groups())
    assert abs(w - view_w) < 1e-6 and abs(h - view_h) < 1e-6, path  # a viewBox unit is a point
    texts = re.findall(r"<text[^>]*>", svg)
    sizes = [float(m) for t in texts for m in re.findall(r"font-size: ([\d.]+)px", t)]
    assert len(sizes) == len(texts) and not any("scale(" in t for t in texts), path
    return w / 72, h / 72, sizes


def printed(width: float, height: float, block: float) -> float:
    """The factor a figure is scaled by to fit `block` inches wide (a column or the page) and MAX_HEIGHT tall."""
    return min(1.0, block / width, lay.MAX_HEIGHT / height)


@pytest.mark.parametrize("case", [(67, "column"), (67, "page"), (5, "column"), (5, "page"), (5, "2.5")])
def test_every_kind_is_as_wide_as_asked_with_text_at_6_pt_or_more_in_the_file(every_kind, case):
    inches, figs, folder, _ = every_kind[case]
    expected = KINDS | LINE_KINDS | ({"score_vs_compute"} if case[0] == 5 else set())  # 67: no task every model has
    assert expected <= set(figs), (case, expected - set(figs))
    for name in figs:
        width, height, sizes = svg_measure(folder / f"{name}.svg")
        assert abs(width - inches) < 0.01 and height <= lay.MAX_HEIGHT + 0.01, (case, name, width, height)
        # the smallest text as printed: scaled to the width asked and a 9 in text block (1 when the figure fits)
        assert sizes and min(sizes) * printed(width, height, inches) >= 6.0, (case, name, min(sizes), width, height)


@pytest.mark.parametrize("case", [(67, "column"), (67, "page"), (5, "2.5")])
def test_task_types_holds_the_models_a_paper_shows(every_kind, case):
    """A panel per type at a column's width held 2 of 67 models (1 at 2.5 in): the matrix holds a 6 pt line each
    (at 2.5 in a column each), says it has no intervals and how to get them, and names the rest under it."""
    inches, figs, folder, _ = every_kind[case]
    f = figs["task_types"]
    svg = (folder / "task_types.svg").read_text(encoding="utf-8")
    shown = re.search(r"first (\d+) of (\d+) models", " ".join(f.notes))
    total = int(shown.group(2)) if shown else None
    held = int(shown.group(1)) if shown else None
    if case[0] == 67:
        assert held is not None and held >= 45, f.notes
        assert f"board rows {held + 1}\u2013{total}" in svg.replace("&#8211;", "\u2013")
    else:
        assert held is None or held >= 5, f.notes  # every model of the five (the sweep's rows may not fit)
    assert "no intervals" in f.caption and any("--top" in n for n in f.notes), (f.caption, f.notes)
    # no two texts of the matrix overlap: the model names, the type names and the numbers in the cells
    ticks, measured = every_kind[case][3]["task_types"]
    n = held or 5  # models drawn, each with a cell per type (13 types or more)
    assert ticks >= n + 13 and len(measured) - ticks >= n * 13, (case, ticks, len(measured))
    boxes = np.array([box for _, box in measured])
    x0, y0, x1, y1 = (boxes[:, k] for k in range(4))
    apart = (
        (x0[:, None] >= x1[None, :]) | (x0[None, :] >= x1[:, None]) | (y0[:, None] >= y1[None, :]) | (y0[None, :] >= y1[:, None])
    )
    np.fill_diagonal(apart, True)
    bad = np.argwhere(~apart)
    assert not len(bad), (case, [(measured[i][0], measured[j][0]) for i, j in bad[:5]])


def test_task_types_keeps_the_panels_with_intervals_where_every_model_fits(every_kind):
    _, figs, _, _ = every_kind[(5, "page")]
    assert "no intervals" not in figs["task_types"].caption and "bars:" in figs["task_types"].caption


@pytest.mark.parametrize("case", [(67, "column"), (67, "page")])
def test_line_legends_stay_clear_of_the_panels_and_name_the_rest(every_kind, case):
    _, figs, folder, legends = every_kind[case]
    for name in LINE_KINDS:
        legend, boxes, entries = legends[name]
        assert entries <= 20, (case, name, entries)  # the marker and line styles repeat past 20
        assert not any(_overlap(legend, b) for b in boxes), (case, name)
        if name in ("robustness", "durations"):  # 67 runs: the rest named over the figure and in the command's output
            assert any("the first" in n and "of 67 lines" in n for n in figs[name].notes), figs[name].notes
            assert "not drawn:" in (folder / f"{name}.svg").read_text(encoding="utf-8")
