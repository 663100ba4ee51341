"""From a run to the results repository (issue 32): model_meta.json as mteb reads it, runs that
extend earlier ones, and `maeb submit` with the repository's CI rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maeb.cli.commands import main
from maeb.mock import write_tone_folder
from tests.conftest import FREQS
from tests.test_cli import write_model

SUBSET_TASK = """name = "ToneSpeakers"
type = "clustering"
languages = ["zxx-Zxxx"]
[data]
source = "audiofolder"
path = "{folder}"
eval_splits = ["test"]
subsets = {subsets}
[data.split_by]
column = "split"
"""


@pytest.fixture(scope="module")
def subset_folder(tmp_path_factory) -> Path:
    """A folder with three subsets (sub-folders s0, s1, s2) of tones."""
    root = tmp_path_factory.mktemp("subsets")
    for i in range(3):
        write_tone_folder(root / f"s{i}", FREQS, per_label=4, seed=i)
    return root


def write_subset_task(tmp_path: Path, folder: Path, subsets: list[str]) -> Path:
    path = tmp_path / f"speakers-{len(subsets)}.toml"
    path.write_text(SUBSET_TASK.format(folder=folder, subsets=json.dumps(subsets)))
    return path


def run(tmp_path: Path, model: Path, task: Path, capsys) -> tuple[int, str]:
    args = ["run", "--model", str(model), "--tasks", str(task), "--output-dir", str(tmp_path / "res")]
    rc = main([*args, "--cache-dir", str(tmp_path / "cache")])
    return rc, capsys.readouterr().err


@pytest.mark.slow
def test_a_run_with_more_subsets_evaluates_the_missing_ones_and_merges(tmp_path, subset_folder, capsys):
    model = write_model(tmp_path)
    result = tmp_path / "res" / "test__spectral" / "r1" / "ToneSpeakers.json"
    rc, err = run(tmp_path, model, write_subset_task(tmp_path, subset_folder, ["s0"]), capsys)
    assert rc == 0, err
    first = json.loads(result.read_text())
    assert [e["hf_subset"] for e in first["scores"]["test"]] == ["s0"]

    wider = write_subset_task(tmp_path, subset_folder, ["s0", "s1", "s2"])
    args = ["run", "--model", str(model), "--tasks", str(wider), "--output-dir", str(tmp_path / "res")]
    assert main([*args, "--cache-dir", str(tmp_path / "cache"), "--dry-run"]) == 0
    assert "to run" in capsys.readouterr().out  # the plan says so too, not "stop"
    rc, err = run(tmp_path, model, wider, capsys)
    assert rc == 0, err  # no --overwrite needed
    assert "lacks test/s1, test/s2" in err
    merged = json.loads(result.read_text())
    assert [e["hf_subset"] for e in merged["scores"]["test"]] == ["s0", "s1", "s2"]
    assert merged["scores"]["test"][0] == first["scores"]["test"][0]  # the earlier subset kept as it was
    assert merged["maeb"]["extends"]["pairs"] == [["test", "s0"]]
    assert merged["mteb_version"].startswith("2.26.24+maeb.")
    settings = [json.loads(line) for line in (result.parent / "run_settings.jsonl").read_text().splitlines()]
    assert sorted(sub for row in settings for sub in row["subsets"]) == ["s0", "s1", "s2"]

    # the merged file covers both: the full run and the narrow one are done, nothing is rewritten
    for subsets in (["s0", "s1", "s2"], ["s0"]):
        rc, err = run(tmp_path, model, write_subset_task(tmp_path, subset_folder, subsets), capsys)
        assert rc == 0 and "already done" in err, err
    assert json.loads(result.read_text()) == merged


# -- model_meta.json ---------------------------------------------------------------------------
def test_model_meta_json_is_mteb_s_record_or_a_converted_entry_without_extra_keys():
    from maeb.results.write import model_meta_json
    from maeb.spec.catalog import find_model, models, mteb_record

    whisper = find_model("openai/whisper-medium")
    assert model_meta_json(whisper) == {**mteb_record(whisper.name), "experiment_kwargs": None}
    fields = set(mteb_record(whisper.name))  # mteb's ModelMeta.to_dict keys
    for meta in models().values():
        written = model_meta_json(meta)
        assert "maeb" not in written and set(written) <= fields, meta.name
        assert written["similarity_fn_name"] != "max_sim", meta.name
    colbert = model_meta_json(find_model("mteb/baseline-random-colbert"))
    assert colbert["similarity_fn_name"] == "MaxSim"
    omni = find_model("Qwen/Qwen2.5-Omni-3B")
    assert set(model_meta_json(omni)["modalities"]) > set(omni.modalities)  # mteb's registry lists video and image too
    ct2 = model_meta_json(find_model("openai/whisper-tiny.en"))
    assert mteb_record("openai/whisper-tiny.en") is None and ct2["framework"] == [] and ct2["loader"] == "maeb:ct2-whisper"


# -- maeb submit -------------------------------------------------------------------------------
MODEL = "openai/whisper-medium"


def result(task: str, subsets: dict[str, float], revision: str = "d1") -> dict:
    entries = [{"hf_subset": s, "main_score": v, "accuracy": v, "languages": ["zxx-Zxxx"]} for s, v in subsets.items()]
    return {
        "dataset_revision": revision,
        "task_name": task,
        "mteb_version": "2.26.24+maeb.0.2.0",
        "scores": {"test": entries},
        "evaluation_time": 1.0,
    }


def lay_out(root: Path, model: str, revision: str, files: dict[str, dict], meta: dict | None = None) -> Path:
    from maeb.results.write import model_meta_json
    from maeb.spec.catalog import find_model

    folder = root / model.replace("/", "__") / revision
    folder.mkdir(parents=True)
    (folder / "model_meta.json").write_text(json.dumps(meta or model_meta_json(find_model(model))))
    for name, data in files.items():
        (folder / f"{name}.json").write_text(json.dumps(data))
    return folder


@pytest.fixture
def clone(tmp_path) -> Path:
    """A results repository clone holding one published file of MODEL: FSD2019Kaggle's `curated` subset."""
    from maeb.spec.catalog import mteb_record

    root = tmp_path / "clone"
    published = result("FSD2019Kaggle", {"curated": 0.5})
    published["mteb_version"] = "2.4.2"
    lay_out(root / "results", MODEL, mteb_record(MODEL)["revision"], {"FSD2019Kaggle": published})
    return root


