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

import numpy as np
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


def page_of(results: Path, benchmark: str | None, monkeypatch, uncertainty: dict | None = None) -> tuple[Board, str]:
    """The board and its page; `uncertainty`: compute()'s options, for a page with rank intervals."""
    from maeb.analysis import page as page_module
    from maeb.analysis.uncertainty import compute

    monkeypatch.setattr(page_module, "_figures", lambda *args: "<p>figures left out</p>")  # this test reads the board
    board, _ = load_board([results], benchmark)
    if uncertainty is not None:
        board.uncertainty = compute(board, **uncertainty)
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


# every row filter, the keyboard, a tap, the sort state, the no-match line, the CSV, the shared link, the cite box
_UI = r"""
var v = window.maebView, $ = function (id) { return document.getElementById(id); };
var body = document.querySelector('#leaderboard tbody');
function shown() { return Array.from(body.rows).filter(function (r) { return !r.hidden; }).map(function (r) { return r.dataset.model; }); }
function choose(id, value) { var el = $(id); el.value = value; el.dispatchEvent(new Event('input')); }
out.filters = {};
['f-size', 'f-modality', 'f-license', 'f-open'].forEach(function (id) {
  out.filters[id] = {};
  Array.from($(id).options).slice(1).forEach(function (o) { choose(id, o.value); out.filters[id][o.value] = shown(); });
  choose(id, '');
});
choose('f-model', body.rows[1].dataset.model); out.model = shown(); choose('f-model', '');
choose('f-search', 'zz-no-such-model'); out.nomatch = $('nomatch').hidden ? '' : $('nomatch').textContent; out.afterNone = shown().length;
choose('f-search', '');
out.nomatchAfter = $('nomatch').hidden;
// the keyboard: every header and row is reached by Tab; Enter sorts a header and opens a row's card
var heads = Array.from(document.querySelectorAll('#leaderboard thead th'));
out.tabbable = heads.every(function (th) { return th.tabIndex === 0; }) && Array.from(body.rows).every(function (r) { return r.tabIndex === 0; });
var meanHead = document.querySelector('#leaderboard thead th.mtask');
meanHead.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
out.sort1 = meanHead.getAttribute('aria-sort');
out.firstMeans = shown().slice(0, 3).map(function (m) { return body.querySelector('tr[data-model="' + CSS.escape(m) + '"] td.mtask').dataset.v; });
out.sortHash = location.hash;
meanHead.click(); out.sort2 = meanHead.getAttribute('aria-sort');
out.others = heads.filter(function (th) { return th !== meanHead && th.getAttribute('aria-sort') !== 'none'; }).length;
var rankHead = document.querySelector('#leaderboard thead th.rank'); rankHead.click(); out.rankSort = rankHead.getAttribute('aria-sort');
var row = body.rows[0]; row.focus();
row.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
out.cardByKey = $('card').open; out.cardModel = $('card-body').querySelector('h2').textContent; out.rowModel = row.dataset.model;
out.focusInCard = document.activeElement === $('card-close');
$('card-close').click(); out.focusBack = document.activeElement === row;
// a tap on a blank shows its reason (not the card); a tap on a header shows the task's description
var blank = body.querySelector('abbr.blank');
if (blank) { blank.click(); out.blankTap = $('info').textContent === blank.title && !$('card').open; out.blankTitle = blank.title; }
var taskHead = document.querySelector('#leaderboard thead th.task');
choose('f-view', 'both'); taskHead.click(); out.headTap = $('info').textContent; out.headTitle = taskHead.title;
var cell = body.rows[0].querySelector('td.task'); cell.click(); out.cellTap = $('info').textContent === cell.title; $('card-close').click();
out.taskSortHash = location.hash; v.load(''); v.load(out.taskSortHash); out.taskSortKept = taskHead.getAttribute('aria-sort');
v.load('');
// the selection in the URL, the CSV of the view, the cite box
var box = $('f-type').querySelector('input'); box.checked = true; box.dispatchEvent(new Event('input', {bubbles: true}));
out.typeHash = location.hash; out.share = $('share').getAttribute('href');
out.csv = v.csv(); out.visible = shown().length;
out.cite = $('cite-text').textContent; out.href = location.href;
out.shownHeads = heads.filter(function (th) { return !th.hidden; }).length;
v.load(''); out.cleared = v.state().names.length; out.clearedHash = location.hash;
v.load(out.typeHash); out.reloaded = v.state().names;
out.rule = $('rule').textContent;
out.foot = Array.from(document.querySelectorAll('#leaderboard tfoot tr')).map(function (r) { return r.textContent; });
"""


