"""Paired significance (maeb.analysis.paired) against scipy on known cases, the per-item files a
run writes with --per-item, and `maeb compare --models` on them."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

from maeb.analysis.paired import compare_items, paired_bootstrap, sign_flip_p


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def _pair(n=40, shift=0.05, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    return a, a - shift + 0.1 * rng.standard_normal(n)


def test_the_bootstrap_interval_is_scipys_paired_percentile_interval():
    a, b = _pair()
    low, high = paired_bootstrap(a - b, 20000, seed=0)
    ref = st.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        paired=True,
        method="percentile",
        n_resamples=20000,
        random_state=0,
        vectorized=True,
    ).confidence_interval
    assert low == pytest.approx(ref.low, abs=2e-3) and high == pytest.approx(ref.high, abs=2e-3)


@pytest.mark.parametrize("n,shift", [(8, 0.0), (10, 0.05), (12, 0.1)])
def test_the_exact_sign_flip_p_value_is_scipys_permutation_test(n, shift):
    a, b = _pair(n, shift, seed=n)
    p, exact = sign_flip_p(a - b, 10000, seed=0)
    ref = st.permutation_test((a - b,), _mean, permutation_type="samples", n_resamples=np.inf, vectorized=True)
    assert exact and p == pytest.approx(ref.pvalue, rel=1e-12)


def test_a_sampled_p_value_is_close_to_scipys():
    a, b = _pair(60, 0.02, seed=3)
    p, exact = sign_flip_p(a - b, 20000, seed=0)
    ref = st.permutation_test(
        (a - b,), _mean, permutation_type="samples", n_resamples=20000, random_state=0, vectorized=True
    ).pvalue
    assert not exact and 0.01 < ref < 0.5 and p == pytest.approx(ref, abs=0.02)


def test_items_pair_by_key_and_identical_models_do_not_differ():
    a = {f"k{i}": float(i % 2) for i in range(30)}
    same = compare_items(a, dict(a), draws=2000)
    assert same.difference == 0 and same.low == same.high == 0 and same.p_value == 1.0
    b = {**{k: 0.0 for k in a}, "only_b": 1.0}
    res = compare_items(a, b, draws=2000)
    assert res.items == 30 and res.difference == 0.5 and res.low > 0.2 and res.p_value < 0.01


def _run(tmp_path, model, task, *extra):
    from maeb.cli.commands import main

    args = ["run", "-m", model, "-t", str(task), "--output-dir", str(tmp_path / "res"), "--cache-dir", str(tmp_path / "cache")]
    return main([*args, "--quiet", *extra])


def test_per_item_files_and_compare_models(tone_folder, tmp_path, capsys):
    import json

    from maeb.cli.commands import main

    task = tmp_path / "Tones.toml"
    task.write_text(
        f'name = "Tones"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n'
    )
    assert _run(tmp_path, "maeb/mfcc-stats", task) == 0
    assert not list((tmp_path / "res").rglob("per_item.tsv"))  # opt-in
    assert _run(tmp_path, "maeb/mfcc-stats", task, "--per-item") == 0  # a done result without them runs again
    assert _run(tmp_path, "maeb/mock-spectral", task, "--per-item") == 0
    (path,) = (tmp_path / "res" / "maeb__mfcc-stats").rglob("per_item.tsv")
    assert path.parent.name == "Tones_predictions"
    result = json.loads((path.parent.parent / "Tones.json").read_text())
    capsys.readouterr()
    args = ["compare", "--results", str(tmp_path / "res"), "--models", "maeb/mfcc-stats", "maeb/mock-spectral"]
    assert main([*args, "--json", "--draws", "2000"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["task"] == "Tones" and row["split"] == "test" and row["metric"] == "accuracy"
    assert row["mean_a"] == pytest.approx(result["scores"]["test"][0]["accuracy"], abs=1e-9)
    assert row["low"] <= row["difference"] <= row["high"] and 0 < row["p_value"] <= 1
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("Tones [test] accuracy: ")
    assert main([*args[:-1], "maeb/nobody"]) == 2
    assert "model 'maeb/nobody': no folder under" in capsys.readouterr().err


def test_items_filed_under_one_clip_are_numbered(tmp_path):
    from maeb.analysis.paired import per_item_tsv, read_per_item
    from maeb.audio.pipeline import AudioRef

    clip, other = AudioRef("a.wav", data=b"one"), AudioRef("b.wav", data=b"two")
    path = tmp_path / "per_item.tsv"
    path.write_text(per_item_tsv("ndcg_at_10", [clip, other, clip], [1.0, 0.5, 0.25]))
    metric, values = read_per_item(path)
    assert metric == "ndcg_at_10" and values == {clip.key: 1.0, other.key: 0.5, f"{clip.key}#2": 0.25}
    path.write_text("key\tclip\tvalue\n")
    with pytest.raises(Exception, match="not a per-item file"):
        read_per_item(path)
