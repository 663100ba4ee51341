"""MMAG-lite end to end through `python -m maeb run`: the three offline systems on a small build,
and the orderings that must hold (the oracle renders the reference itself, resynth the same script
with other voices and instruments, noise nothing of it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from maeb.cli.commands import main

SIZES = {"main": 4, "voice_cloning": 3, "timestamp": 3}
SYSTEMS = ("mmag-oracle", "mmag-resynth", "mmag-noise")

pytestmark = [
    pytest.mark.slow,  # the module's runs take about 80 s to set up
    pytest.mark.heavy,
    pytest.mark.skipif(
        not all(shutil.which(t) for t in ("espeak-ng", "flite", "fluidsynth")), reason="needs Debian's synthesizers (make debian)"
    ),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    pytest.importorskip("ctranslate2")
    pytest.importorskip("resemblyzer")
    from maeb.benchmarks.mmag_lite.build import build

    root = tmp_path_factory.mktemp("mmag-lite-run")
    build(root / "lite", sizes=SIZES)
    mp = pytest.MonkeyPatch()
    mp.setenv("MMAG_LITE_DIR", str(root / "lite"))
    try:
        for system in SYSTEMS:
            args = ["run", "--model", system, "--benchmark", "MMAG-lite", "--output-dir", str(root / "out")]
            assert main([*args, "--cache-dir", str(root / "cache"), "--quiet"]) == 0
    finally:
        mp.undo()
    out = {}
    for system in SYSTEMS:
        path = next((root / "out").glob(f"maeb__mmag-lite-{system.split('-')[1]}/*/MMAG-lite.json"))
        out[system] = json.loads(path.read_text())
    return root, out


def _subsets(result: dict) -> dict:
    return {e["hf_subset"]: e for e in result["scores"]["all"]}


def test_orderings_hold(runs):
    _, results = runs
    oracle, resynth, noise = (_subsets(results[s]) for s in SYSTEMS)
    for subset in SIZES:
        o, r, n = oracle[subset], resynth[subset], noise[subset]
        # the oracle's clips are the references (to the PCM16 rounding of the stored references)
        assert o["fd"] < 1e-4 and o["fd"] < r["fd"] < n["fd"], subset
        assert o["kl"] <= r["kl"] < n["kl"], subset
        assert o["wer"] < n["wer"] and r["wer"] < n["wer"] and n["wer"] > 0.8, subset
    # WER is the ASR's error on what it hears: the oracle's is that of the reference recordings
    # themselves, which another voice may beat (resynth's espeak voices are easier for Whisper
    # tiny.en than some flite voices), so only noise is bound to be worst
    assert all(e["main_score"] == e["wer"] for e in oracle.values())
    # perfectly timed audio scores F1 = 1; the resynth keeps the timing; noise has no speech or events
    assert oracle["timestamp"]["speech_f1"] == 1.0 and oracle["timestamp"]["sound_f1"] == 1.0
    assert resynth["timestamp"]["speech_f1"] >= 0.75 and noise["timestamp"]["speech_f1"] == 0.0
    # another voice is farther from the prompt than the speaker's own voice; noise farther still
    assert oracle["voice_cloning"]["spk_sim"] > resynth["voice_cloning"]["spk_sim"] > noise["voice_cloning"]["spk_sim"]


def test_oracle_speaker_similarity_is_the_references(runs):
    """SPK-SIM of the oracle equals SPK-SIM between each reference recording and its prompt,
    computed here independently with resemblyzer."""
    import csv

    import soundfile as sf
    from resemblyzer import VoiceEncoder, preprocess_wav

    root, results = runs
    folder = root / "lite" / "voice_cloning"
    encoder = VoiceEncoder("cpu", verbose=False)
    sims = []
    with open(folder / "metadata.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            a = encoder.embed_utterance(preprocess_wav(sf.read(folder / row["file_name"], dtype="float32")[0], 16000))
            b = encoder.embed_utterance(preprocess_wav(sf.read(folder / row["voice_prompt"], dtype="float32")[0], 16000))
            sims.append(float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))))
    assert _subsets(results["mmag-oracle"])["voice_cloning"]["spk_sim"] == pytest.approx(np.mean(sims), abs=1e-4)


def test_results_name_every_scorer_and_what_is_missing(runs):
    _, results = runs
    info = results["mmag-oracle"]["maeb"]["evaluation"]["all"]["main"]
    assert info["scorers"]["wer"]["model"] == "whisper-tiny.en" and info["scorers"]["wer"]["stand_in"] is True
    assert info["scorers"]["cnn14"]["checkpoint"] == "random"
    assert info["missing_metrics"] == {} and "clap" not in _subsets(results["mmag-oracle"])["main"]
    assert results["mmag-oracle"]["task_name"] == "MMAG-lite" and results["mmag-noise"]["maeb"]["complete"] is True


def test_a_rerun_generates_nothing_and_the_board_ranks_by_lower_wer(runs, capsys):
    root, _ = runs
    mp = pytest.MonkeyPatch()
    mp.setenv("MMAG_LITE_DIR", str(root / "lite"))
    try:
        args = ["run", "--model", "mmag-oracle", "--benchmark", "MMAG-lite", "--output-dir", str(root / "out")]
        assert main([*args, "--cache-dir", str(root / "cache")]) == 0
        assert "0 tasks evaluated; 1 already done" in capsys.readouterr().err
        assert main(["leaderboard", "--results", str(root / "out"), "--benchmark", "MMAG-lite"]) == 0
    finally:
        mp.undo()
    lines = [line for line in capsys.readouterr().out.splitlines() if "mmag-lite-" in line]
    assert len(lines) == 3 and "noise" in lines[-1]  # lower WER ranks higher: noise, the worst, is last


def test_generated_clips_sit_beside_the_results(runs):
    root, _ = runs
    files = list((root / "out").glob("maeb__mmag-lite-oracle/*/generated/MMAG-lite/*/*/all/*.wav"))
    assert len(files) == sum(SIZES.values())
    assert {Path(f).parent.parent.name for f in files} == set(SIZES)
