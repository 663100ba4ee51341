"""`lite --check` in stages, on the committed reference's own vectors and no other CPU: vectors moved
by rounding (relative 1e-6, and the size measured between set-ups) pass; moved by 1e-2 or pooled
otherwise they fail at the encoder stage; an evaluator changed (max_iter, the seed) fails at the
evaluator stage; a fragile probe cell that moves by three items with vectors within tolerance
passes and says why. Plus the cascade's jumps, named and counted against the family's allowance."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from maeb.benchmarks.lite import vectors as vf
from maeb.benchmarks.lite.check import stability_of
from maeb.benchmarks.lite.runner import reference_dir
from maeb.benchmarks.lite.verdict import check, report
from maeb.run.stability import EPS

MODEL = "maeb/mfcc-stats"
PROBES = ["LiteBirdSpecies", "LiteInstrumentFamily", "LiteSpokenDigits"]
# every probe task: a changed evaluator must show in the cells that are not fragile
ALL_PROBES = PROBES + ["LiteLanguageID", "LiteMusicKey", "LiteSoundEvents", "LiteSpeakingRate"]
OTHERS = ["LiteSpeakerPairs", "LiteSameWordA2A"]


def _cells(model: str = MODEL) -> dict[str, Path]:
    folder = reference_dir() / model.replace("/", "__", 1)
    return {p.stem: p for p in folder.glob("*/*.json") if p.name != "model_meta.json"}


def _run_folder(tmp_path: Path, tasks: list[str], transform=None, model: str = MODEL) -> Path:
    """A run made of the reference's result files of `tasks`, with the reference's vectors
    passed through `transform` (a function of the matrix)."""
    run = tmp_path / "run"
    shutil.rmtree(run, ignore_errors=True)
    for task, path in _cells(model).items():
        if task in tasks:
            target = run / path.relative_to(reference_dir())
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    ref = vf.read(vf.file_of(reference_dir(), model))
    matrix = ref.matrix if transform is None else transform(ref.matrix).astype(np.float32)
    vf.write(vf.file_of(run, model), dict(zip(ref.keys, matrix)), dict(zip(ref.keys, ref.names)), ref.meta)
    return run


def _noise(relative: float, seed: int = 0):
    return lambda x: x * (1 + relative * np.random.default_rng(seed).standard_normal(x.shape))


def _verdict(lite_data, run: Path, tasks: list[str], evaluate=None):
    return check(reference_dir(), run, lite_data, models=[MODEL], tasks=tasks, evaluate=evaluate)


def test_the_reference_holds_every_offline_models_vectors_and_evaluator_bands():
    from maeb.benchmarks.lite.runner import MODELS

    for model in MODELS:
        v = vf.read(vf.file_of(reference_dir(), model))
        assert v.matrix.dtype == np.float32 and len(v.keys) == len(set(v.keys)) > 700
        assert v.meta["model"] == model and v.meta["numeric_env"]["blas"]
        assert set(v.meta["evaluators"]) == set(_cells(model))  # one evaluator band per cell


@pytest.mark.parametrize("relative", [1e-6, EPS["audio"]])
def test_rounding_level_noise_in_the_vectors_passes(lite_data, tmp_path, relative):
    tasks = PROBES + OTHERS
    verdict = _verdict(lite_data, _run_folder(tmp_path, tasks, _noise(relative)), tasks)
    text = report(verdict, reference_dir(), tmp_path / "run")
    assert verdict.passed, text
    (encoder,) = verdict.encoders
    assert 0 < encoder.largest < vf.tolerance_of("mfcc").relative
    assert "MAEB-lite check: passed" in text


@pytest.mark.parametrize(
    "transform, what",
    [
        (_noise(1e-2), "largest relative difference"),
        # another pooling: L2-normalised vectors (every cosine still 1) and a rectified one
        (lambda x: x / np.linalg.norm(x, axis=1, keepdims=True), "largest relative difference"),
        (lambda x: np.maximum(x, 0), "largest relative difference"),
    ],
)
def test_vectors_moved_beyond_rounding_fail_at_the_encoder_stage(lite_data, tmp_path, transform, what):
    verdict = _verdict(lite_data, _run_folder(tmp_path, PROBES[:1], transform), PROBES[:1])
    assert not verdict.passed and verdict.failed_stage == "encoders"
    (line,) = verdict.failures["encoders"]
    assert line.startswith(f"{MODEL} (mfcc): {what}")
    text = report(verdict, reference_dir(), tmp_path / "run")
    assert "FAILED at the encoders stage" in text and "to report it:" in text and "vectors" in text


def _moved_evaluator(monkeypatch, lite_data, tmp_path, change: str):
    from maeb.benchmarks.lite import evaluators, specs
    from maeb.tasktypes import labels

    if change == "max_iter":
        original = labels.linear_probe
        monkeypatch.setattr(labels, "linear_probe", lambda p, probe="mteb": original({**p, "max_iter": 1000}, probe))
    else:
        originals = specs.lite_specs

        def reseeded(tasks=None):
            return [replace(spec, protocol={**spec.protocol, "seed": 7}) for spec in originals(tasks)]

        monkeypatch.setattr(specs, "lite_specs", reseeded)
    run = _run_folder(tmp_path, ALL_PROBES)
    return _verdict(lite_data, run, ALL_PROBES, evaluate=evaluators.score)


@pytest.mark.parametrize("change", ["max_iter", "seed"])
def test_an_evaluator_changed_fails_at_the_evaluator_stage(monkeypatch, lite_data, tmp_path, change):
    verdict = _moved_evaluator(monkeypatch, lite_data, tmp_path, change)
    assert verdict.failed_stage == "evaluators", report(verdict, reference_dir(), tmp_path / "run")
    assert not verdict.failures["encoders"] and not verdict.failures["inputs"]
    assert all(line.startswith(f"{MODEL} / Lite") for line in verdict.failures["evaluators"])
    assert "the reference's vectors score" in verdict.failures["evaluators"][0]


def _fragile_probe() -> tuple[str, str, dict]:
    """A fragile probe cell of the reference (a model and task whose score rounding moves by more
    than one item's share)."""
    from maeb.benchmarks.lite.runner import MODELS

    for model in [MODEL] + MODELS:
        for task, path in sorted(_cells(model).items()):
            data = json.loads(path.read_text())
            record = stability_of(data)
            if record.get("fragile") and data["maeb"]["task"]["type"] == "AudioClassification" and record.get("quantum"):
                return model, task, data
    pytest.fail("the reference holds no fragile probe cell")


def test_a_fragile_cell_moved_by_three_items_with_vectors_in_tolerance_passes_and_says_why(lite_data, tmp_path):
    model, task, data = _fragile_probe()
    run = _run_folder(tmp_path, [task], _noise(1e-6), model=model)
    path = next(run.glob(f"*/*/{task}.json"))
    moved = json.loads(path.read_text())
    step = 3 * stability_of(data)["quantum"]
    for entry in moved["scores"][next(iter(moved["scores"]))]:
        entry["main_score"] = entry[data["maeb"]["task"]["main_score"]] = entry["main_score"] + step
    path.write_text(json.dumps(moved))
    verdict = check(reference_dir(), run, lite_data, models=[model], tasks=[task])
    text = report(verdict, reference_dir(), run)
    assert verdict.passed, text
    # stage 4's line: on a CPU whose evaluator moves this cell, stage 3 names the same cell first
    stage4 = text.split("stage 4 (this machine's scores)", 1)[1]
    line = next(x for x in stage4.splitlines() if x.strip().startswith(f"{model} / {task}:"))
    assert "= 3.0 items" in line and "fragile" in line and "reported, not failed" in line


def test_a_cascades_jumps_are_named_and_counted_against_its_allowance():
    rng = np.random.default_rng(0)
    keys = [f"k{i}" for i in range(100)]
    names = {k: f"clip{i}.wav" for i, k in enumerate(keys)}
    a = rng.standard_normal((100, 8)).astype(np.float32)
    ref = vf.Vectors(keys, a, [names[k] for k in keys])
    b = a * (1 + 1e-6 * rng.standard_normal(a.shape)).astype(np.float32)
    b[[3, 5]] = rng.standard_normal((2, 8))  # two clips with another transcript
    verdict = vf.compare(ref, vf.Vectors(keys, b, [names[k] for k in keys]), "m", "transcript")
    assert verdict.jumps == ["clip3.wav", "clip5.wav"] and verdict.problem == ""  # 3% of 100 allowed
    b[10:20] = rng.standard_normal((10, 8))
    verdict = vf.compare(ref, vf.Vectors(keys, b, [names[k] for k in keys]), "m", "transcript")
    assert verdict.problem.startswith("12 clips changed discretely (over the allowance of 3") and "clip3.wav" in verdict.problem
    # the same jumps from a family without an allowance are beyond its tolerance
    assert "largest relative difference" in vf.compare(ref, vf.Vectors(keys, b, list(names.values())), "m", "mfcc").problem


def test_a_vectors_file_round_trips_without_pickle(tmp_path):
    keys = {"b": np.ones(3, np.float32), "a": np.arange(3, dtype=np.float32), "t:x": np.zeros(3, np.float32)}
    path = vf.write(tmp_path / "v.npz", keys, {"a": "x/a.wav"}, {"model": "m/x"})
    v = vf.read(path)
    assert v.keys == ["a", "b", "t:x"] and v.names == ["x/a.wav", "", ""] and v.meta["model"] == "m/x"
    assert np.array_equal(v.by_key()["a"], keys["a"])
    vf.update_meta(path, evaluators={"T": {"spread": 0.0}})
    assert vf.read(path).meta["evaluators"] == {"T": {"spread": 0.0}}
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(Exception, match="bad.npz cannot be read"):
        vf.read(tmp_path / "bad.npz")


def test_a_truncated_empty_or_duplicated_vectors_file_is_one_line(tmp_path):
    good = vf.write(tmp_path / "v.npz", {"a": np.ones(3, np.float32), "b": np.zeros(3, np.float32)}, {}, {"model": "m/x"})
    for name, data in (("truncated.npz", good.read_bytes()[:200]), ("empty.npz", b"")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(vf.MaebError, match=f"{name} cannot be read"):
            vf.read(tmp_path / name)
    with open(tmp_path / "twice.npz", "wb") as handle:
        np.savez(
            handle, keys=np.array(["a", "a"]), vectors=np.ones((2, 3), np.float32), names=np.array(["", ""]), meta=np.array("{}")
        )
    with pytest.raises(vf.MaebError, match="the key a appears more than once"):
        vf.read(tmp_path / "twice.npz")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_vectors_fail_the_encoder_stage_naming_the_clip(bad):
    keys = ["k0", "k1"]
    a = np.ones((2, 4), np.float32)
    b = a.copy()
    b[1, 2] = bad  # NaN would compare as no move at all
    verdict = vf.compare(vf.Vectors(keys, a, ["x.wav", "y.wav"]), vf.Vectors(keys, b, ["x.wav", "y.wav"]), "m", "mfcc")
    assert verdict.problem == "1 vectors hold NaN or inf (first: y.wav)"
    assert vf.compare(vf.Vectors(keys, b, ["x.wav", "y.wav"]), vf.Vectors(keys, a, ["", ""]), "m", "mfcc").problem
