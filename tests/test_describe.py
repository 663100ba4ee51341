"""The spec reference (maeb/spec/describe.py): generated from the registries, committed as
docs/spec-reference.md, shown by `python -m maeb describe`; and clustering's n_bootstrap, whose
old name n_clusters specs may still use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from maeb import tasktypes
from maeb.cli.commands import main
from maeb.core.errors import SpecError
from maeb.core.taskspec import TaskSpec
from maeb.spec import describe
from maeb.spec import taskspec as spec

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "spec-reference.md"


def test_committed_reference_is_the_generated_one():
    """A new field, op, kind or parameter, or a changed default or doc, changes the page:
    regenerate it with `python -m maeb describe --markdown > docs/spec-reference.md`."""
    assert REFERENCE.read_bytes() == describe.markdown().encode("utf-8"), (
        "docs/spec-reference.md is stale: run `python -m maeb describe --markdown > docs/spec-reference.md`"
    )


def test_everything_in_the_registries_has_a_meaning():
    assert describe.missing_docs() == []


def test_every_param_has_a_doc():
    undocumented = [
        f"{name}.{key}"
        for name in tasktypes.MODULES
        for key, value in tasktypes.get(name).PARAMS.items()
        if isinstance(value, tasktypes.Param) and not value.doc.strip()
    ]
    assert undocumented == []


def test_meanings_name_only_fields_that_exist():
    """A meaning left behind by a removed or renamed field is an error too."""
    from maeb.spec import derive

    assert set(describe.TOP_MEANINGS) - spec.TOP_FIELDS == set()
    assert set(describe.DATA_MEANINGS) - spec.DATA_FIELDS == set()
    assert set(describe.DERIVE_MEANINGS) - set().union(*derive.KINDS.values()) == set()
    for name, key in describe.PLAIN_PARAM_DOCS:
        assert key in tasktypes.get(name).PARAMS and not isinstance(tasktypes.get(name).PARAMS[key], tasktypes.Param)


def test_reference_covers_every_registry_entry():
    from maeb.data import transforms
    from maeb.spec import derive

    page = describe.markdown()
    for name in [*spec.TOP_FIELDS, *spec.DATA_FIELDS, *transforms.OPS, *derive.KINDS, *tasktypes.MODULES]:
        assert f"`{name}`" in page, name
    for name in tasktypes.MODULES:
        for key in tasktypes.get(name).PARAMS:
            assert f"| `{key}`" in page, (name, key)


def test_describe_a_type_by_maeb_or_mteb_name(capsys):
    assert main(["describe", "clustering"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("clustering (AudioClustering)")
    assert "main score: v_measure" in out and "metrics: v_measure, v_measure_std, ami, ami_std" in out
    assert "n_bootstrap = 10  (int, at least 1; alias n_clusters)" in out
    assert "reads splits: data.eval_splits" in out and "needs: audio" in out
    assert main(["describe", "AudioClustering"]) == 0
    assert capsys.readouterr().out == out


def test_describe_shows_what_depends_on_parameters_and_category(capsys):
    assert main(["describe", "classification"]) == 0
    out = capsys.readouterr().out
    assert "reads splits: data.eval_splits, data.train_split" in out
    assert "reads splits with cross_validation = true: data.eval_splits" in out
    assert main(["describe", "reranking"]) == 0
    out = capsys.readouterr().out
    assert "needs for category a2t, t2a: audio (audio encoder), text (text encoder)" in out
    assert "(k: 1, 3, 5, 10, 20, 100, 1000)" in out
    assert main(["describe", "judged_qa"]) == 0
    assert "needs: generate (text generation), judge (an LLM judge)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "topic, expected",
    [
        ("spec", ["top level:", "[data]:", 'eval_splits: list[str] = ["test"]', "one of hub, audiofolder"]),
        ("transforms", ["stratified_subsample: required: column; optional: n, seed", "head: required: n"]),
        ("derive", ["rerank (builds reranking data)", "n_pairs (int, 1 to 10000000): pairs drawn"]),
        (None, ["Task types", "pair_classification", "AudioCaptionJudging"]),
    ],
)
def test_describe_topics(capsys, topic, expected):
    assert main(["describe"] + ([topic] if topic else [])) == 0
    out = capsys.readouterr().out
    for text in expected:
        assert text in out, text


def test_describe_types_prints_every_type(capsys):
    assert main(["describe", "types"]) == 0
    out = capsys.readouterr().out
    for name in tasktypes.MODULES:
        assert f"\n{name} (" in "\n" + out, name


def test_describe_unknown_topic_suggests(capsys):
    assert main(["describe", "clusterin"]) == 2
    err = capsys.readouterr().err
    assert "unknown topic or task type 'clusterin'" in err and "did you mean clustering" in err


def test_describe_runs_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "maeb", "describe", "transforms"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "drop_invalid_audio" in out.stdout


def _clustering(tmp_path: Path, protocol: str = "") -> TaskSpec:
    text = f'name = "T"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "."\n{protocol}'
    import tomllib

    return spec.parse_spec(tomllib.loads(text), "t.toml", base=tmp_path)


def test_n_bootstrap_and_its_old_name_give_the_same_protocol(tmp_path):
    """n_clusters (mteb's name) still works and gives the very protocol n_bootstrap gives; the
    parsed protocol keeps mteb's key, so result identities and files are those of old runs."""
    new = _clustering(tmp_path, "[protocol]\nn_bootstrap = 3\n").protocol
    old = _clustering(tmp_path, "[protocol]\nn_clusters = 3\n").protocol
    assert new == old and list(new) == list(old)
    assert new["n_clusters"] == 3 and "n_bootstrap" not in new
    default = _clustering(tmp_path).protocol
    assert list(default) == [
        "n_clusters",
        "max_documents_per_cluster",
        "kmeans_batch_size",
        "max_fraction_of_documents_to_embed",
        "max_documents_to_embed",
        "max_depth",
        "seed",
    ]
    assert default["n_clusters"] == 10
    again = tasktypes.get("clustering").params(new, "t")  # a parsed protocol parses to itself
    assert again == new


def test_n_bootstrap_given_twice_is_an_error_naming_both(tmp_path):
    with pytest.raises(SpecError, match="n_bootstrap and n_clusters are the same parameter"):
        _clustering(tmp_path, "[protocol]\nn_bootstrap = 3\nn_clusters = 3\n")


@pytest.mark.parametrize("name", ["n_bootstrap", "n_clusters"])
def test_a_bad_n_bootstrap_names_the_field_as_written(tmp_path, name):
    with pytest.raises(SpecError, match=f"{name} must be at least 1"):
        _clustering(tmp_path, f"[protocol]\n{name} = 0\n")


def test_an_unknown_clustering_parameter_suggests_the_new_name(tmp_path):
    with pytest.raises(SpecError, match="did you mean 'n_bootstrap'"):
        _clustering(tmp_path, "[protocol]\nn_bootstrp = 3\n")
