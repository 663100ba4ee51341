"""Issue 33 (round 4 of the fault and security probe), items 1-7: names that would write outside
the output folder, hub data taken on trust (an uncached pinned revision offline, flipped bytes),
two specs of one name, bands and experiment scores outside the metric's range, split rules a hub
source ignores, and code imported on a spec's word. Each case failed before its fix."""

from __future__ import annotations

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