@needs_chromium
@needs_published
def test_every_filter_keyboard_tap_sort_csv_link_and_cite(tmp_path, monkeypatch):
    from maeb.analysis.cards import cards
    from maeb.analysis.page import SIZES, _size

    board, page = page_of(PUBLISHED, "MAEB", monkeypatch)
    got = in_chromium(page, _UI, tmp_path)
    assert got["errors"] == [], got["errors"]
    facts = cards(board)
    order = [r.model for r in board.rows]

    def models(keep) -> list[str]:
        return [m for m in order if keep(facts[m])]

    sizes = got["filters"]["f-size"]  # the bucket names hold spaces: 'under 100M' showed 0 of 21 models
    for _, name in SIZES:
        assert sizes[name] == models(lambda c, name=name: _size(c.n_parameters) == name), name
    assert sizes["under 100M"] and sizes["1B and over"]
    for value, rows in got["filters"]["f-modality"].items():
        assert rows == models(lambda c, value=value: value in (c.modalities or ["unknown"])) and rows, value
    for value, rows in got["filters"]["f-license"].items():
        assert rows == models(lambda c, value=value: (c.license or "unknown") == value) and rows, value
    want = {True: "yes", False: "no", None: "unknown"}
    for value, rows in got["filters"]["f-open"].items():
        assert rows == models(lambda c, value=value: want[c.open_weights] == value), value
    assert got["model"] == [order[1]]
    assert got["afterNone"] == 0 and got["nomatch"].startswith("No model matches") and got["nomatchAfter"]
    assert got["tabbable"]
    means = [float(v) for v in got["firstMeans"]]
    assert got["sort1"] == "descending" and means == sorted(means, reverse=True)  # first sort: best first
    assert "sort=mtask%3Adesc" in got["sortHash"]
    assert got["sort2"] == "ascending" and got["others"] == 0 and got["rankSort"] == "ascending"
    assert got["cardByKey"] and got["cardModel"] == got["rowModel"] and got["focusInCard"] and got["focusBack"]
    assert got["blankTap"] and "lacks" in got["blankTitle"]
    assert got["headTap"].endswith(got["headTitle"]) and got["cellTap"]
    assert got["taskSortKept"] == "descending"  # a task's sort key holds ':' and survives the link
    first_type = board.types[0]
    assert got["typeHash"] == f"#type={first_type}" and got["share"] == got["typeHash"]
    lines = got["csv"].strip().split("\n")
    assert len(lines) == got["visible"] + 1 and len(lines[0].split(",")) == got["shownHeads"]
    assert lines[0].startswith("Rank,Model,Mean (Task),Mean (TaskType),Tasks,")
    assert "Borda rule mteb" in got["cite"] and got["href"] in got["cite"] and "MAEB leaderboard" in got["cite"]
    n_type = sum(t.type == first_type for t in board.tasks)
    assert got["cleared"] == len(board.tasks) and got["clearedHash"] == ""
    assert len(got["reloaded"]) == n_type and f"over the {n_type} chosen tasks of {len(board.tasks)}" in got["rule"]
    assert "mteb's rule" in got["rule"]
    assert len(got["foot"]) == 1 and "published scores (a main_scores.csv) record no chance" in got["foot"][0]


# the card on a phone: no word is broken inside itself ('LiteSpokenDigit s'), published cells carry a date
_CARD = r"""
var rows = document.querySelectorAll('#leaderboard tbody tr'), broken = [];
[0, rows.length - 1].forEach(function (i) {
  rows[i].querySelector('td.model').click();
  document.querySelectorAll('#card-body td').forEach(function (td) {  // the task rows (a fact's hash may break)
    td.childNodes.forEach(function (n) {  // the pieces between <wbr>: a piece on two lines was broken inside a word
      if (n.nodeType !== 3) return;
      var range = document.createRange(), text = n.textContent, at = 0;
      text.split(/(\s+)/).forEach(function (word) {
        if (word.trim()) {
          range.setStart(n, at); range.setEnd(n, at + word.length);
          var lines = new Set(Array.from(range.getClientRects()).map(function (r) { return Math.round(r.top); }));
          if (lines.size > 1) broken.push(word);
        }
        at += word.length;
      });
    });
  });
  out.from = Array.from(document.querySelectorAll('#card-body tbody tr')).map(function (tr) { return tr.cells[3].textContent; });
  document.getElementById('card-close').click();
});
out.broken = broken;
out.width = document.documentElement.clientWidth;
"""


