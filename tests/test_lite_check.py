"""`lite --check` against a reference with stability bands: a cell passes within its band and says
so, fails outside it naming the cell and both numeric environments, and a run of some models or
tasks checks only their cells. Then the staged check (maeb.benchmarks.lite.verdict), run under two
OpenBLAS kernels on a few MAEB-lite cells, passes against the committed reference, and fails at the
evaluator stage on a tampered one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maeb.benchmarks.lite.check import compare, report
from maeb.benchmarks.lite.runner import reference_dir


def result(
    task: str, accuracy: float, band: float | None = None, arch: str = "SkylakeX", vectors: str = "v1", quantum=0.0
) -> dict:
    entry = {"accuracy": accuracy, "f1": accuracy / 2, "main_score": accuracy, "hf_subset": "default", "languages": ["eng-Latn"]}
    entry["scores_per_experiment"] = [{"accuracy": accuracy + 0.05}, {"accuracy": accuracy - 0.05}]
    maeb = {
        "fingerprints": {"inputs": "i", "vectors": vectors, "vector_sum": 1.0},
        "numeric_env": {
            "cpu": "Some CPU",
            "blas": [{"api": "blas", "library": "openblas", "version": "0.3", "architecture": arch, "threads": 2}],
        },
    }
    if band is not None:
        metrics = {"test[0].accuracy": band, "test[0].main_score": band, "test[0].f1": band / 2}
        maeb["stability"] = {
            "method": "replay",
            "replays": 4,
            "eps": "1e-07",
            "band": band,
            "quantum": quantum,
            "metrics": metrics,
        }
    else:  # replays that moved nothing: exact by measurement
        maeb["stability"] = {"method": "replay", "replays": 8, "eps": {"audio": "2e-06"}, "band": 0.0, "exact": True}
    return {"task_name": task, "scores": {"test": [entry]}, "maeb": maeb}


def write(root: Path, model: str, data: dict) -> None:
    folder = root / model.replace("/", "__") / "1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{data['task_name']}.json").write_text(json.dumps(data))


def test_a_cell_passes_within_its_band_and_fails_outside(tmp_path):
    ref, run = tmp_path / "ref", tmp_path / "run"
    write(ref, "m/a", result("Probe", 0.90, band=0.02))
    write(ref, "m/a", result("Exact", 0.50))
    write(ref, "m/b", result("Probe", 0.80, band=0.02))
    write(run, "m/a", result("Probe", 0.885, band=0.0, arch="Haswell"))  # moved 0.015 <= 0.02; per-experiment lists moved too
    write(run, "m/a", result("Exact", 0.50, arch="Haswell"))
    write(run, "m/b", result("Probe", 0.75, arch="Haswell", vectors="v2"))  # moved 0.05 > 0.02
    cells = {(c.model, c.task): c for c in compare(ref, run)}
    assert cells[("m/a", "Probe")].agrees and cells[("m/a", "Probe")].within_band
    assert cells[("m/a", "Exact")].agrees and not cells[("m/a", "Exact")].within_band
    bad = cells[("m/b", "Probe")]
    assert not bad.agrees
    text = report(list(cells.values()), 1e-6)
    assert "2 of 3 cells agree" in text and "1 within their stability band" in text
    assert "m/a / Probe: main 0.9000 -> 0.8850, within its band of ±0.0300 (1.5 x the band of 4 replays" in text
    line = next(x for x in text.splitlines() if x.startswith("  m/b / Probe"))
    assert "outside its band of ±0.0300" in line and "vectors differ" in line
    assert "reference openblas 0.3 SkylakeX x2; Some CPU; run openblas 0.3 Haswell x2; Some CPU" in line


def test_the_band_is_allowed_with_its_margin_and_no_more(tmp_path):
    ref, run = tmp_path / "ref", tmp_path / "run"
    write(ref, "m/a", result("Inside", 0.50, band=0.01))
    write(ref, "m/a", result("Outside", 0.50, band=0.01))
    write(run, "m/a", result("Inside", 0.514))  # 1.4 x the band
    write(run, "m/a", result("Outside", 0.516))  # 1.6 x the band
    cells = {c.task: c for c in compare(ref, run)}
    assert cells["Inside"].agrees and not cells["Outside"].agrees


def test_a_broken_or_unmeasured_reference_fails_in_one_line_naming_the_cell(tmp_path):
    ref, run = tmp_path / "ref", tmp_path / "run"
    write(ref, "m/a", result("Broken", 0.5))
    next(ref.glob("m__a/1/Broken.json")).write_text("{not json")
    unmeasured = result("Unmeasured", 0.5)
    unmeasured["maeb"]["stability"] = {"method": "not measured", "replays": 1, "why": "1 replay sample(s)"}
    write(ref, "m/a", unmeasured)
    write(run, "m/a", result("Broken", 0.5))
    write(run, "m/a", result("Unmeasured", 0.6))
    cells = {c.task: c for c in compare(ref, run)}
    assert (
        not cells["Broken"].agrees
        and cells["Broken"].cause.startswith("broken reference: ")
        and "Broken.json" in cells["Broken"].cause
    )
    assert not cells["Unmeasured"].agrees and "'not measured'" in cells["Unmeasured"].cause
    lines = report(list(cells.values()), 1e-6).splitlines()
    assert [x.split(":")[0].strip() for x in lines[1:]] == ["m/a / Broken", "m/a / Unmeasured"]


def test_a_probe_cell_whose_replays_never_moved_may_still_move_by_one_clip(tmp_path):
    ref, run = tmp_path / "ref", tmp_path / "run"
    write(ref, "m/a", result("One", 0.90, band=0.0, quantum=0.0125))
    write(ref, "m/a", result("Two", 0.90, band=0.0, quantum=0.0125))
    write(run, "m/a", result("One", 0.9125))
    write(run, "m/a", result("Two", 0.925))
    cells = {c.task: c for c in compare(ref, run)}
    assert cells["One"].agrees and cells["One"].within_band and cells["One"].source == "one item's share"
    assert not cells["Two"].agrees and "outside its band of ±0.0125 (one item's share)" in cells["Two"].cause


def test_an_exact_cell_compares_every_number(tmp_path):
    ref, run = tmp_path / "ref", tmp_path / "run"
    write(ref, "m/a", result("Exact", 0.50))
    moved = result("Exact", 0.50)
    moved["scores"]["test"][0]["scores_per_experiment"][0]["accuracy"] += 0.01
    write(run, "m/a", moved)
    (cell,) = compare(ref, run)
    assert not cell.agrees and "scores_per_experiment[0].accuracy" in cell.metric
    assert "same vectors, other scores" in cell.cause and "same numeric environment as the reference" in cell.cause


def test_an_exact_cell_with_moved_vectors_is_judged_by_its_main_score(tmp_path):
    """Seen under OPENBLAS_CORETYPE=Sandybridge: retrieval's nAUC metrics moved by 0.39 while the
    main score stayed equal; with the same vectors, the same move is an evaluator change."""
    ref, run = tmp_path / "ref", tmp_path / "run"
    write(ref, "m/a", result("Exact", 0.50))
    write(ref, "m/a", result("MainMoved", 0.50))
    write(ref, "m/a", result("SameVectors", 0.50))
    secondary = result("Exact", 0.50, vectors="v2")
    secondary["scores"]["test"][0]["f1"] += 0.3
    write(run, "m/a", secondary)
    write(run, "m/a", result("MainMoved", 0.50 + 1e-4, vectors="v2"))
    same = result("SameVectors", 0.50)
    same["scores"]["test"][0]["f1"] += 0.3
    write(run, "m/a", same)
    cells = {c.task: c for c in compare(ref, run)}
    assert cells["Exact"].agrees and cells["Exact"].metric == "test[0].f1"
    assert not cells["MainMoved"].agrees and "vectors differ" in cells["MainMoved"].cause
    assert not cells["SameVectors"].agrees and "same vectors, other scores" in cells["SameVectors"].cause
    text = report(list(cells.values()), 1e-6)
    assert "1 equal in the main score, other metrics moved with the vectors" in text
    assert "m/a / Exact: main 0.5000 -> 0.5000, vectors differ (numeric path); largest move 0.3 in test[0].f1" in text


def test_a_run_of_some_models_and_tasks_checks_only_their_cells(tmp_path):
    ref, run = tmp_path / "ref", tmp_path / "run"
    for model in ("m/a", "m/b"):
        for task in ("T1", "T2"):
            write(ref, model, result(task, 0.5))
    write(run, "m/a", result("T1", 0.5))
    assert sum(not c.agrees for c in compare(ref, run)) == 3  # everything else is missing
    cells = compare(ref, run, models=["m/a"], tasks=["T1"])
    assert [(c.model, c.task, c.agrees) for c in cells] == [("m/a", "T1", True)]
    cells = compare(ref, run, models=["m/a"])
    assert [(c.task, c.cause) for c in cells if not c.agrees] == [("T2", "missing in the run")]


# -- the check on real MAEB-lite cells under two OpenBLAS kernels ------------------------------

MODEL = "maeb/mfcc-stats"
TASKS = ["LiteBirdSpecies", "LiteInstrumentFamily", "LiteSpeakerPairs"]  # two that move with the kernel, one exact


# AVX2 and AVX kernels: x86 CPUs of the last decade run both; SkylakeX (AVX-512) dies with SIGILL on
# one without AVX-512 (an AMD EPYC), so it is not among them
KERNELS = ("Haswell", "Sandybridge")


def _kernels() -> tuple[list[str], list[str]]:
    """The OpenBLAS core types of KERNELS this CPU can execute (its /proc/cpuinfo flags) and that
    numpy takes (threadpoolctl reports them), and what was left out, with why."""
    from maeb.run.numeric_env import imitable

    found, left = [], []
    for name in KERNELS:
        _, out = imitable({"OPENBLAS_CORETYPE": name})
        if out:
            left += out
            continue
        code = "import numpy, threadpoolctl; print(threadpoolctl.threadpool_info()[0].get('architecture'))"
        done = subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "OPENBLAS_CORETYPE": name}, capture_output=True, text=True
        )
        arch = done.stdout.strip()
        if done.returncode == 0 and arch == name:
            found.append(arch)
        else:
            left.append(f"OPENBLAS_CORETYPE={name} (numpy's OpenBLAS took {arch or 'nothing'}, rc {done.returncode})")
    return found, left


def test_the_kernels_tried_are_only_those_the_cpu_runs():
    from maeb.run.numeric_env import imitable

    no_avx512 = {"sse4_2", "avx", "avx2", "fma", "pni"}
    keep, left = imitable({"OPENBLAS_CORETYPE": "SkylakeX", "ATEN_CPU_CAPABILITY": "avx2"}, no_avx512)
    assert keep == {"ATEN_CPU_CAPABILITY": "avx2"} and left[0].startswith("OPENBLAS_CORETYPE=SkylakeX (needs avx512")
    assert all(imitable({"OPENBLAS_CORETYPE": k}, no_avx512)[0] for k in KERNELS)


def _check(lite_data, tmp_path, out: Path, coretype: str | None, reference: Path | None = None):
    # one BLAS thread: small probe fits crawl with two on a busy machine (the reference's band covers
    # one thread too: scripts/lite_reference.py)
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "OPENBLAS_NUM_THREADS": "1"}
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    cmd = [sys.executable, "-m", "maeb", "lite", "--dir", str(lite_data), "--cache-dir", str(tmp_path / "cache")]
    cmd += ["--models", MODEL, "--tasks", *TASKS, "--stability-replays", "0", "--output-dir", str(out), "--check", "--quiet"]
    cmd += ["--reference", str(reference)] if reference else []
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def test_the_check_passes_under_two_blas_kernels_and_fails_on_a_moved_cell(lite_data, tmp_path):
    kernels, left = _kernels()
    if len(kernels) < 2:
        pytest.skip(f"fewer than two OpenBLAS core types run here ({kernels}); left out: {'; '.join(left)}")
    outputs = []
    for kernel in kernels:  # the evaluators (and the vectors of the first) under each kernel
        out = tmp_path / f"run-{kernel}"
        done = _check(lite_data, tmp_path, out, kernel)
        assert done.returncode == 0, f"{kernel}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        assert "MAEB-lite check: passed" in done.stdout
        assert f"stage 3 (evaluators): {len(TASKS)} of {len(TASKS)} cells" in done.stdout
        recorded = json.loads(next(out.glob("*/*/LiteBirdSpecies.json")).read_text())["maeb"]["numeric_env"]
        assert {lib["architecture"] for lib in recorded["blas"] if lib["api"] == "blas"} == {kernel}
        outputs.append(out)

    tampered = tmp_path / "tampered"
    shutil.copytree(reference_dir(), tampered)
    path = next(tampered.glob("maeb__mfcc-stats/*/LiteBirdSpecies.json"))
    data = json.loads(path.read_text())
    entry = data["scores"]["all"][0]
    band = data["maeb"]["stability"]["band"]
    entry["accuracy"] = entry["main_score"] = entry["main_score"] - max(3 * band, 0.05)
    path.write_text(json.dumps(data))
    done = _check(lite_data, tmp_path, outputs[-1], kernels[-1], reference=tampered)  # results present: only the check runs
    assert done.returncode == 1
    # the reference's own vectors do not give the reference's (tampered) score: the evaluator stage
    line = next(x for x in done.stdout.splitlines() if "LiteBirdSpecies" in x and x.strip().startswith("[evaluators]"))
    assert "maeb/mfcc-stats / LiteBirdSpecies: the reference's vectors score" in line
