"""Issue 34, as a person sees it: `maeb plot` writes every figure as PDF, SVG and PNG with every model in it and
missing scores said to be missing; the leaderboard page, opened in headless Chromium at a laptop's and a phone's
width for MAEB-lite and for the published models in ../shared/reference, logs no error, fetches nothing, has no
element wider than the window outside the table's box, clips no text, filters rows and opens a model's card."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from maeb.analysis.leaderboard import load_board

ROOT = Path(__file__).resolve().parent.parent
LITE = ROOT / "results" / "maeb-lite"
PUBLISHED = ROOT.parent.parent / "shared" / "reference" / "mteb_results" / "main_scores.csv"  # read in place, never copied
if not PUBLISHED.exists():
    PUBLISHED = Path("/work/shared/reference/mteb_results/main_scores.csv")
FIGURES = ("task_types", "borda_ranks", "score_vs_n_parameters", "score_vs_embed_dim", "task_correlation")
needs_published = pytest.mark.skipif(not PUBLISHED.exists(), reason="the published results of ../shared/reference are absent")
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
pytest.importorskip("matplotlib")


def maeb(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maeb", *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def svg_texts(path: Path) -> str:
    """The text of an SVG written with its text kept as text (svg.fonttype none), entities decoded."""
    return html.unescape(" ".join(re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(encoding="utf-8"), re.S)))


def check_figures(out: Path, models: list[str]) -> None:
    for name in FIGURES:
        for fmt in ("pdf", "svg", "png"):
            path = out / f"{name}.{fmt}"
            assert path.stat().st_size > 5_000, path  # a drawn figure, not an empty canvas
        width, height = png_size(out / f"{name}.png")
        assert 600 <= width <= 6_000 and 300 <= height <= 8_000, (name, width, height)
        assert (out / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
    for name in ("task_types", "borda_ranks"):
        text = svg_texts(out / f"{name}.svg")
        assert all(m in text for m in models), (name, [m for m in models if m not in text])
    for name in ("score_vs_n_parameters", "score_vs_embed_dim"):  # each model plotted by its short name, or named as not shown
        text = svg_texts(out / f"{name}.svg")
        assert all(m.split("/")[-1] in text for m in models), (name, [m for m in models if m.split("/")[-1] not in text])


@pytest.mark.slow
def test_plot_writes_every_figure_of_maeb_lite(tmp_path):
    out = tmp_path / "figs"
    done = maeb("plot", LITE, "--benchmark", "MAEB-lite", "--out", out, "--draws", "200")
    assert done.returncode == 0, done.stderr
    board, _ = load_board([LITE], "MAEB-lite")
    check_figures(out, [r.model for r in board.rows])
    assert "left out robustness: no robust.json" in done.stderr and "wrote 6 figures (18 files)" in done.stderr
    assert (out / "score_vs_compute.svg").exists()  # the reference records each task's embedding seconds
    # four of the five models lack a task of some type: said with the word, never drawn at zero
    text = svg_texts(out / "task_types.svg")
    missing = sum(v is None for r in board.rows for v in r.types.values())
    assert missing > 0 and text.count("missing") == missing


@pytest.mark.slow
@needs_published
def test_plot_writes_every_figure_of_the_published_models(tmp_path):
    out = tmp_path / "figs"
    done = maeb("plot", PUBLISHED, "--out", out, "--draws", "40", "--format", "svg", "png", "pdf")
    assert done.returncode == 0, done.stderr
    board, _ = load_board([PUBLISHED])
    assert len(board.rows) >= 36
    check_figures(out, [r.model for r in board.rows])


def test_robustness_curves_come_from_robust_json(tmp_path):
    from maeb.analysis import figures
    from maeb.benchmarks.robust import Curve, to_json

    curves = [
        Curve("org/a", "noise", ["clean", "snr=10", "snr=0"], [0.9, 0.7, 0.4]),
        Curve("org/b", "noise", ["clean", "snr=10", "snr=0"], [0.8, 0.75, 0.6]),
        Curve("org/a", "codec", ["clean", "mp3 32"], [0.9, 0.85]),
    ]
    (tmp_path / "robust").mkdir()
    (tmp_path / "robust" / "robust.json").write_text(json.dumps(to_json(curves)))
    fig = figures.robustness(figures.robust_files([tmp_path]))
    assert fig is not None and fig.name == "robustness"
    figures.write([fig], tmp_path / "out", ["svg"])
    text = svg_texts(tmp_path / "out" / "robustness.svg")
    assert "org/a" in text and "org/b" in text and "snr=10" in text and "codec" in text and "noise" in text
    assert figures.robustness([]) is None


def _write_duration_result(root, model: str, rows: list[dict], edges: list[float]) -> None:
    """A result file of task T whose test split records duration-bucket scores (maeb.analysis.durations' shape)."""
    entry = {"duration_buckets": {"metric": "accuracy", "edges": edges, "rows": rows}}
    payload = {"task_name": "T", "maeb": {"identity": {"encoder": {"name": model}}, "evaluation": {"test": {"default": entry}}}}
    folder = root / model.replace("/", "__") / "1"
    folder.mkdir(parents=True)
    (folder / "T.json").write_text(json.dumps(payload))


def test_duration_curves_come_from_duration_buckets(tmp_path):
    from maeb.analysis import figures

    for model, scores in (("org/a", [0.9, 0.6]), ("org/b", [0.5, 0.7])):
        rows = [{"bucket": b, "score": v, "items": 4} for b, v in zip(["0-2 s", "2-10 s"], scores)]
        _write_duration_result(tmp_path, model, rows, [2.0])
    fig = figures.duration_curves([tmp_path])
    assert fig is not None
    figures.write([fig], tmp_path / "out", ["svg"])
    text = svg_texts(tmp_path / "out" / "durations.svg")
    assert "org/a [head] test (accuracy)" in text and "org/b [head] test (accuracy)" in text and "2-10 s" in text
    assert figures.duration_curves([tmp_path / "org__a" / "nothing"]) is None


def test_without_matplotlib_plot_says_which_extra_to_install(tmp_path, monkeypatch, capsys):
    from maeb.cli.commands import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    assert main(["plot", str(LITE), "--out", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["maeb: error: figures need matplotlib: pip install 'maeb[plots]'"]
    assert not (tmp_path / "f").exists()


def test_without_matplotlib_the_page_is_whole_and_says_how_to_get_figures(monkeypatch):
    from maeb.analysis.leaderboard import Board, Row, TaskInfo
    from maeb.analysis.page import to_html

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    board = Board(
        None,
        [TaskInfo("T", "AudioClassification")],
        [Row("o/m", ["1"], rank=1, tasks={"T": 0.5}, types={"AudioClassification": 0.5})],
    )
    page = to_html(board)
    assert '<p id="no-figures">figures need matplotlib: pip install' in page and "<figure" not in page
    assert page.count("<tr data-model=") == 1 and page.rstrip().endswith("</html>")


# -- the page in a browser -------------------------------------------------------------------------------------------
# before the page's own script: collect errors; after it: measure, open a card, filter, and write the findings
_CATCH = """<script>window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push('error: ' + e.message); });
(function () { var ce = console.error; console.error = function () {
  window.__errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); }; })();
</script>"""
_CHECK = """<script>(function () {
  var W = document.documentElement.clientWidth, box = document.getElementById('tablebox') || document.createElement('div');
  var out = {width: W, wide: [], clipped: [], errors: window.__errors, ready: document.body.dataset.ready || '',
             fetched: performance.getEntriesByType('resource').map(function (r) { return r.name; })};
  function name(el) { return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal === undefined ? '.' + el.className : '') + ' "' + (el.textContent || '').trim().slice(0, 40) + '"'; }
  function measure() {
    document.querySelectorAll('body *').forEach(function (el) {
      if (el.closest('script, style, #check') || el.closest('svg')) return;
      var r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;
      var inBox = box.contains(el) && el !== box;
      if (!inBox && (r.right > W + 0.5 || r.left < -0.5)) out.wide.push(name(el) + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
      if (el !== box && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).display !== 'inline')
        out.clipped.push(name(el) + ' ' + el.scrollWidth + '>' + el.clientWidth);
    });
  }
  measure();
  try {
  var rows = box.querySelectorAll('tbody tr');
  out.rows = rows.length;
  out.tableFits = box.getBoundingClientRect().right <= W + 0.5;
  var search = document.getElementById('f-search');
  search.value = rows[rows.length - 1].dataset.model;
  search.dispatchEvent(new Event('input'));
  out.afterSearch = Array.from(rows).filter(function (r) { return !r.hidden; }).length;
  search.value = ''; search.dispatchEvent(new Event('input'));
  var type = document.getElementById('f-type').querySelector('input');  // the first task type's checkbox
  type.checked = true; type.dispatchEvent(new Event('input', {bubbles: true}));
  out.typeShown = Array.from(box.querySelectorAll('thead th.ty')).filter(function (c) { return !c.hidden; }).length;
  type.checked = false; type.dispatchEvent(new Event('input', {bubbles: true}));
  rows[0].querySelector('td.model').click();
  var dialog = document.getElementById('card');
  out.cardOpen = dialog.open;
  out.cardText = dialog.textContent;
  out.cardRows = dialog.querySelectorAll('tbody tr').length;
  measure();  // the open card, too, fits the window and clips nothing
  } catch (e) { out.errors.push('check: ' + e.message); }
  var pre = document.createElement('pre'); pre.id = 'check'; pre.textContent = JSON.stringify(out);
  pre.hidden = true; document.body.appendChild(pre);
})();</script>"""


def chromium(page: Path, width: int, profile: Path) -> dict:
    """The findings of _CHECK on `page` shown `width` px wide: in a frame of that width (headless Chromium's
    window is at least 500 px wide), its document given inline (srcdoc), so the window can read the findings."""
    text = page.read_text(encoding="utf-8")
    probe = text.replace("<head>", "<head>" + _CATCH, 1).replace("</body>", _CHECK + "</body>", 1)
    frame = page.with_name(f"{page.stem}-{width}.html")
    frame.write_text(
        f'<!doctype html><html><body style="margin:0"><iframe id="f" style="border:0;width:{width}px;height:1000px" '
        f'srcdoc="{html.escape(probe, quote=True)}"></iframe><script>window.addEventListener("load", function () {{'
        "var pre = document.createElement('pre'); pre.id = 'found';"
        "pre.textContent = document.getElementById('f').contentDocument.getElementById('check').textContent;"
        "document.body.appendChild(pre); });</script></body></html>",
        encoding="utf-8",
    )
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    flags += ["--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}"]
    dom = subprocess.run(
        ["chromium", *flags, f"--window-size={max(width, 500) + 40},1100", "--dump-dom", frame.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    ).stdout
    found = re.search(r'<pre id="found">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def check_page(page: Path, models: list[str], n_tasks: int, tmp_path: Path) -> None:
    for width in (1400, 390):
        got = chromium(page, width, tmp_path / "profile")
        where = f"{page.name} at {width} px"
        assert got["width"] == width, (where, got["width"])
        assert got["ready"] == "yes" and got["errors"] == [], (where, got["errors"])
        assert got["fetched"] == [], (where, got["fetched"])  # every asset inline
        assert got["wide"] == [], (where, got["wide"][:10])
        assert got["clipped"] == [], (where, got["clipped"][:10])
        assert got["rows"] == len(models) and got["tableFits"], where
        assert got["afterSearch"] == 1 and got["typeShown"] == 1, where
        assert got["cardOpen"] and got["cardRows"] == n_tasks and models[0] in got["cardText"], where
        assert "Parameters" in got["cardText"] and "Protocol" in got["cardText"], where


@pytest.mark.slow
@needs_chromium
def test_maeb_lite_page_in_chromium(tmp_path):
    page = tmp_path / "lite.html"
    done = maeb(
        "leaderboard", "--results", LITE, "--benchmark", "MAEB-lite", "--uncertainty", "200", "--format", "html", "--out", page
    )
    assert done.returncode == 0, done.stderr
    board, _ = load_board([LITE], "MAEB-lite")
    text = page.read_text(encoding="utf-8")
    assert text.count('<figure id="fig-') == 6 and "http://" not in text.replace("http://www.w3.org", "")
    assert '<figure id="fig-score_vs_compute">' in text
    assert text.count('<abbr class="blank"') >= sum(r.mean_task is None for r in board.rows)  # each blank says why
    check_page(page, [r.model for r in board.rows], len(board.tasks), tmp_path)


@pytest.mark.slow
@needs_chromium
@needs_published
def test_published_models_page_in_chromium(tmp_path):
    page = tmp_path / "published.html"
    done = maeb("leaderboard", "--results", PUBLISHED, "--uncertainty", "40", "--format", "html", "--out", page)
    assert done.returncode == 0, done.stderr
    board, _ = load_board([PUBLISHED])
    assert len(board.rows) >= 36
    check_page(page, [r.model for r in board.rows], len(board.tasks), tmp_path)


def test_score_vs_compute_from_score_and_seconds(tmp_path, monkeypatch):
    """Issue 37 item 6's view, against maeb.analysis.compute.score_and_seconds(results) (per model and task: score,
    embed_seconds, eval_seconds); a stub stands in for it until that module is on main."""
    import types

    from maeb.analysis import figures
    from maeb.analysis.leaderboard import Board, Row, TaskInfo
    from maeb.analysis.page import to_html

    spent = {("org/fast", "T1"): 2.0, ("org/fast", "T2"): 3.0, ("org/slow", "T1"): 200.0, ("org/slow", "T2"): 300.0}
    records = [{"model": m, "task": t, "score": 0.5, "embed_seconds": s, "eval_seconds": 1.0} for (m, t), s in spent.items()]
    stub = types.ModuleType("maeb.analysis.compute")
    stub.score_and_seconds = lambda results: records  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "maeb.analysis.compute", stub)
    tasks = [TaskInfo("T1", "AudioClassification"), TaskInfo("T2", "AudioClassification"), TaskInfo("T3", "AudioClustering")]
    scores = {"org/fast": (0.4, 0.6, 0.9), "org/slow": (0.8, 1.0, None), "org/none": (0.1, 0.2, 0.3)}
    rows = [Row(m, ["1"], rank=i, tasks=dict(zip(["T1", "T2", "T3"], v))) for i, (m, v) in enumerate(scores.items(), 1)]
    board = Board(None, tasks, rows)
    fig = figures.score_vs_compute(board, [tmp_path])
    assert fig is not None and fig.name == "score_vs_compute"
    figures.write([fig], tmp_path / "out", ["svg"])
    text = svg_texts(tmp_path / "out" / "score_vs_compute.svg")
    assert "fast" in text and "slow" in text and "not shown, no embedding seconds recorded: org/none" in text
    assert "embedding seconds over the 2 tasks" in text  # T3 lacks seconds: nobody is charged for it
    assert '<figure id="fig-score_vs_compute">' in to_html(board, results=[tmp_path])
    stub.score_and_seconds = lambda results: []  # type: ignore[attr-defined]
    assert figures.score_vs_compute(board, [tmp_path]) is None


def test_line_figures_align_steps_and_leave_gaps_for_missing(tmp_path):
    """A run without a step (an empty duration bucket) is drawn with a gap there, its other points on their own
    labels (they slid left onto the wrong buckets before), and the clips behind each bucket are printed under it."""
    from maeb.analysis import figures

    for model, buckets in (("org/a", ["<1 s", "1-2 s", ">=2 s"]), ("org/b", ["1-2 s", ">=2 s"])):
        rows = [{"bucket": b, "score": 0.5 + 0.1 * i, "items": 4 + i} for i, b in enumerate(buckets)]
        _write_duration_result(tmp_path, model, rows, [1.0, 2.0])
    fig = figures.duration_curves([tmp_path])
    assert fig is not None
    ax = fig.figure.axes[0]
    a, b = (list(line.get_ydata()) for line in ax.lines)
    assert [round(v) for v in a] == [50, 60, 70]
    assert str(b[0]) == "nan" and [round(v) for v in b[1:]] == [50, 60]  # org/b's 1-2 s sits on 1-2 s
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["<1 s\nn=4", "1-2 s\nn=4–5", ">=2 s\nn=5–6"]


def test_scatter_within_a_decade_reads_plain_numbers_and_whole_ranks():
    """Two models of 96 and 160 dimensions on two tasks (real runs of mfcc-stats and speech-embedding): the axis
    showed only 10^2 (every other label hidden) and fractional ranks (0.96, 0.98, 1.00) before."""
    from maeb.analysis import figures
    from maeb.analysis.cards import Card
    from maeb.analysis.leaderboard import Board, Row, TaskInfo

    tasks = [TaskInfo("T1", "AudioClassification"), TaskInfo("T2", "AudioClassification")]
    rows = [Row("o/a", ["1"], rank=1, tasks={"T1": 0.6, "T2": 0.7}), Row("o/b", ["1"], rank=1, tasks={"T1": 0.7, "T2": 0.6})]
    cards = {"o/a": Card("o/a", ["1"], embed_dim=96), "o/b": Card("o/b", ["1"], embed_dim=160)}
    fig = figures.scatter(Board(None, tasks, rows), cards, "embed_dim", "Embedding dimension")
    assert fig is not None
    ax = fig.figure.axes[0]
    fig.figure.canvas.draw()
    xs = {t.get_text() for t in ax.get_xticklabels() + ax.get_xticklabels(minor=True)} - {""}
    assert {"100", "120", "150"} <= xs, xs
    ys = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]  # a score axis now (issue 44): plain numbers
    assert ys and all(re.fullmatch(r"[−-]?\d+(\.\d)?", y) for y in ys), ys
    forest = figures.borda_forest(Board(None, tasks, rows)).figure
    forest.canvas.draw()
    xs = [t.get_text() for t in forest.axes[0].get_xticklabels() if t.get_text()]
    assert xs and all(x.lstrip("−-").isdigit() for x in xs), xs
