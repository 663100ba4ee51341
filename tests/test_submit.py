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

    rc, err = run(tmp_path, model, write_subset_task(tmp_path, subset_folder, ["s0", "s1", "s2"]), capsys)
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
