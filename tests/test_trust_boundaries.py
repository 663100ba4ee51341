"""Trust boundaries: names that would write outside the output folder, hub data taken on trust (an
uncached pinned revision offline, flipped bytes), two specs of one name, bands and experiment scores
outside the metric's range, split rules a hub source ignores, and code imported on a spec's word.
Each case failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maeb.core.errors import OutputError, SpecError
from maeb.core.paths import inside, safe_component, unsafe_reason

from .test_cli import write_model
from .test_faults import one_error, run_args, run_main, write_folder, write_spec


# -- 1. names decide where files go ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["..", ".", "", "  ", "a/b", "a\\b", "x\0y", "/tmp/x", "C:x"])
def test_a_name_that_is_not_one_plain_component_is_refused(name):
    assert unsafe_reason(name) is not None
    with pytest.raises(OutputError, match="cannot name a file or folder"):
        safe_component(name, "task name")


@pytest.mark.parametrize("name", ["ESC50", "a..b", "..x", "task-1.v2", "Ünïcode"])
def test_plain_names_pass(name):
    assert safe_component(name, "task name") == name


def test_a_path_outside_its_root_is_refused(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    assert inside(tmp_path / "root", tmp_path / "root" / "a" / "b.json", "x")
    for escape in (tmp_path / "root" / ".." / "x.json", tmp_path / "root" / "link" / "x.json"):
        with pytest.raises(OutputError, match="outside"):
            inside(tmp_path / "root", escape, "x")


@pytest.mark.parametrize("name", ["../../../../escaped", "ABSOLUTE"])
def test_a_task_name_that_climbs_out_is_refused_in_one_line(tmp_path, capsys, name):
    folder = write_folder(tmp_path / "data")
    target = tmp_path / "outside" / "escaped"
    name = str(target) if name == "ABSOLUTE" else name
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "{name}"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        'eval_splits = ["test"]\n[protocol]\nn_clusters = 1\n'
    )
    rc, err = run_main(capsys, run_args(tmp_path, write_model(tmp_path), spec))
    line = one_error(rc, err)
    assert "task name" in line and "cannot name a file or folder" in line
    assert not list(tmp_path.rglob("escaped.json"))


@pytest.mark.parametrize("field", ["name", "revision"])
def test_a_model_named_dot_dot_is_refused_in_one_line(tmp_path, capsys, field):
    folder = write_folder(tmp_path / "data")
    model = tmp_path / "model.toml"
    name, revision = ("..", "r1") if field == "name" else ("test/spectral", "..")
    model.write_text(
        f'[[model]]\nname = "{name}"\nfamily = "mock-spectral"\nrevision = "{revision}"\nembed_dim = 16\n'
        'modalities = ["audio", "text"]\n'
    )
    rc, err = run_main(capsys, run_args(tmp_path, model, write_spec(tmp_path, folder)))
    line = one_error(rc, err)
    assert ("model name" if field == "name" else "revision") in line
    assert not list(tmp_path.rglob("Faulty.json"))


def test_a_revision_override_that_climbs_out_is_refused(tmp_path, capsys):
    folder = write_folder(tmp_path / "data")
    args = run_args(tmp_path, write_model(tmp_path), write_spec(tmp_path, folder), extra=("--model-revision", ".."))
    line = one_error(*run_main(capsys, args))
    assert "revision" in line
    assert not list(tmp_path.rglob("Faulty.json"))


def test_result_and_prediction_paths_refuse_names_from_code(tmp_path):
    from maeb.encoders import ModelMeta
    from maeb.results.write import predictions_path, result_path

    meta = ModelMeta(name="test/spectral", family="mock-spectral", revision="r1")
    with pytest.raises(OutputError, match="task name"):
        result_path(tmp_path, meta, "../x")
    result = result_path(tmp_path, meta, "T")
    assert predictions_path(result, "p.csv") == result.parent / "T_predictions" / "p.csv"
    # a subset's subfolder, as the generative types write them
    assert predictions_path(result, "main/per_clip.jsonl") == result.parent / "T_predictions" / "main" / "per_clip.jsonl"
    with pytest.raises(OutputError, match="prediction file name"):
        predictions_path(result, "main/../../x.csv")
    with pytest.raises(OutputError, match="prediction file name"):
        predictions_path(result, "../../../x.csv")


def test_generated_clips_stay_in_the_cache(tmp_path):
    from types import SimpleNamespace

    from maeb.audiogen.store import generated_folder

    emb = SimpleNamespace(
        generated_dir=None,
        ctx=SimpleNamespace(cache_dir=tmp_path),
        meta=SimpleNamespace(folder=".."),
        cache=SimpleNamespace(identity={"name": "x"}),
    )
    with pytest.raises(OutputError, match="model name"):
        generated_folder(emb, "T")
    emb.meta.folder = "test__m"
    with pytest.raises(OutputError, match="task name"):
        generated_folder(emb, "../../x")
    assert generated_folder(emb, "T").parent == tmp_path / "generated" / "test__m" / "T"


def test_a_spec_name_is_checked_when_parsed(tmp_path):
    from maeb.spec.taskspec import parse_spec

    with pytest.raises(SpecError, match="task name"):
        parse_spec({"name": "a/b", "type": "clustering", "data": {"source": "audiofolder", "path": str(tmp_path)}}, "s")


# -- 4. two specs with one task name ---------------------------------------------------------------
def test_two_specs_with_one_task_name_are_refused_in_one_line(tmp_path, capsys):
    folder = write_folder(tmp_path / "data")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = write_spec(tmp_path / "a", folder), write_spec(tmp_path / "b", folder)
    args = run_args(tmp_path, write_model(tmp_path), first, second)
    line = one_error(*run_main(capsys, args))
    assert "two specs name task 'Faulty'" in line and str(first) in line and str(second) in line
    assert not list(tmp_path.rglob("Faulty.json"))
    line = one_error(*run_main(capsys, [*args, "--dry-run"]))
    assert "two specs name task 'Faulty'" in line


def test_one_spec_listed_twice_runs_once(tmp_path, capsys):
    folder = write_folder(tmp_path / "data")
    spec = write_spec(tmp_path, folder)
    rc, err = run_main(capsys, run_args(tmp_path, write_model(tmp_path), spec, spec))
    assert rc == 0 and "1 task evaluated" in err, err


def test_the_python_api_refuses_two_specs_of_one_name(tmp_path):
    from dataclasses import replace

    from maeb.api import select_tasks
    from maeb.spec.taskspec import load_spec

    spec = load_spec(write_spec(tmp_path, write_folder(tmp_path / "data")))
    other = replace(spec, source_file="", protocol={**spec.protocol, "n_clusters": 2})
    with pytest.raises(SpecError, match="two specs name task 'Faulty'"):
        select_tasks([spec, other])
    assert len(select_tasks([spec, spec])) == 1


# -- 6. split rules on sources that bring their own splits -------------------------------------------
@pytest.mark.parametrize("source", ["hub", "webdataset"])
@pytest.mark.parametrize("rule", ["{ random = 0.2 }", '{ column = "split" }'])
def test_split_by_on_a_hub_or_webdataset_source_is_refused(tmp_path, capsys, source, rule):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "HubSplit"\ntype = "classification"\n[data]\nsource = "{source}"\npath = "org/repo"\n'
        f'revision = "{"a" * 40}"\nsplit_by = {rule}\n'
    )
    for extra in ((), ("--dry-run",)):
        line = one_error(*run_main(capsys, run_args(tmp_path, write_model(tmp_path), spec, extra=extra)))
        assert "data.split_by" in line and repr(source) in line and str(spec) in line


# -- 7. code named by a spec or an entry runs only when allowed -------------------------------------
EVIL = """
from pathlib import Path
Path(__file__).with_name("{marker}").write_text("ran")
"""


@pytest.fixture
def evil(tmp_path, monkeypatch):
    """Modules in the current folder (on sys.path, as under `python -m maeb`) that leave a mark
    when imported."""
    for module in ("evilmod", "evilfam"):
        (tmp_path / f"{module}.py").write_text(EVIL.format(marker=f"{module}.ran"))
        monkeypatch.delitem(__import__("sys").modules, module, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("MAEB_ALLOW_CODE", raising=False)
    return tmp_path


@pytest.mark.parametrize("dry", [False, True])
def test_a_spec_type_from_the_current_folder_is_not_imported_without_opt_in(evil, capsys, dry):
    folder = write_folder(evil / "data")
    spec = write_spec(evil, folder, kind="evilmod:X", tail="")
    line = one_error(*run_main(capsys, run_args(evil, write_model(evil), spec, extra=("--dry-run",) if dry else ())))
    assert "evilmod" in line and "--allow-code" in line and "MAEB_ALLOW_CODE" in line
    assert not (evil / "evilmod.ran").exists()


@pytest.mark.parametrize("dry", [False, True])
def test_a_model_family_from_the_current_folder_is_not_imported_without_opt_in(evil, capsys, dry):
    folder = write_folder(evil / "data")
    args = run_args(evil, write_model(evil, family="evilfam:X"), write_spec(evil, folder), extra=("--dry-run",) if dry else ())
    line = one_error(*run_main(capsys, args))
    assert "evilfam" in line and "--allow-code" in line
    assert not (evil / "evilfam.ran").exists()


@pytest.mark.parametrize("how", ["flag", "env"])
def test_with_the_opt_in_the_named_module_is_imported(evil, capsys, monkeypatch, how):
    folder = write_folder(evil / "data")
    spec = write_spec(evil, folder, kind="evilmod:X", tail="")
    extra: tuple[str, ...] = ("--dry-run",)
    if how == "flag":
        extra += ("--allow-code",)
    else:
        monkeypatch.setenv("MAEB_ALLOW_CODE", "1")
    rc, err = run_main(capsys, run_args(evil, write_model(evil), spec, extra=extra))
    assert (evil / "evilmod.ran").exists()  # imported; X is not a task type, which is the next error
    assert rc == 2 and "is not defined" in err and "--allow-code" not in err, err
    # the permission does not outlive the call that gave it
    (evil / "evilmod.ran").unlink()
    monkeypatch.delenv("MAEB_ALLOW_CODE", raising=False)
    monkeypatch.delitem(__import__("sys").modules, "evilmod", raising=False)
    from maeb.tasktypes import _LOADED

    _LOADED.pop("evilmod:X", None)
    assert "--allow-code" in one_error(*run_main(capsys, run_args(evil, write_model(evil), spec)))
    assert not (evil / "evilmod.ran").exists()


def test_maebs_own_modules_need_no_opt_in(tmp_path):
    from maeb.core import trust
    from maeb.encoders import resolve_factory
    from maeb.mock import SpectralEncoder

    trust.allow_code(False)
    assert resolve_factory("maeb.mock:SpectralEncoder") is SpectralEncoder
    with pytest.raises(Exception, match="--allow-code"):
        resolve_factory("evilfam:X")


# -- 5. bands and experiment scores read from result files ------------------------------------------
def test_bands_and_experiments_outside_the_metrics_range_are_set_aside_and_named(tmp_path, capsys):
    from maeb.analysis.leaderboard import load_board
    from maeb.analysis.uncertainty import compute

    from .test_uncertainty import write_result

    write_result(tmp_path, "org/a", "T", [0.61, 0.62, 0.60], band=1e9)
    write_result(tmp_path, "org/b", "T", [0.50, -0.40, 0.50])  # (its mean is what the board shows)
    write_result(tmp_path, "org/c", "T", [0.30, 0.31, 0.29], band=0.01)
    board, _ = load_board([tmp_path])
    u = compute(board, draws=200)
    assert ("org/a", "T") not in u.cells or u.cells[("org/a", "T")].band is None  # its experiments alone stay
    assert ("org/b", "T") not in u.cells
    assert all(0.0 <= c.low <= c.high <= 1.0 for c in u.cells.values())
    text = "\n".join(u.set_aside)
    assert len(u.set_aside) == 2 and "org__a" in text and "1e+09" in text and "org__b" in text and "-0.4" in text
    assert u.as_dict()["set_aside"] == u.set_aside
    rc = __import__("maeb.cli.commands", fromlist=["main"]).main(
        ["leaderboard", "--results", str(tmp_path), "--uncertainty", "40", "--format", "md"]
    )
    out = capsys.readouterr()
    assert rc == 0 and out.err.count("set aside") == 2 and "±100000000000" not in out.out


def test_intervals_stay_inside_the_metrics_range(tmp_path):
    """Near the ends of the range: a band of 0.15 around 0.897, experiments near 1 or 0 (a board
    showed "89.7 ±10.0 [78.2-101.5]", issue 33)."""
    from maeb.analysis.leaderboard import load_board
    from maeb.analysis.uncertainty import compute

    from .test_uncertainty import write_result

    write_result(tmp_path, "org/a", "T", [0.897], band=0.15)
    path = tmp_path / "org__a" / "r1" / "T.json"
    data = json.loads(path.read_text())
    del data["scores"]["test"][0]["scores_per_experiment"]  # a band alone, as MAEB-lite's results have
    path.write_text(json.dumps(data))
    write_result(tmp_path, "org/b", "T", [0.98, 0.99, 1.0, 1.0, 0.97])
    write_result(tmp_path, "org/c", "T", [0.05, 0.0, 0.01, 0.0], band=0.2)
    board, _ = load_board([tmp_path])
    u = compute(board, draws=200)
    for model in ("org/a", "org/b", "org/c"):
        cell = u.cells[(model, "T")]
        assert 0.0 <= cell.low <= cell.high <= 1.0, (model, cell)
    assert u.cells[("org/a", "T")].high == 1.0 and u.cells[("org/c", "T")].low == 0.0
    assert "101" not in u.cell_text("org/a", "T", 0.897) and "-" not in u.cell_text("org/c", "T", 0.015).replace("–", "")


# -- 2, 3. hub data: a pinned revision offline, and bytes that are not the declared ones ---------------
SHA, OTHER = "1" * 40, "2" * 40
LOAD = """
import sys
from maeb.core.errors import MaebError
from maeb.data.sources import load_hub_split
try:
    table = load_hub_split("org/tiny", sys.argv[1], None, "test", ["audio"], cache_dir=sys.argv[2])
