"""Task facts recorded in results (type, category, domains of local tasks) flowing into every board
output, the two per-task orientations, and --tasks. Expected numbers are computed here by hand from
the scores the test writes."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from maeb.analysis.leaderboard import load_board
from maeb.cli.commands import main
from maeb.spec import catalog

from .test_board_validation import entry, write_result

# three local tasks of three types over two domains; the third only in an older maeb file's form
TASKS = {
    "MyDigits": {"type": "AudioClassification", "category": "a2c", "domains": ["speech"], "metric": "accuracy"},
    "MySpeakers": {"type": "AudioClustering", "category": "a2a", "domains": ["speech"], "metric": "v_measure"},
    "MyTunes": {"type": "AudioPairClassification", "category": "a2a", "domains": ["music"], "metric": "max_ap"},
}
SCORES = {  # model -> task -> main score
    "org/alpha": {"MyDigits": 0.9, "MySpeakers": 0.3, "MyTunes": 0.8},
    "org/beta": {"MyDigits": 0.6, "MySpeakers": 0.5, "MyTunes": 0.7},
    "org/gamma": {"MyDigits": 0.4, "MySpeakers": 0.1},  # lacks MyTunes
}


def local_results(root, old_style=("MyTunes",)):
    for model, tasks in SCORES.items():
        for task, value in tasks.items():
            t = TASKS[task]
            if task in old_style:  # maeb files before maeb.task: only maeb's short type name
                record = {"task_type": "pair_classification"}
            else:
                record = {"task": {"name": task, "type": t["type"], "category": t["category"], "domains": t["domains"],
                                   "languages": ["eng-Latn"], "main_score": t["metric"], "eval_splits": ["test"], "family": None}}  # fmt: skip
            write_result(root, model, task, {"test": [entry(value, metric=t["metric"])]}, record)
    return root


def by_hand():
    """Per model: per-type means (None when a task of the type is missing) and Mean (TaskType)."""
    out = {}
    for model, tasks in SCORES.items():
        types = {}
        for task, t in TASKS.items():
            types.setdefault(t["type"], []).append(tasks.get(task))
        means = {k: (None if None in v else float(np.mean(v))) for k, v in types.items()}
        out[model] = (means, None if None in means.values() else float(np.mean(list(means.values()))))
    return out


def test_local_task_infos_reach_the_board(tmp_path):
    board, problems = load_board([local_results(tmp_path / "res")])
    assert not problems and not board.notes
    got = {t.name: (t.type, t.category, t.domains) for t in board.tasks}
    # MyTunes's old-style file gives its type (mapped to mteb's name) but no category or domain
    assert got == {
        "MyDigits": ("AudioClassification", "a2c", ("speech",)),
        "MySpeakers": ("AudioClustering", "a2a", ("speech",)),
        "MyTunes": ("AudioPairClassification", None, ()),
    }
    assert board.types == ["AudioClassification", "AudioClustering", "AudioPairClassification"]
    expected = by_hand()
    for row in board.rows:
        means, mean_tasktype = expected[row.model]
        assert row.types == pytest.approx(means) if mean_tasktype is not None else row.types.keys() == means.keys()
        assert row.mean_tasktype == (pytest.approx(mean_tasktype) if mean_tasktype is not None else None)
    alpha = {r.model: r for r in board.rows}["org/alpha"]
    assert alpha.domains == {"speech": pytest.approx((0.9 + 0.3) / 2)}  # MyTunes records no domain
    assert alpha.groups == {"audio-only": pytest.approx((0.9 + 0.3) / 2)}


def test_local_task_infos_flow_into_md_csv_json_html(tmp_path, capsys):
    root = local_results(tmp_path / "res", old_style=())  # full records: MyTunes is music
    expected = {m: {"AudioClassification": t["MyDigits"], "AudioClustering": t["MySpeakers"],
                    "AudioPairClassification": t.get("MyTunes")} for m, t in SCORES.items()}  # fmt: skip
    outputs = {}
    for fmt in ("md", "csv", "json", "html"):
        assert main(["leaderboard", "--results", str(root), "--format", fmt, "--out", str(tmp_path / f"b.{fmt}")]) == 0
        outputs[fmt] = (tmp_path / f"b.{fmt}").read_text()
    assert "maeb: skipped" not in capsys.readouterr().err

    md_head = outputs["md"].splitlines()[2]
    assert "| AudioClassification | AudioClustering | AudioPairClassification |" in md_head
    assert "| Speech | Music |" not in md_head and "| Music | Speech |" in md_head  # domains, sorted

    rows = list(csv.DictReader(io.StringIO(outputs["csv"])))
    for r in rows:
        for kind, value in expected[r["model"]].items():
            assert r[kind] == ("" if value is None else str(round(value, 6)))

    data = json.loads(outputs["json"])
    assert {t["name"]: (t["type"], t["category"], t["domains"]) for t in data["tasks"]} == {
        n: (t["type"], t["category"], t["domains"]) for n, t in TASKS.items()
    }
    assert data["types"] == sorted({t["type"] for t in TASKS.values()}) and data["domains"] == ["music", "speech"]

    page = outputs["html"]
    for model, kinds in expected.items():
        row = re.search(rf'<tr data-model="{model}".*?</tr>', page).group(0)
        for kind, value in kinds.items():
            shown = re.search(rf'<td class="ty" data-type="{kind}"[^>]*>(.*?)</td>', row).group(1)
            # a blank mean says where it is blank which task it lacks
            assert shown == f"{100 * value:.1f}" if value is not None else ("n/a" in shown and "MyTunes" in shown), shown
    picker = re.findall(r'<details class="pick" id="f-domain".*?</details>', page)  # none ticked: all domains
    assert len(picker) == 1 and re.findall(r'type="checkbox" value="([^"]+)"', picker[0]) == ["music", "speech"]


def test_three_domains_fill_the_domain_filter(tmp_path):
    root = tmp_path / "res"
    for i, domain in enumerate(["speech", "music", "bioacoustics"]):
        record = {"task": {"name": f"T{i}", "type": "AudioClassification", "category": "a2c", "domains": [domain]}}
        for model, value in (("o/a", 0.5 + i / 10), ("o/b", 0.2)):
            write_result(root, model, f"T{i}", {"test": [entry(value)]}, record)
    board, _ = load_board([root])
    assert board.domains == ["bioacoustics", "music", "speech"]
    from maeb.analysis.page import to_html

    page = to_html(board)
    options = re.search(r'<details class="pick" id="f-domain".*?</details>', page).group(0)
    assert re.findall(r'type="checkbox" value="([^"]+)"', options) == ["bioacoustics", "music", "speech"]
    assert page.count('"domains": ["bioacoustics"]') >= 1  # T2's entry in the page's data, which the filter reads


def test_the_catalog_wins_for_its_tasks_and_a_disagreement_is_noted(tmp_path, capsys):
    crema = catalog.find_task("CREMA_D")
    split = crema.data.eval_splits[0]
    root = tmp_path / "res"
    wrong = write_result(root, "o/a", "CREMA_D", {split: [entry(0.5)]}, {"task": {"name": "CREMA_D", "type": "AudioClustering", "domains": ["music"]}})  # fmt: skip
    write_result(root, "o/b", "CREMA_D", {split: [entry(0.6)]}, {"task": {"name": "CREMA_D", "type": crema.mteb_type}})
    board, problems = load_board([root])
    (info,) = board.tasks
    assert (info.type, info.category, info.domains) == (crema.mteb_type, crema.category, tuple(crema.domains))
    assert not problems  # nothing was rejected...
    (note,) = board.notes  # ...but the disagreeing file is named
    assert note.startswith(str(wrong)) and "AudioClustering" in note and crema.mteb_type in note
    assert main(["leaderboard", "--results", str(root)]) == 0
    err = capsys.readouterr().err
    assert "maeb: note:" in err and "maeb: skipped" not in err


def parse_md_table(text: str, first: str) -> list[list[str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first} |"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return [rows[0]] + rows[2:]


def leaderboard_out(capsys, *argv) -> str:
    capsys.readouterr()
    assert main(["leaderboard", *argv]) == 0
    return capsys.readouterr().out


def test_per_task_in_both_orientations(tmp_path, capsys):
    root = str(local_results(tmp_path / "res", old_style=()))
    plain = leaderboard_out(capsys, "--results", root)
    columns = leaderboard_out(capsys, "--results", root, "--per-task", "columns")
    assert leaderboard_out(capsys, "--results", root, "--per-task") == columns != plain  # the old flag is columns
    table = parse_md_table(columns, "Rank")
    head = table[0]
    assert head[-3:] == sorted(TASKS) and not set(TASKS) & set(parse_md_table(plain, "Rank")[0])
    for row in table[1:]:
        for task in TASKS:
            value = SCORES[row[1]].get(task)
            assert row[head.index(task)] == ("" if value is None else f"{100 * value:.1f}")

    rows_md = leaderboard_out(capsys, "--results", root, "--per-task", "rows")
    assert rows_md.startswith(plain)  # the summary, then the tasks-as-rows table
    by_task = parse_md_table(rows_md, "Task")
    models = [r[1] for r in parse_md_table(plain, "Rank")[1:]]  # board order
    assert by_task[0] == ["Task", "Type", *(m.split("/")[1] for m in models)]
    assert [r[0] for r in by_task[1:]] == sorted(TASKS)
    for row in by_task[1:]:
        assert row[1] == TASKS[row[0]]["type"]
        for model, cell in zip(models, row[2:]):
            value = SCORES[model].get(row[0])
            assert cell == ("–" if value is None else f"{100 * value:.1f}")

    rows_csv = list(csv.reader(io.StringIO(leaderboard_out(capsys, "--results", root, "--format", "csv", "--per-task", "rows"))))
    assert rows_csv[0] == ["task", "type", "category", "domains", *models, "tie_dependent"]
    for row in rows_csv[1:]:
        assert row[1:4] == [TASKS[row[0]]["type"], TASKS[row[0]]["category"], ";".join(TASKS[row[0]]["domains"])]
        assert row[-1] == ""  # no result here records a tie-dependent score
        assert row[4:-1] == [("" if SCORES[m].get(row[0]) is None else str(SCORES[m][row[0]])) for m in models]

    page = leaderboard_out(capsys, "--results", root, "--format", "html", "--per-task", "rows")
    tasks_table = page.split('<table id="tasks">')[1].split("</table>")[0]
    assert tasks_table.count("<tr>") == len(TASKS) + 1
    page = leaderboard_out(capsys, "--results", root, "--format", "html", "--per-task", "columns")
    head = page.split('<table id="leaderboard">')[1].split("</thead>")[0]
    shown = re.findall(r'<th class="task" data-task="([^"]+)"', head)  # task columns shown at first (not hidden)
    assert shown == list(TASKS) and '<table id="tasks">' not in page


def test_short_model_names_stay_distinct(tmp_path):
    root = tmp_path / "res"
    record = {"task": {"name": "T", "type": "AudioClassification"}}
    write_result(root, "one/model", "T", {"test": [entry(0.5)]}, record)
    write_result(root, "two/model", "T", {"test": [entry(0.6)]}, record)
    from maeb.analysis.report import to_markdown_by_task

    board, _ = load_board([root])
    assert to_markdown_by_task(board).splitlines()[0] == "| Task | Type | two/model | one/model |"


def borda(scores: dict[str, dict[str, float]], tasks: list[str]) -> dict[str, float]:
    """Borda points by hand: within each task n_models - rank (ties share the average rank)."""
    models = list(scores)
    points = dict.fromkeys(models, 0.0)
    for task in tasks:
        have = {m: s[task] for m, s in scores.items() if task in s}
        for m, v in have.items():
            above = sum(w > v for w in have.values())
            ties = sum(w == v for w in have.values())
            points[m] += len(models) - (above + (ties + 1) / 2)
    return points


def test_tasks_restricts_a_board_without_a_benchmark(tmp_path, capsys):
    root = local_results(tmp_path / "res", old_style=())
    board, problems = load_board([root], tasks=["MySpeakers", "MyTunes"])
    assert [t.name for t in board.tasks] == ["MySpeakers", "MyTunes"] and board.task_filter == ["MySpeakers", "MyTunes"]
    want = borda(SCORES, ["MySpeakers", "MyTunes"])
    assert {r.model: r.points for r in board.rows} == pytest.approx(want)
    assert want != borda(SCORES, sorted(TASKS))  # the restriction changes the ranking's inputs
    beta = {r.model: r for r in board.rows}["org/beta"]
    assert beta.mean_task == pytest.approx((0.5 + 0.7) / 2)
    out = leaderboard_out(capsys, "--results", str(root), "--tasks", "MyTunes", "--format", "json")
    data = json.loads(out)
    assert [t["name"] for t in data["tasks"]] == ["MyTunes"] and data["task_filter"] == ["MyTunes"]
    assert {m["model"] for m in data["models"]} == {"org/alpha", "org/beta"}  # gamma has no MyTunes
    assert main(["leaderboard", "--results", str(root), "--tasks", "MyTunez"]) == 2
    assert "MyTunez" in capsys.readouterr().err
    # a task whose only file is rejected is no typo: it is missing, and the file is reported
    broken = write_result(root, "org/alpha", "MyBroken", {"test": [entry(float("nan"))]})
    board, problems = load_board([root], tasks=["MyBroken", "MyTunes"])
    assert board.missing_tasks == ["MyBroken"] and [t.name for t in board.tasks] == ["MyTunes"]
    assert len(problems) == 1 and problems[0].startswith(str(broken)) and "NaN" in problems[0]


def test_tasks_restricts_a_benchmark(tmp_path, capsys):
    bench = catalog.find_benchmark("MAEB-lite")
    names = list(bench.tasks[:3])
    specs = {n: catalog.find_task(n) for n in names}
    values = {"o/a": [0.9, 0.2, 0.5], "o/b": [0.4, 0.8, 0.6], "o/c": [0.1, 0.3, 0.7]}
    root = tmp_path / "res"
    for model, vals in values.items():
        for name, v in zip(names, vals):
            s = specs[name]
            write_result(root, model, name, {s.data.eval_splits[0]: [entry(v, metric=s.main_score)]})
    full, _ = load_board([root], "MAEB-lite")
    assert len(full.tasks) == 3 and set(full.missing_tasks) == set(bench.tasks) - set(names)
    board, problems = load_board([root], "MAEB-lite", tasks=[names[2], names[1].lower()])  # any case
    assert not problems and [t.name for t in board.tasks] == [names[2], names[1]]  # in the order asked
    assert board.benchmark == "MAEB-lite" and board.missing_tasks == [] and board.task_filter == [names[2], names[1]]
    scores = {m: dict(zip(names, v)) for m, v in values.items()}
    assert {r.model: r.points for r in board.rows} == pytest.approx(borda(scores, names[1:]))
    assert {r.model: r.points for r in full.rows} == pytest.approx(borda(scores, names))
    md = leaderboard_out(capsys, "--results", str(root), "--benchmark", "MAEB-lite", "--tasks", names[1])
    assert md.startswith("**MAEB-lite (restricted to 1 task)**")
    outside = next(t for t in catalog.find_benchmark("MAEB").tasks if t not in bench.tasks)
    assert main(["leaderboard", "--results", str(root), "--benchmark", "MAEB-lite", "--tasks", outside]) == 2
    assert f"{outside!r} is not a task of MAEB-lite" in capsys.readouterr().err


def test_lite_runner_builds_its_board_without_the_cli(tmp_path):
    """maeb.benchmarks.lite.runner takes load_board from maeb.analysis.leaderboard: the command line module (which
    imports the runner's callers) is not imported to write MAEB-lite's leaderboard files."""
    name = catalog.find_benchmark("MAEB-lite").tasks[0]
    spec = catalog.find_task(name)
    write_result(tmp_path, "o/a", name, {spec.data.eval_splits[0]: [entry(0.5, metric=spec.main_score)]})
    code = (
        "import sys; from pathlib import Path; from maeb.benchmarks.lite.runner import leaderboard; "
        f"text = leaderboard(Path({str(tmp_path)!r})); assert 'o/a' in text, text; "
        "assert 'maeb.cli.commands' not in sys.modules, 'maeb.cli.commands was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert (tmp_path / "leaderboard.md").read_text().count("| o/a |") == 1


def test_a_local_task_run_by_maeb_keeps_its_type_on_the_board(tmp_path, tone_folder, capsys):
    """End to end: `maeb run` of a user's spec file writes the task's record; the board reads its
    type, category and domains back, as it does from the spec file given to --tasks."""
    model = tmp_path / "model.toml"
    model.write_text('[[model]]\nname = "test/spectral"\nfamily = "mock-spectral"\nrevision = "r1"\nembed_dim = 16\n')
    spec = tmp_path / "ToneGroups.toml"
    spec.write_text(
        'name = "ToneGroups"\ntype = "clustering"\ncategory = "a2a"\ndomains = ["music"]\nlanguages = ["zxx-Zxxx"]\n'
        f'[data]\nsource = "audiofolder"\npath = "{tone_folder}"\neval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n'
    )
    out = tmp_path / "res"
    args = ["run", "--model", str(model), "--tasks", str(spec), "--output-dir", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main([*args, "--quiet"]) == 0
    for extra in ([], ["--tasks", str(spec)]):
        data = json.loads(leaderboard_out(capsys, "--results", str(out), "--format", "json", *extra))
        (task,) = data["tasks"]
        assert (task["name"], task["type"], task["category"], task["domains"]) == (
            "ToneGroups",
            "AudioClustering",
            "a2a",
            ["music"],
        )
        assert data["types"] == ["AudioClustering"] and data["domains"] == ["music"]
        (row,) = data["models"]
        assert row["types"]["AudioClustering"] == row["scores"]["ToneGroups"] == row["domains"]["music"]
