"""split_by = {random = SHARE, seed = N} for local folders: per label, the documented share of the
clips goes to the evaluation split and the rest to training, chosen by a seeded hash of the clip's
file name, so the assignment depends on the names, labels, share and seed, not on the row order."""

from __future__ import annotations

import csv
import hashlib
import math
import random
import shutil

import pytest

from maeb.core.errors import DataError
from maeb.spec.loader import load_task
from maeb.spec.taskspec import load_spec


def _spec(tmp_path, folder, split_by: str, name="Random", kind="classification", extra=""):
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ntype = "{kind}"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n{extra}split_by = {split_by}\n'
    )
    return load_spec(path)


def _split_of(spec, tmp_path) -> dict[str, str]:
    from maeb.core.context import RunContext

    data = load_task(spec, RunContext(cache_dir=tmp_path / "cache"))["default"]
    return {ref.name: split for split, table in data.items() for ref in table["audio"]}


def _labels(folder) -> dict[str, str]:
    with open(folder / "metadata.csv", newline="") as handle:
        return {row["file_name"]: row["label"] for row in csv.DictReader(handle)}


def _uneven_folder(tmp_path, tone_folder):
    """The tone folder with labels of 12, 7, 2 and 1 clips (some of "high" relabelled)."""
    folder = tmp_path / "uneven"
    shutil.copytree(tone_folder, folder)
    with open(folder / "metadata.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    highs = [r for r in rows if r["label"] == "high"]
    for r in highs[:2]:
        r["label"] = "pair"
    highs[2]["label"] = "single"
    rows = [r for r in rows if r not in highs[3:5]]  # 12 - 2 - 1 - 2 = 7 left labelled high
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder


def test_random_split_follows_the_documented_rule(tmp_path, tone_folder):
    folder = _uneven_folder(tmp_path, tone_folder)
    labels = _labels(folder)
    counts = {label: list(labels.values()).count(label) for label in set(labels.values())}
    assert sorted(counts.values()) == [1, 2, 7, 12, 12]
    got = _split_of(_spec(tmp_path, folder, "{ random = 0.2, seed = 3 }"), tmp_path)
    assert set(got) == set(labels)  # every clip in exactly one split
    for label, n in counts.items():
        names = sorted((hashlib.blake2b(f"3\0{f}".encode(), digest_size=8).digest(), f) for f in labels if labels[f] == label)
        held = 0 if n < 2 else min(n - 1, math.floor(0.2 * n + 0.5))
        assert {f for _, f in names[:held]} == {f for f in got if labels[f] == label and got[f] == "test"}, label
    test_counts = {label: sum(1 for f in got if labels[f] == label and got[f] == "test") for label in counts}
    assert test_counts == {label: {12: 2, 7: 1, 2: 0, 1: 0}[n] for label, n in counts.items()}


def test_random_split_does_not_depend_on_row_order_but_on_the_seed(tmp_path, tone_folder):
    first = _split_of(_spec(tmp_path, tone_folder, "{ random = 0.25, seed = 0 }"), tmp_path)
    shuffled = tmp_path / "shuffled"
    shutil.copytree(tone_folder, shuffled)
    lines = (shuffled / "metadata.csv").read_text().splitlines()
    body = lines[1:]
    random.Random(1).shuffle(body)
    (shuffled / "metadata.csv").write_text("\n".join([lines[0], *body]) + "\n")
    assert _split_of(_spec(tmp_path, shuffled, "{ random = 0.25, seed = 0 }", "Shuffled"), tmp_path) == first
    other = _split_of(_spec(tmp_path, tone_folder, "{ random = 0.25, seed = 1 }", "Seed1"), tmp_path)
    assert other != first and sorted(other.values()) == sorted(first.values())  # same counts, other clips


def test_a_one_split_task_reads_every_row_without_split_by(tmp_path, tone_folder):
    path = tmp_path / "All.toml"
    path.write_text(f'name = "All"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n')
    got = _split_of(load_spec(path), tmp_path)
    assert set(got.values()) == {"test"} and len(got) == len(_labels(tone_folder))


@pytest.mark.parametrize(
    ("split_by", "extra", "message"),
    [
        ("{ random = 1.5 }", "", "a number between 0 and 1"),
        ("{ random = 0.2, column = 'split' }", "", "random takes only random, seed; remove column"),
        ("{ random = 0.2, seed = -1 }", "", "non-negative integer"),
        ("{ random = 0.2 }", 'eval_splits = ["validation", "test"]\n', "one evaluation split and a training split"),
    ],
)
def test_random_split_refuses_what_it_cannot_do(tmp_path, tone_folder, split_by, extra, message):
    with pytest.raises(DataError, match=message):
        _split_of(_spec(tmp_path, tone_folder, split_by, extra=extra), tmp_path)