def submit_main(ours: Path, clone: Path, capsys) -> tuple[int, str, str]:
    rc = main(["submit", str(ours), "--to", str(clone)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_submit_merges_new_subsets_and_keeps_the_published_ones(tmp_path, clone, capsys):
    from maeb.spec.catalog import mteb_record

    revision = mteb_record(MODEL)["revision"]
    ours = tmp_path / "ours"
    lay_out(
        ours,
        MODEL,
        revision,
        {
            "FSD2019Kaggle": result("FSD2019Kaggle", {"curated": 0.6, "noisy": 0.3}),
            "AudioSetMini": result("AudioSetMini", {"default": 0.7}),
        },
    )
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 0, err
    folder = clone / "results" / MODEL.replace("/", "__") / revision
    merged = json.loads((folder / "FSD2019Kaggle.json").read_text())
    assert [(e["hf_subset"], e["main_score"]) for e in merged["scores"]["test"]] == [("curated", 0.5), ("noisy", 0.3)]
    assert merged["mteb_version"] == "2.4.2"  # the published file's fields stay
    assert merged["scores"]["test"][1]["mteb_version"].startswith("2.26.24+maeb.")  # the added subset's own
    assert "kept the published scores of test/curated" in err
    assert json.loads((folder / "AudioSetMini.json").read_text())["task_name"] == "AudioSetMini"
    assert "wrote 2 result files of openai/whisper-medium" in out
    rc, out, err = submit_main(ours, clone, capsys)  # again: nothing new
    assert rc == 0 and "nothing new to submit" in out


def test_submit_refuses_experiments_unknown_models_duplicates_and_other_dataset_revisions(tmp_path, clone, capsys):
    from maeb.spec.catalog import mteb_record

    revision = mteb_record(MODEL)["revision"]
    ours = tmp_path / "ours"
    folder = lay_out(ours, MODEL, revision, {"FSD2019Kaggle": result("FSD2019Kaggle", {"noisy": 0.3}, revision="d2")})
    (folder / "experiments" / "dtype_float16").mkdir(parents=True)
    lay_out(ours, "maeb/mfcc-stats", "1", {"FSD2019Kaggle": result("FSD2019Kaggle", {"noisy": 0.3})})
    lay_out(
        clone / "results",
        "google/yamnet",
        mteb_record("google/yamnet")["revision"],
        {"BeijingOpera": result("BeijingOpera", {"default": 0.1})},
    )
    lay_out(
        ours,
        "google/yamnet",
        "main",
        {"BeijingOpera": result("BeijingOpera", {"default": 0.2})},
        {**mteb_record("google/yamnet"), "revision": "main"},
    )
    before = sorted(p for p in clone.rglob("*") if p.is_file())
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1
    lines = [line for line in err.splitlines() if line.startswith("refused: ")]
    assert len(lines) == 4, err
    assert any("experiment folders" in line for line in lines)
    assert any("model maeb/mfcc-stats is not in mteb's model registry" in line and "ModelMeta" in line for line in lines)
    assert any("the repository has BeijingOpera for this model under revision" in line for line in lines)
    assert any("computed on dataset revision d2" in line for line in lines)
    assert sorted(p for p in clone.rglob("*") if p.is_file()) == before  # nothing written


def test_submit_puts_everything_back_when_a_rule_fails(tmp_path, clone, capsys):
    from maeb.spec.catalog import mteb_record

    ours = tmp_path / "ours"
    meta = {**mteb_record("google/yamnet"), "revision": "main"}  # not a commit hash: the repository refuses new ones
    lay_out(ours, "google/yamnet", "main", {"BeijingOpera": result("BeijingOpera", {"default": 0.2})}, meta)
    before = sorted(p for p in clone.rglob("*") if p.is_file())
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1
    assert "failed: " in err and "revision-is-specified: 'main'" in err and "nothing was written" in err
    assert sorted(p for p in clone.rglob("*") if p.is_file()) == before
    assert not (clone / "results" / "google__yamnet").exists()
