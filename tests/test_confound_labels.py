"""Confound probes on integer labels (FSDD's digits) work; the line states the evidence (values,
clips per value) and a drop on two values is weak evidence, logged, not warned (TESS: 2 speakers,
emotion easy within each, warned "much of it is the nuisance"); a label column mixing numbers and
text reads as text throughout, as a dataframe reader types it."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from maeb.tasktypes import get as get_type
from maeb.tasktypes.confound import MIN_CLIPS, message, probe_column, run

from .test_confound import SPEAKERS, _confounded_folder, _run


class _Log:
    context = "T"

    def __init__(self):
        self.logged, self.warned = [], []

    def log(self, text):
        self.logged.append(text)

    def warn(self, text):
        self.warned.append(text)


def _params():
    return get_type("classification").params({}, "t")


def _two_speakers(per: int = 16):
    """Two speakers, two labels; within each the label is the first coordinate's side, but the
    second speaker's sides are swapped: a probe trained on one speaker alone gets the other wrong."""
    rng = np.random.default_rng(0)
    x, y, g = [], [], []
    for speaker, flip in (("a", 0), ("b", 1)):
        for i in range(per):
            label = i % 2
            side = label ^ flip
            x.append([side + 0.05 * rng.standard_normal(), 3.0 * flip + 0.05 * rng.standard_normal()])
            y.append(label)
            g.append(speaker)
    return np.array(x), np.array(y), np.array(g, dtype=object)


def test_integer_labels_work_in_confound_probes():
    x, y, g = _two_speakers()
    emb = _Log()
    (record,) = run(emb, x, list(y), {"speaker": g}, _params(), "accuracy", "mteb")
    assert record["shared"] is not None and record["leave_group_out"] is not None


def test_a_drop_on_two_values_is_weak_evidence_and_says_so():
    x, y, g = _two_speakers()
    emb = _Log()
    (record,) = run(emb, x, y, {"speaker": g}, _params(), "accuracy", "mteb")
    assert record["drop"] >= 0.1 and record["warn"] is False and "only 2 values" in record["weak"]
    assert not emb.warned
    (line,) = emb.logged
    assert "2 values, 16 to 16 clips each" in line and "weak evidence, no warning" in line


def test_a_value_with_few_clips_is_weak_evidence():
    x, y, g = _two_speakers()
    g = g.copy()
    g[4:10] = "c"  # four speakers: a 2, b 16, c 6, d 8
    g[0:2], g[2:4] = "a", "d"
    g[10:16] = "d"
    record = probe_column(x, y, g, "speaker", _params(), "accuracy", "mteb")
    assert record["values"] == 4 and record["clips_per_value"] == {"fewest": 2, "most": 16} and 2 < MIN_CLIPS
    assert record["warn"] is False and "a value holds only 2 clips" in record["weak"]


def test_the_warning_states_the_evidence(tmp_path):
    confounded = _run(tmp_path, _confounded_folder(tmp_path / "conf"), "SpeakerTones", "cross_validation = true\n")
    (record,) = confounded["evaluation"]["test"]["default"]["confounds"]
    assert record["warn"] is True and record["weak"] == ""
    (warned,) = [w for w in confounded["data"]["warnings"] if "nuisance 'speaker'" in w]
    assert f"{len(SPEAKERS)} values, 8 to 8 clips each" in warned and "without shared speaker values" in warned
    assert message("SpeakerTones [test]", record) == warned


def test_integer_labels_with_a_speaker_column_run_end_to_end(tmp_path, monkeypatch):
    import tests.test_confound as tc

    monkeypatch.setattr(tc, "SPEAKERS", {k: (f, {"a": 0, "b": 1}[label]) for k, (f, label) in SPEAKERS.items()})
    result = _run(tmp_path, _confounded_folder(tmp_path / "int"), "IntTones", "cross_validation = true\n")
    (record,) = result["evaluation"]["test"]["default"]["confounds"]
    assert record["warn"] is True


@pytest.mark.parametrize("row", [0, 1])
def test_one_text_label_among_integers_reads_all_as_text(tmp_path, row):
    """Row 0 is a test clip, row 1 a training one: either way the task runs, the labels as text."""
    from maeb.cli.commands import main
    from maeb.data.sources import load_audiofolder
    from maeb.mock import write_tone_folder

    folder = write_tone_folder(tmp_path / "d", {"1": 220.0, "2": 880.0, "3": 3520.0}, per_label=12)
    rows = list(csv.DictReader(open(folder / "metadata.csv")))
    rows[row]["label"] = "dog"
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    labels = load_audiofolder(folder)["label"]
    assert set(labels) == {"1", "2", "3", "dog"}
    (tmp_path / "ints").mkdir()
    (tmp_path / "ints" / "metadata.csv").write_text("file_name,label\na.wav,1\nb.wav,2\n")
    assert load_audiofolder(tmp_path / "ints")["label"] == [1, 2]  # a column of numbers only keeps them (mteb's ints)
    task = tmp_path / "T.toml"
    task.write_text(
        f'name = "Mixed"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n'
    )
    args = [
        "run",
        "-m",
        "maeb/mfcc-stats",
        "-t",
        str(task),
        "--output-dir",
        str(tmp_path / "r"),
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    assert main([*args, "--quiet"]) == 0