@needs_chromium
@needs_published
@pytest.mark.parametrize("board_of", ["lite", "published"])
def test_card_breaks_no_word_on_a_phone_and_dates_every_cell(board_of, tmp_path, monkeypatch):
    results, bench = (LITE, "MAEB-lite") if board_of == "lite" else (PUBLISHED, "MAEB")
    board, page = page_of(results, bench, monkeypatch)
    # headless Chromium's window is at least 500 px wide: the page's body is held to a phone's 390 px instead
    got = in_chromium(page.replace("<body>", '<body style="width:390px">', 1), _CARD, tmp_path, width=500)
    assert got["errors"] == [] and got["broken"] == [], (got["errors"], got["broken"][:10])
    assert got["from"] and all(re.search(r"\d{4}-\d{2}-\d{2}", f) for f in got["from"] if f != "no result"), got["from"][:5]
    if board_of == "published":
        assert all("undated in the file, file written" in f for f in got["from"] if f != "no result")
    else:
        assert page.count('<tr class="reference">') == 2  # the chance and majority rows


# -- rank intervals for the chosen tasks (issue 44 item 1: "recomputes ranks, means and rank intervals") --------------
_INTERVALS = """
out.got = [];
window.CASES.forEach(function (hash) {
  window.maebView.load(hash);
  var s = window.maebView.state(), head = document.querySelector('#leaderboard thead th.interval'), shown = {};
  document.querySelectorAll('#leaderboard tbody tr').forEach(function (tr) {
    var cell = tr.querySelector('td.interval');
    if (!tr.hidden && cell) shown[tr.dataset.model] = cell.textContent;
  });
  out.got.push({names: s.names, rule: s.rule, intervals: s.result.intervals || null, shown: shown,
    hidden: head ? head.hidden : null, note: document.getElementById('rule').textContent});
});
"""


def check_intervals(results: Path, benchmark: str | None, picks: list[dict], tmp_path, monkeypatch, **options) -> list[dict]:
    """The page's rank intervals, on the whole board and on each selection under both rules, equal
    maeb.analysis.uncertainty.compute on the board load_board(tasks=the chosen, borda=rule) makes (the same
    options); returns the page's views."""
    from maeb.analysis.uncertainty import compute

    board, page = page_of(results, benchmark, monkeypatch, options)
    cases = [({}, board.borda)] + [(p, rule) for p in picks for rule in ("mteb", "paper")]
    hashes = json.dumps([hash_of(p, rule) for p, rule in cases])
    got = in_chromium(page, f"window.CASES = {hashes};\n" + _INTERVALS, tmp_path)
    assert got["errors"] == [], got["errors"]
    for (pick, rule), view in zip(cases, got["got"]):
        names = chosen(board, pick)
        where = f"{benchmark} {pick} {rule}"
        assert view["names"] == names and view["rule"] == rule, (where, view["names"])
        expected = board if not pick else load_board([results], benchmark, tasks=names, borda=rule)[0]
        u = board.uncertainty if not pick else compute(expected, **options)
        assert view["hidden"] is False and view["intervals"] is not None, (where, view["note"])
        for row in expected.rows:
            at = f"{where} {row.model}"
            assert view["intervals"][row.model] == [u.rank_low[row.model], u.rank_high[row.model]], at
            assert view["shown"][row.model] == u.rank_text(row.model), at
        assert set(view["intervals"]) == {r.model for r in expected.rows}, where
    return got["got"]


def write_synthetic(root: Path, n_models: int, n_tasks: int, experiments: int = 5, seed: int = 0) -> Path:
    """A board of n_models x n_tasks maeb results with few-shot experiments and stability bands: two task
    types, the first task with two subsets; some cells sit at 100% with a band (a draw is kept within the
    metric's range)."""
    rng = np.random.default_rng(seed)
    for i in range(n_models):
        model = f"org/model-{i:02d}"
        for j in range(n_tasks):
            task = f"SynTask{j:02d}"
            folder = root / model.replace("/", "__") / "r1"
            folder.mkdir(parents=True, exist_ok=True)
            entries = []
            for subset in ("a", "b") if j == 0 else ("default",):
                centre = 1.0 if (i + j) % 11 == 0 else float(rng.uniform(0.2, 0.9))
                values = [float(round(min(1.0, max(0.0, centre + rng.normal(0, 0.04))), 6)) for _ in range(experiments)]
                if centre == 1.0:
                    values = [1.0] * experiments
                mean = sum(values) / len(values)
                entries.append(
                    {
                        "accuracy": mean,
                        "main_score": mean,
                        "hf_subset": subset,
                        "scores_per_experiment": [{"accuracy": v} for v in values],
                    }
                )
            kind = "AudioClassification" if j % 3 else "AudioMultilabelClassification"
            task_record = {"name": task, "type": kind, "main_score": "accuracy", "eval_splits": ["test"]}
            band = round(float(rng.uniform(0, 0.02)), 4) if (i + 2 * j) % 3 else None
            maeb = {"task": task_record, **({"stability": {"method": "replay", "band": band}} if band else {})}
            record = {"task_name": task, "mteb_version": "2.0.0", "scores": {"test": entries}, "maeb": maeb}
            (folder / f"{task}.json").write_text(json.dumps(record))
    return root


