"""`maeb datacard`: classes and balance, durations, rates and channels, exact and near duplicates,
train/test overlap and clips over the cap, on a local folder whose answers are known, and on
MAEB-lite tasks."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import soundfile as sf

from maeb.cli.commands import main


def _task(tmp_path):
    """Ten clips: c1 is a byte copy of c0 (test vs train), c3 is c2 plus faint noise (same length),
    c4 is 35 s long, c5 is stereo at 8 kHz; classes a (6), b (3), c (1)."""
    folder = tmp_path / "clips"
    folder.mkdir()
    rng = np.random.default_rng(0)
    t = np.arange(16000) / 16000
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    clips = {
        "c0": (0.1 * rng.standard_normal(12000), 16000),
        "c2": (tone, 16000),
        "c3": (tone + 1e-4 * rng.standard_normal(tone.size), 16000),
        "c4": (0.1 * rng.standard_normal(35 * 8000), 8000),
        "c5": (0.1 * rng.standard_normal((8000, 2)), 8000),
    }
    for i in range(6, 10):
        clips[f"c{i}"] = (np.sin(2 * np.pi * (200 + 97 * i) * np.arange(4000 + 500 * i) / 16000), 16000)
    for name, (samples, rate) in clips.items():
        sf.write(folder / f"{name}.wav", np.asarray(samples, dtype=np.float32), rate)
    (folder / "c1.wav").write_bytes((folder / "c0.wav").read_bytes())
    labels = list("aaaaaabbbc")
    splits = ["train", "test"] + ["train"] * 8
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file_name", "label", "split"])
        for i in range(10):
            writer.writerow([f"c{i}.wav", labels[i], splits[i]])
    task = tmp_path / "Card.toml"
    task.write_text(
        f'name = "Card"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n'
    )
    return task


def test_a_local_folder_card_finds_what_was_planted(tmp_path, capsys):
    task = _task(tmp_path)
    assert main(["datacard", str(task), "--json", "--cache-dir", str(tmp_path / "cache")]) == 0
    (card,) = json.loads(capsys.readouterr().out)
    assert card["clips"] == 9  # c0 and c1 are one content
    train, test = card["splits"]["train"], card["splits"]["test"]
    assert train["classes"] == {"a": 5, "b": 3, "c": 1} and test["classes"] == {"a": 1}
    assert train["majority_share"] == round(5 / 9, 4) and train["imbalance"] == 5
    assert train["sample_rates"] == {8000: 2, 16000: 7} or train["sample_rates"] == {"8000": 2, "16000": 7}
    assert train["channels"] in ({"1": 8, "2": 1}, {1: 8, 2: 1})
    assert train["seconds"]["max"] == 35.0 and card["over_cap"] == 1
    assert card["exact_duplicates"]["groups"] == 1 and card["exact_duplicates"]["examples"] == [["c0.wav", "c1.wav"]]
    assert card["near_duplicates"]["groups"] == 1 and card["near_duplicates"]["examples"] == [["c2.wav", "c3.wav"]]
    assert card["train_test_overlap"] == {"exact": 1, "near_groups": 0}
    assert main(["datacard", str(task), "--cap", "40", "--cache-dir", str(tmp_path / "cache")]) == 0
    text = capsys.readouterr().out
    assert "over the 40 s cap: 0 clips" in text
    assert "exact duplicates (content hash): 1 groups, 2 clips (e.g. c0.wav = c1.wav)" in text
    assert "train/test overlap: 1 clips exactly" in text


def test_an_unknown_task_is_one_line(tmp_path, capsys):
    assert main(["datacard", "NoSuchTask", "--cache-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("maeb: error:") and "NoSuchTask" in err and err.count("\n") == 1


@pytest.mark.slow
def test_maeb_lite_cards(lite_data, tmp_path, capsys):
    tasks = ["LiteSoundEvents", "LiteMixtureTags", "LiteSameWordA2A", "LiteSpeakerPairs"]
    assert main(["datacard", *tasks, "--json", "--lite-dir", str(lite_data), "--cache-dir", str(tmp_path)]) == 0
    cards = {c["task"]: c for c in json.loads(capsys.readouterr().out)}
    assert cards["LiteSoundEvents"]["clips"] == 156 and cards["LiteSoundEvents"]["splits"]["all"]["imbalance"] == 1
    assert set(cards["LiteMixtureTags"]["splits"]) == {"train", "test"}
    assert cards["LiteMixtureTags"]["train_test_overlap"]["exact"] == 0
    assert cards["LiteSameWordA2A"]["splits"]["all"]["queries"] == 140
    assert all(c["exact_duplicates"]["groups"] == 0 for c in cards.values())


@pytest.mark.slow
def test_hub_task_cards_through_the_test_hub(tmp_path):
    """Hub tasks load as a run loads them (tests/hub: a local hub in the cards' layouts)."""
    from maeb.spec import catalog

    from .hub.check import build_site, maeb_env, maeb_run
    from .hub.server import HubServer

    tasks = ["BeijingOpera", "MACST2ARetrieval", "CREMADPairClassification"]
    site = build_site(tmp_path / "hub", [catalog.find_task(t) for t in tasks], [])
    with site.serve(HubServer()) as hub:
        proc, _ = maeb_run(["datacard", *tasks, "--json"], maeb_env(tmp_path, hub.endpoint), tmp_path / "work")
    assert proc.returncode == 0, proc.stderr[-2000:]
    cards = {c["task"]: c for c in json.loads(proc.stdout)}
    assert set(cards) == set(tasks) and all(c["clips"] > 0 for c in cards.values())
    (split,) = cards["MACST2ARetrieval"]["splits"].values()
    assert split["queries"] > 0 and split["documents"] > 0
    assert any("classes" in s for s in cards["BeijingOpera"]["splits"].values())


def test_event_lists_are_counted_by_class():
    from maeb.analysis.datacard import _labels
    from maeb.data.sources import Table
    from maeb.spec.taskspec import parse_spec

    spec = parse_spec(
        {"name": "E", "type": "event_detection", "data": {"source": "audiofolder", "path": "/x", "eval_splits": ["test"]}},
        "test spec",
    )
    table = Table({"label": ['[["chirp", 0.1, 1.0], ["tone", 2.0, 3.0]]', [["chirp", 0.5, 0.9]], ["dog", "cat"]]})
    assert _labels(spec, table) == {"chirp": 2, "tone": 1, "dog": 1, "cat": 1}
