"""A local audio folder's metadata with a row pasted twice is refused in one line naming the file,
the clip and both rows (three duplicated rows moved a score from 0.5500 to 0.6087 unnoticed); the
same clip with other values in its row stays a row of its own."""

from __future__ import annotations

import json

import pytest

from maeb.core.errors import DataError
from maeb.data.sources import load_audiofolder


def _csv(folder, lines):
    folder.mkdir(exist_ok=True)
    (folder / "metadata.csv").write_text("file_name,label,split\n" + "\n".join(lines) + "\n")
    return folder


def test_an_exact_duplicate_row_is_refused_naming_clip_and_rows(tmp_path):
    folder = _csv(tmp_path / "a", ["a.wav,dog,test", "b.wav,cat,test", "a.wav,dog,test"])
    with pytest.raises(DataError) as err:
        load_audiofolder(folder)
    line = str(err.value)
    assert "\n" not in line and "metadata.csv" in line and "a.wav" in line and "row 4" in line and "row 2" in line


def test_a_duplicate_jsonl_row_is_refused(tmp_path):
    folder = tmp_path / "j"
    folder.mkdir()
    rows = [{"file_name": "a.wav", "label": 1}, {"file_name": "b.wav", "label": 2}, {"label": 1, "file_name": "a.wav"}]
    (folder / "metadata.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(DataError, match=r"metadata.jsonl: row 3 repeats row 1 \(clip a.wav"):
        load_audiofolder(folder)


def test_the_same_clip_with_other_values_is_kept(tmp_path):
    folder = _csv(tmp_path / "b", ["a.wav,dog,train", "a.wav,dog,test", "b.wav,cat,test"])
    table = load_audiofolder(folder)
    assert len(table) == 3