except MaebError as exc:
    print("ERROR", exc)
else:
    print("LABELS", ",".join(table["label"]))
"""


def _tiny_parquet(path: Path, label: str) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"label": [label] * 4, "n": list(range(4))})
    pq.write_table(table, path, compression="none", use_dictionary=False, write_statistics=False)
    return path.read_bytes()


SNAPSHOT = """
import sys
from maeb.core.errors import MaebError
from maeb.data.sources import hub_snapshot
try:
    root = hub_snapshot("org/tiny", sys.argv[1])
except MaebError as exc:
    print("ERROR", exc)
else:
    print("LABELS", (root / "data" / "test-00000-of-00001.parquet").stat().st_size)
"""


def _load(tmp_path: Path, hub, revision: str, offline: bool = False, script: str = LOAD) -> str:
    import subprocess
    import sys

    from .hub.check import maeb_env

    env = maeb_env(tmp_path, hub.endpoint, **({"HF_HUB_OFFLINE": "1"} if offline else {}))
    proc = subprocess.run(
        [sys.executable, "-c", script, revision, str(tmp_path / "maeb-cache")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("ERROR", "LABELS"))]
    assert proc.returncode == 0 and len(lines) == 1, proc.stdout + proc.stderr
    return lines[0]


@pytest.fixture
def tiny_hub(tmp_path):
    from .hub.server import HubServer

    repo = tmp_path / "repo"
    good = _tiny_parquet(repo / "data" / "test-00000-of-00001.parquet", "good")
    with HubServer() as hub:
        hub.add("dataset", "org/tiny", SHA, repo)
        yield hub, good, tmp_path / "tampered.parquet"


@pytest.mark.slow  # three interpreters that import datasets
def test_offline_a_pinned_revision_that_is_not_cached_fails_in_one_line(tiny_hub, tmp_path):
    hub, _, _ = tiny_hub
    assert _load(tmp_path, hub, SHA) == "LABELS good,good,good,good"
    assert _load(tmp_path, hub, SHA, offline=True) == "LABELS good,good,good,good"  # the cached pin loads offline
    line = _load(tmp_path, hub, OTHER, offline=True)
    assert line.startswith("ERROR") and f"org/tiny@{OTHER}" in line and "not in the local cache" in line, line
    assert "HF_HUB_OFFLINE" in line


@pytest.mark.slow
def test_a_download_whose_bytes_differ_from_the_declared_sha256_is_refused(tiny_hub, tmp_path):
    hub, good, other = tiny_hub
    bad = _tiny_parquet(other, "evil")  # a readable parquet of the same size: only the checksum tells
    assert len(bad) == len(good) and bad != good
    hub.tamper("test-00000-of-00001.parquet", bad)
    line = _load(tmp_path, hub, SHA)
    assert line.startswith("ERROR") and "does not match the hub's checksum" in line and "data/test-00000" in line, line
    downloads = [r for r in hub.requests() if r.method == "GET" and r.path.endswith(".parquet") and r.sent]
    assert len(downloads) == 2  # downloaded once more before refusing
    # the bytes were not kept: once the hub serves the right ones, the same command loads them
    hub.tampered.clear()
    assert _load(tmp_path, hub, SHA) == "LABELS good,good,good,good"


@pytest.mark.slow
def test_a_snapshot_download_with_tampered_bytes_is_refused(tiny_hub, tmp_path):
    """hub-files and webdataset sources download a snapshot of files: the same check."""
    hub, good, other = tiny_hub
    hub.tamper("test-00000-of-00001.parquet", _tiny_parquet(other, "evil"))
    line = _load(tmp_path, hub, SHA, script=SNAPSHOT)
    assert line.startswith("ERROR") and "does not match the hub's checksum" in line, line
    hub.tampered.clear()
    assert _load(tmp_path, hub, SHA, script=SNAPSHOT) == f"LABELS {len(good)}"


def test_a_weights_package_named_by_an_option_is_not_imported_without_opt_in(evil):
    from maeb.core import trust
    from maeb.core.errors import ModelError
    from maeb.encoders.offline import package_path

    trust.allow_code(False)
    with pytest.raises(ModelError, match="--allow-code"):
        package_path("evilmod")
    assert not (evil / "evilmod.ran").exists()
    trust.allow_code(True)
    try:
        with pytest.raises(AttributeError):  # imported now: it has no get_model_path
            package_path("evilmod")
        assert (evil / "evilmod.ran").exists()
    finally:
        trust.allow_code(False)