@needs_chromium
def test_rank_intervals_are_recomputed_for_each_selection_as_python_does(tmp_path, monkeypatch):
    """Issue 44 item 1: rank intervals were shown for the whole board only and hidden for a narrower choice; now the
    page redoes the bootstrap (tasks, few-shot experiments, bands) for each choice of tasks and rule and gets
    Python's intervals exactly, on a board whose experiments, bands, a partial voter and scores at the metric's
    bound all move the draws."""
    results = write_synthetic(tmp_path / "results", 9, 7)
    (tmp_path / "results" / "org__model-09" / "r1").mkdir(parents=True)  # the partial voter: one subset of task 0
    partial = json.loads((tmp_path / "results" / "org__model-00" / "r1" / "SynTask00.json").read_text())
    partial["scores"]["test"] = partial["scores"]["test"][:1]
    (tmp_path / "results" / "org__model-09" / "r1" / "SynTask00.json").write_text(json.dumps(partial))
    picks = [
        {"task": ["SynTask00", "SynTask02", "SynTask05"]},
        {"type": ["AudioMultilabelClassification"]},
        {"task": ["SynTask04"]},
    ]
    board, _ = load_board([results])
    assert "org/model-09" in board.partial["SynTask00"] and "org/model-09" not in {r.model for r in board.rows}
    views = check_intervals(results, None, picks, tmp_path, monkeypatch, draws=300, seed=7)
    assert "over 300 bootstrap draws (over tasks, experiments, bands)" in views[1]["note"]
    assert len({json.dumps(v["intervals"], sort_keys=True) for v in views}) > 3  # the choices give other intervals


@needs_chromium
def test_lite_rank_intervals_follow_the_choice_of_tasks(tmp_path, monkeypatch):
    views = check_intervals(LITE, "MAEB-lite", LITE_PICKS, tmp_path, monkeypatch, sources=("tasks", "bands"))
    assert all("over 1000 bootstrap draws (over tasks, bands)" in v["note"] for v in views)


@needs_chromium
@needs_published
def test_published_rank_intervals_follow_the_choice_of_tasks_and_say_what_moves_them(tmp_path, monkeypatch):
    """A main_scores.csv records no few-shot experiments nor bands: the draws resample the tasks alone, and the
    page says so."""
    views = check_intervals(PUBLISHED, "MAEB", PUBLISHED_PICKS[:3], tmp_path, monkeypatch, draws=200)
    assert all("only the resampling of the tasks moves the ranks" in v["note"] for v in views)


@needs_chromium
def test_a_page_without_the_recipe_or_without_intervals_says_why(tmp_path, monkeypatch):
    """An Uncertainty made by hand holds no recipe: its intervals are of the whole board under its rule, hidden for
    another rule, and the page says why; a page written without --uncertainty says it has none."""
    from maeb.analysis import page as page_module
    from maeb.analysis.uncertainty import Uncertainty

    monkeypatch.setattr(page_module, "_figures", lambda *args: "<p>figures left out</p>")
    board = controls_board(tmp_path)
    probe = "window.CASES = ['', '#rule=paper'];\n" + _INTERVALS
    plain = in_chromium(to_html(board), probe, tmp_path)
    assert plain["errors"] == [] and all(v["hidden"] is None for v in plain["got"])
    assert all("No rank intervals: the page was written without --uncertainty DRAWS." in v["note"] for v in plain["got"])
    models = [r.model for r in board.rows]
    low, high = {m: 1 for m in models}, {m: 3 for m in models}
    board.uncertainty = Uncertainty(200, 0.95, ("tasks",), 0, models, low, high, groups=[models])
    whole, other = in_chromium(to_html(board), probe, tmp_path)["got"]
    assert whole["hidden"] is False and whole["intervals"] is None and set(whole["shown"].values()) == {"1–3"}
    assert "rank interval" not in whole["note"].lower()
    assert other["hidden"] is True and "holds no bootstrap recipe to redo them for this choice" in other["note"], other
