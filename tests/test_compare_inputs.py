"""`maeb compare --models` refuses per-item files it cannot compare, in one line naming the file,
line and item: a NaN or inf score (which made every sign flip extreme: p = 0.0005), a value
outside the metric's range (an accuracy of 5), two files of different metrics, a repeated item."""

from __future__ import annotations

import pytest

from maeb.analysis.paired import compare_models
from maeb.core.errors import DataError

KEYS = [f"k{i}" for i in range(12)]


def _write(root, model, metric, values, rows=None):
    folder = root / model.replace("/", "__") / "r1" / "T_predictions"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"# metric\t{metric}", "key\tclip\tvalue"]
    lines += rows or [f"{k}\t{k}.wav\t{v!r}" for k, v in zip(KEYS, values)]
    (folder / "test_per_item.tsv").write_text("\n".join(lines) + "\n")
    return folder.parent


def _pair(tmp_path, values_a, metric_b="accuracy", rows=None):
    a = _write(tmp_path, "org/a", "accuracy", values_a, rows)
    b = _write(tmp_path, "org/b", metric_b, [0.5] * len(KEYS))
    return a, b


@pytest.mark.parametrize("bad, shown", [(float("nan"), "nan"), (float("inf"), "inf"), (5.0, "5"), (-0.5, "-0.5")])
def test_one_bad_item_is_refused_naming_the_file_line_and_item(tmp_path, bad, shown):
    values = [1.0, 0.0] * 6
    values[3] = bad
    a, b = _pair(tmp_path, values)
    with pytest.raises(DataError) as err:
        compare_models(a, b, draws=200)
    line = str(err.value)
    assert "\n" not in line and "org__a" in line and "line 6" in line and "k3 (k3.wav)" in line and shown in line


def test_two_metrics_are_refused(tmp_path):
    a, b = _pair(tmp_path, [1.0, 0.0] * 6, metric_b="ndcg_at_10")
    with pytest.raises(DataError, match="scores accuracy, .*org__b.* scores ndcg_at_10"):
        compare_models(a, b, draws=200)


def test_a_repeated_item_is_refused(tmp_path):
    rows = [f"{k}\t{k}.wav\t1.0" for k in KEYS] + ["k2\tk2.wav\t0.0"]
    a, b = _pair(tmp_path, None, rows=rows)
    with pytest.raises(DataError, match="item k2 .* already on line 5"):
        compare_models(a, b, draws=200)


def test_in_range_items_still_compare_and_the_cli_says_one_line(tmp_path, capsys):
    from maeb.cli.commands import main

    a, b = _pair(tmp_path, [1.0, 0.0] * 6)
    (row,) = compare_models(a, b, draws=200)
    assert row["items"] == 12 and row["metric"] == "accuracy"
    _write(tmp_path, "org/a", "accuracy", [float("nan")] + [1.0] * 11)
    rc = main(["compare", "--results", str(tmp_path), "--models", "org/a", "org/b"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1 and "not a finite number" in err
