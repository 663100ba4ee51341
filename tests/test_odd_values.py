"""Odd values and flags: an unknown flag to regen_docs, a robust JSON of the wrong shape, inf and NaN
scores among ties and in zero-shot argmax, a very long model name in figures. Each failed before its
fix (found by scripts/fault_probe_outputs.py)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from maeb.core.errors import MaebError
from maeb.metrics import ties

ROOT = Path(__file__).resolve().parent.parent


def test_regen_docs_refuses_an_unknown_flag_instead_of_rewriting_pages():
    done = subprocess.run([sys.executable, "scripts/regen_docs.py", "--chek"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert "'--chek'" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("bad", ["[1, 2]", '{"curves": {"a": 3}}', '{"curves": [{"ladder": "x"}]}', '{"curves": [3]}'])
def test_a_robust_json_of_the_wrong_shape_is_one_line_naming_it(tmp_path, bad):
    pytest.importorskip("matplotlib")
    from maeb.analysis.figures import robustness

    path = tmp_path / "robust.json"
    path.write_text(bad)
    with pytest.raises(MaebError, match="robust.json") as err:
        robustness([path])
    assert "\n" not in str(err.value)


def test_an_inf_score_does_not_make_the_rest_of_its_list_tie():
    groups = ties.ranked_groups({"x": float("inf"), "b": 0.9, "c": 0.1}, {"b": 1})
    assert [len(g) for g in groups] == [1, 1, 1]
    assert ties.expected_metrics(groups, [1], [3])["MRR@3"] == 0.5


def test_a_nan_score_in_zero_shot_argmax_is_never_the_best_class():
    got = ties.argmax_ties(np.array([[float("nan"), 0.2], [0.9, 0.1], [0.3, float("inf")]]), np.array([1, 0, 0]))
    assert all(math.isfinite(v) for v in got.values())
    assert got == {"expected": 2 / 3, "low": 2 / 3, "high": 2 / 3, "tied_share": 0.0}


def test_a_very_long_model_name_is_clipped_in_figures(tmp_path):
    """A 400-character name made constrained layout run for minutes (the page never came)."""
    pytest.importorskip("matplotlib")
    import json
    import shutil

    from maeb.analysis import figures
    from maeb.analysis.leaderboard import load_board

    mfcc = ROOT / "results" / "maeb-lite" / "maeb__mfcc-stats" / "1"
    name = "long/" + "x" * 400
    folder = tmp_path / "long" / "1"
    folder.mkdir(parents=True)
    meta = json.loads((mfcc / "model_meta.json").read_text())
    (folder / "model_meta.json").write_text(json.dumps({**meta, "name": name}))
    for f in sorted(mfcc.glob("Lite*.json"))[:2]:
        shutil.copy(f, folder / f.name)
    board, _ = load_board([tmp_path], None, {})
    fig = figures.task_types(board)
    labels = [t.get_text() for ax in fig.figure.axes for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all(len(t) <= 60 for t in labels), [len(t) for t in labels]
    assert figures._name(name).startswith("long/xxx") and figures._name("a/b") == "a/b"
