"""`lite --check` on broken vectors files: each is a failed encoder or evaluator line naming the
model and the file, with what to do (the reference: restore or regenerate; a run: rerun), never a
traceback, a pickle message or vectors compared after a silent conversion (text, complex, ints)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from maeb.benchmarks.lite import vectors as vf
from maeb.benchmarks.lite.verdict import check

from .test_lite_bands import MODEL, _copy, _moved_scores


def _arrays(path):
    v = vf.read(path)
    return {"keys": np.array(v.keys), "vectors": v.matrix, "names": np.array(v.names), "meta": np.array(json.dumps(v.meta))}


def _rewrite(path, **change):
    arrays = _arrays(path)
    for key, value in change.items():
        arrays[key] = value(arrays) if callable(value) else value
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def _meta(change):
    return lambda a: np.array(json.dumps(change(json.loads(str(a["meta"])))))


CASES = {
    "garbage": ("reference", lambda p: p.write_bytes(b"\x00garbage" * 10), "not a numpy .npz archive"),
    "text vectors": ("run", lambda p: _rewrite(p, vectors=lambda a: a["vectors"].astype(str)), "not floating point"),
    "complex vectors": ("run", lambda p: _rewrite(p, vectors=lambda a: a["vectors"] * (1 + 1j)), "complex64, not floating"),
    "int vectors": ("run", lambda p: _rewrite(p, vectors=lambda a: (a["vectors"] * 1e3).astype(np.int64)), "int64"),
    "meta a list": ("reference", lambda p: _rewrite(p, meta=np.array("[1, 2]")), "meta is a JSON list"),
    "family a number": ("reference", lambda p: _rewrite(p, meta=_meta(lambda m: {**m, "family": 7})), "family is 7"),
    "names short": ("run", lambda p: _rewrite(p, names=lambda a: a["names"][:-1]), "787 names for 788 keys"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_vectors_file_fails_the_encoder_stage_in_one_line(tmp_path, case):
    side, damage, expected = CASES[case]
    reference, run = _copy(tmp_path, "reference"), _copy(tmp_path, "run")
    damage(vf.file_of(reference if side == "reference" else run, MODEL))
    verdict = check(reference, run, tmp_path, models=[MODEL], evaluate=_moved_scores(0.0))
    assert not verdict.passed
    (line,) = verdict.failures["encoders"]
    assert line.startswith(f"{MODEL}: vectors file ") and expected in line and "\n" not in line
    assert ("rerun `maeb lite`" in line) == (side == "run")


def test_evaluator_bands_that_are_not_a_record_fail_the_evaluator_stage(tmp_path):
    reference, run = _copy(tmp_path, "reference"), _copy(tmp_path, "run")
    _rewrite(vf.file_of(reference, MODEL), meta=_meta(lambda m: {**m, "evaluators": [1]}))
    verdict = check(reference, run, tmp_path, models=[MODEL], evaluate=_moved_scores(0.0))
    assert not verdict.passed and not verdict.failures["encoders"]
    (line,) = verdict.failures["evaluators"]
    assert MODEL in line and "evaluator bands are a list" in line


def test_float64_vectors_are_read_as_float32(tmp_path):
    reference, run = _copy(tmp_path, "reference"), _copy(tmp_path, "run")
    _rewrite(vf.file_of(run, MODEL), vectors=lambda a: a["vectors"].astype(np.float64))
    assert check(reference, run, tmp_path, models=[MODEL], evaluate=_moved_scores(0.0)).passed
