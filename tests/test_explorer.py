"""The leaderboard page as an explorer (issue 44 item 1) and each model's own label-shuffled control (issue 46
item 6): a control belongs to a model and a task, so two models' controls on one task are both shown, each
beside its own model's score, and no task-level Shuffled row or column stands for either."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from maeb.analysis.leaderboard import Board, Row, Score, TaskInfo, load_board
from maeb.analysis.page import to_html
from maeb.analysis.report import to_json, to_markdown_by_task

# issue 46's case: mfcc and Basic Pitch both run on TESS with the control; mfcc's came first by name
CONTROLS = {("maeb/mfcc-stats", "TESS"): 0.146, ("spotify/basic-pitch", "TESS"): 0.187}
SCORES = {("maeb/mfcc-stats", "TESS"): 0.40, ("spotify/basic-pitch", "TESS"): 0.55, ("o/none", "TESS"): 0.30}


def controls_board(tmp_path) -> Board:
    cells = {}
    for (model, task), value in SCORES.items():
        path = tmp_path / model.replace("/", "__") / f"{task}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"chance": 0.14, "majority": 0.14}
        if (model, task) in CONTROLS:
            record["shuffled"] = CONTROLS[(model, task)]
        path.write_text(json.dumps({"maeb": {"baselines": {"test": {"default": record}}}}))
        cells[(model, task)] = [Score(model, "1", task, "test", "default", value, source=str(path))]
    rows = [
        Row(m, ["1"], rank=i, tasks={"TESS": v}, types={"AudioClassification": v}, mean_task=v, mean_tasktype=v, n_tasks=1)
        for i, ((m, _), v) in enumerate(sorted(SCORES.items(), key=lambda kv: -kv[1]), 1)
    ]
    return Board(None, [TaskInfo("TESS", "AudioClassification")], rows, cells=cells)


def test_each_model_shows_its_own_shuffled_control_and_no_task_row(tmp_path):
    board = controls_board(tmp_path)
    data = to_json(board)
    assert "shuffled" not in data["tasks"][0]  # no task-level control
    got = {m["model"]: m.get("shuffled") for m in data["models"]}
    assert got == {"spotify/basic-pitch": {"TESS": 0.187}, "maeb/mfcc-stats": {"TESS": 0.146}, "o/none": None}
    md = to_markdown_by_task(board)
    assert "Shuffled |" not in md and "| 55.0 (shuffled 18.7) |" in md and "| 40.0 (shuffled 14.6) |" in md
    page = to_html(board, "rows")
    tasks_table = page.split('<table id="tasks"')[1].split("</table>")[0]
    assert ">Shuffled<" not in tasks_table and "55.0 (shuffled 18.7)" in tasks_table and "40.0 (shuffled 14.6)" in tasks_table
    cards = json.loads(re.search(r'<script type="application/json" id="page-data">(.*?)</script>', page, re.S).group(1))
    assert cards["scores"]["spotify/basic-pitch"][0][2] == "55.0 (shuffled 18.7)"
    assert cards["scores"]["maeb/mfcc-stats"][0][2] == "40.0 (shuffled 14.6)"
    assert cards["scores"]["o/none"][0][2] == "30.0"
    assert "its label-shuffled control: 18.7" in page and "its label-shuffled control: 14.6" in page


# -- the explorer in a browser -----------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
LITE = ROOT / "results" / "maeb-lite"
PUBLISHED = Path("/work/shared/reference/mteb_results/main_scores.csv")
for _up in ROOT.parents:  # ../shared/reference beside the checkout, read in place, never copied
    if (_up / "shared" / "reference" / "mteb_results" / "main_scores.csv").exists():
        PUBLISHED = _up / "shared" / "reference" / "mteb_results" / "main_scores.csv"
        break
needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
needs_published = pytest.mark.skipif(not PUBLISHED.exists(), reason="the published results of ../shared/reference are absent")

# errors the page logs, collected before its own script runs
_CATCH = """<script>window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push('error: ' + e.message); });
</script>"""


def in_chromium(page: str, probe: str, tmp_path: Path, width: int = 1200) -> dict:
    """Run `probe` (JavaScript whose last statement assigns the object `out`) after the page's own script in
    headless Chromium, `width` px wide, and return `out` (with the page's errors as out.errors)."""
    script = (
        "<script>(function () { var out = {}; try {\n" + probe + "\n} catch (e) { window.__errors.push('probe: ' + e.message"
        " + ' ' + e.stack); }\n out.errors = window.__errors; var pre = document.createElement('pre'); pre.id = 'probe';"
        " pre.textContent = JSON.stringify(out); document.body.appendChild(pre); })();</script>"
    )
    text = page.replace("<head>", "<head>" + _CATCH, 1).replace("</body>", script + "</body>", 1)
    path = tmp_path / f"probe-{abs(hash(probe)) % 10**8}-{width}.html"
    path.write_text(text, encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    flags += ["--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        ["chromium", *flags, f"--window-size={width},1000", "--dump-dom", path.as_uri()],
        capture_output=True,
        text=True,
        timeout=240,
    ).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def page_of(results: Path, benchmark: str | None, monkeypatch) -> tuple[Board, str]:
    from maeb.analysis import page as page_module

    monkeypatch.setattr(page_module, "_figures", lambda *args: "<p>figures left out</p>")  # this test reads the board
    board, _ = load_board([results], benchmark)
    return board, to_html(board)


def chosen(board: Board, pick: dict[str, list[str]]) -> list[str]:
    """The tasks a selection chooses, written here independently of the page: a task is kept when it is in the
    benchmark and matches every named facet (any of a facet's values)."""
    from maeb.spec import catalog

    bench = set(catalog.find_benchmark(pick["bench"][0]).tasks) if pick.get("bench") else None
    keep = []
    for t in board.tasks:
        facets = {"type": [t.type], "domain": list(t.domains), "lang": list(t.languages), "group": [t.group], "task": [t.name]}
        if bench is not None and t.name not in bench:
            continue
        if all(not pick.get(k) or set(pick[k]) & set(v) for k, v in facets.items()):
            keep.append(t.name)
    return keep


def hash_of(pick: dict[str, list[str]], rule: str) -> str:
    from urllib.parse import urlencode

    return "#" + urlencode([(k, v) for k, vs in pick.items() for v in vs] + [("rule", rule)])


PUBLISHED_PICKS = [  # each task facet in at least one selection; the MAEB(audio-only) on the MAEB board first
    {"bench": ["MAEB(audio-only)"]},
    {"type": ["AudioClassification", "AudioClustering"]},
    {"domain": ["speech"], "group": ["cross-modal"]},
    {"lang": ["deu-Latn"]},
    {"task": ["ClothoT2ARetrieval", "JamAltArtistA2ARetrieval", "FleursT2ARetrieval"]},
]
LITE_PICKS = [{"domain": ["music"]}, {"type": ["AudioReranking", "AudioClustering"], "domain": ["speech", "environmental"]}]


def check_equal(results: Path, benchmark: str, picks: list[dict], tmp_path: Path, monkeypatch) -> int:
    """The page's ranks, points and means on each selection and both rules equal maeb.analysis.leaderboard's
    load_board(tasks=the chosen, borda=rule) (aggregate() over the same scores); returns the comparisons made."""
    board, page = page_of(results, benchmark, monkeypatch)
    cases = [(p, rule) for p in picks for rule in ("mteb", "paper")]
    probe = "out.got = [];\n" + "".join(
        f"window.maebView.load({json.dumps(hash_of(p, rule))}); out.got.push(window.maebView.state());\n" for p, rule in cases
    )
    got = in_chromium(page, probe, tmp_path)
    assert got["errors"] == [], got["errors"]
    compared = 0
    for (pick, rule), view in zip(cases, got["got"]):
        names = chosen(board, pick)
        where = f"{benchmark} {pick} {rule}"
        assert names and view["names"] == names and view["rule"] == rule, (where, view["names"], names)
        expected, _ = load_board([results], benchmark, tasks=names, borda=rule)
        rows = view["result"]["rows"]
        assert [r["model"] for r in rows] == [r.model for r in expected.rows], where  # the same rows in the same order
        for js, py in zip(rows, expected.rows):
            at = f"{where} {py.model}"
            assert (js["rank"], js["n_tasks"]) == (py.rank, py.n_tasks), at
            assert js["points"] == pytest.approx(py.points, abs=1e-9), at
            for key in ("mean_task", "mean_tasktype"):
                want = getattr(py, key)
                assert (js[key] is None) == (want is None) and (want is None or js[key] == pytest.approx(want, abs=1e-12)), (
                    at,
                    key,
                )
            assert set(js["types"]) == set(py.types), at
            for ty, want in py.types.items():
                assert (js["types"][ty] is None) == (want is None), (at, ty)
                assert want is None or js["types"][ty] == pytest.approx(want, abs=1e-12), (at, ty)
            compared += 1
        assert len(rows) >= 2, where  # a selection that ranks something
    return compared


@needs_chromium
@needs_published
def test_published_board_recomputes_every_selection_as_python_does(tmp_path, monkeypatch):
    """Issue 44: MAEB(audio-only) on the MAEB board kept MAEB's 30-task ranks; now each selection (benchmark, task
    types, domains with a task modality, a language, single tasks), under both Borda rules, equals Python's."""
    assert check_equal(PUBLISHED, "MAEB", PUBLISHED_PICKS, tmp_path, monkeypatch) >= 5 * 2 * 10


@needs_chromium
def test_lite_board_recomputes_selections_as_python_does(tmp_path, monkeypatch):
    assert check_equal(LITE, "MAEB-lite", LITE_PICKS, tmp_path, monkeypatch) >= 2 * 2 * 3
