"""Confound probes (classification's `[protocol] nuisance_columns`, maeb.tasktypes.confound): a
local folder whose label is fully confounded with its speaker column warns, one whose speaker is
crossed with the label does not; both record the probes in the result's maeb record."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from maeb.mock import tone

# each speaker speaks at one pitch and all their clips carry one label, pitches interleaved by label:
# a probe that has heard a speaker recognises them, one that has not cannot place a new pitch
SPEAKERS = {
    "s0": (300.0, "a"),
    "s1": (420.0, "b"),
    "s2": (540.0, "a"),
    "s3": (660.0, "b"),
    "s4": (780.0, "a"),
    "s5": (900.0, "b"),
}


def _confounded_folder(folder: Path) -> Path:
    (folder / "audio").mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = []
    for speaker, (freq, label) in SPEAKERS.items():
        for i in range(8):
            name = f"audio/{speaker}_{i}.wav"
            sf.write(folder / name, tone(freq * rng.uniform(0.99, 1.01), 0.5, seed=int(rng.integers(1 << 30))), 16000)
            rows.append({"file_name": name, "label": label, "speaker": speaker, "split": "test"})
    with open(folder / "metadata.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder


def _run(tmp_path: Path, folder: Path, name: str, protocol: str) -> dict:
    from maeb.cli.commands import main

    task = tmp_path / f"{name}.toml"
    task.write_text(
        f'name = "{name}"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        f'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\nnuisance_columns = ["speaker"]\n{protocol}'
    )
    out = tmp_path / "res"
    args = ["run", "-m", "maeb/mfcc-stats", "-t", str(task), "--output-dir", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main([*args, "--quiet"]) == 0
    (path,) = out.rglob(f"{name}.json")
    return json.loads(path.read_text())["maeb"]


def test_a_label_confounded_with_the_speaker_warns_and_a_crossed_one_does_not(tmp_path, tone_folder):
    confounded = _run(tmp_path, _confounded_folder(tmp_path / "conf"), "SpeakerTones", "cross_validation = true\n")
    (record,) = confounded["evaluation"]["test"]["default"]["confounds"]
    assert record["column"] == "speaker" and record["values"] == 6 and record["clips"] == 48
    assert record["nuisance"]["accuracy"] > 0.8 > record["nuisance"]["chance"] == pytest.approx(1 / 6, abs=1e-6)
    assert record["shared"] > 0.7 and record["leave_group_out"] < 0.3 and record["warn"] is True
    assert record["within"] == dict.fromkeys(SPEAKERS)  # each speaker holds one label: no score within a speaker
    warned = [w for w in confounded["data"]["warnings"] if "nuisance 'speaker'" in w]
    assert len(warned) == 1 and "the score drops by" in warned[0] and "SpeakerTones" in warned[0]

    crossed = _run(tmp_path, tone_folder, "CrossedTones", "")
    (record,) = crossed["evaluation"]["test"]["default"]["confounds"]
    assert record["values"] == 3 and record["clips"] == 36  # the 27 drawn training clips and the 9 test clips
    assert record["drop"] < 0.1 and record["warn"] is False
    assert set(record["within"]) == {"s0", "s1", "s2"} and all(v > 0.9 for v in record["within"].values())
    assert not [w for w in crossed["data"]["warnings"] if "nuisance" in w]


def test_a_missing_or_blank_nuisance_column_fails_naming_it(tmp_path, tone_folder):
    from maeb.core.errors import DataError
    from maeb.data.sources import Table
    from maeb.tasktypes.confound import nuisance_values

    with pytest.raises(DataError, match="'session'.*protocol.nuisance_columns"):
        nuisance_values(Table({"speaker": ["a"]}, name="T"), ["session"], "T test")
    with pytest.raises(DataError, match="nuisance column 'speaker' is blank at row 1"):
        nuisance_values(Table({"speaker": ["a", " "]}, name="T"), ["speaker"], "T test")


def test_a_task_without_nuisance_columns_keeps_its_identity():
    from maeb.spec.taskspec import parse_spec

    raw = {"name": "B", "type": "classification", "data": {"source": "audiofolder", "path": "/x", "eval_splits": ["test"]}}
    assert "nuisance_columns" not in parse_spec(raw, "t").protocol
    raw["protocol"] = {"nuisance_columns": ["speaker"]}
    assert parse_spec(raw, "t").protocol["nuisance_columns"] == ["speaker"]
