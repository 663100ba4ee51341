"""CLAP score (maeb.audiogen.clapscore) and Audiobox Aesthetics (maeb.audiogen.aesthetics)."""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from maeb.audiogen.aesthetics import INSTALL_HINT, AestheticsScores
from maeb.audiogen.clapscore import ClapScore
from maeb.audiogen.metric import GeneratedItem, Metric, MetricUnavailable
from maeb.audiogen.request import SynthesisRequest
from maeb.core.errors import SpecError
from maeb.encoders import tiny


def _int16_exact_tone(freq: float, rate: int, seconds: float = 1.0) -> np.ndarray:
    # already on the 16-bit grid, so the scorer's rounding leaves it unchanged
    t = np.arange(int(rate * seconds)) / rate
    return (np.round(0.3 * np.sin(2 * np.pi * freq * t) * 32767.0) / 32767.0).astype(np.float32)


def _item(key, caption, audio, rate):
    return GeneratedItem(SynthesisRequest(key=key, caption=caption, duration=len(audio) / rate), audio, rate)


@pytest.fixture(scope="module")
def tiny_clap(tmp_path_factory):
    return tiny.clap(tmp_path_factory.mktemp("clap"))["path"]


def test_clap_score_matches_an_independent_computation(tiny_clap):
    import torch
    from transformers import ClapModel, ClapProcessor

    items = [
        _item("a", "a dog in the rain", _int16_exact_tone(440.0, 48000), 48000),
        _item("b", "low hum", _int16_exact_tone(110.0, 48000, 1.5), 48000),
        _item("c", "high tone", _int16_exact_tone(2000.0, 16000), 16000),  # resampled to 48 kHz
    ]
    scorer = ClapScore(("clap",), {"path": tiny_clap, "batch_size": 2}, "cpu", None)
    assert isinstance(scorer, Metric)
    scorer.update(items)
    result = scorer.result()
    assert set(scorer.per_clip) == {"a", "b", "c"}
    values = [v["clap"] for v in scorer.per_clip.values()]
    assert all(-1.0 <= v <= 1.0 for v in values)
    assert result["clap"] == pytest.approx(np.mean(values))
    assert len(set(np.round(values, 6))) == 3  # not a constant

    model, processor = ClapModel.from_pretrained(tiny_clap).eval(), ClapProcessor.from_pretrained(tiny_clap)
    with torch.inference_mode():
        for item in items[:2]:
            feats = processor.feature_extractor(item.audio, sampling_rate=48000, return_tensors="pt")
            audio = model.get_audio_features(**feats)
            tokens = processor.tokenizer([item.request.caption], return_tensors="pt")
            text = model.get_text_features(**tokens)
            audio, text = getattr(audio, "pooler_output", audio), getattr(text, "pooler_output", text)
            expected = torch.nn.functional.cosine_similarity(audio, text).item()
            assert scorer.per_clip[item.request.key]["clap"] == pytest.approx(expected, abs=1e-5)


def test_clap_batching_does_not_change_scores(tiny_clap):
    items = [_item(k, f"tone {k}", _int16_exact_tone(f, 48000), 48000) for k, f in (("x", 300.0), ("y", 900.0), ("z", 1500.0))]
    one = ClapScore(("clap",), {"path": tiny_clap, "batch_size": 1}, "cpu", None)
    all_ = ClapScore(("clap",), {"path": tiny_clap, "batch_size": 3}, "cpu", None)
    one.update(items)
    all_.update(items)
    for key in "xyz":
        assert one.per_clip[key]["clap"] == pytest.approx(all_.per_clip[key]["clap"], abs=1e-5)


def test_clap_unavailable_without_a_model(tmp_path):
    with pytest.raises(MetricUnavailable, match="cannot load the CLAP model"):
        ClapScore(("clap",), {"path": str(tmp_path)}, "cpu", None)
    with pytest.raises(SpecError, match="pinned revision"):
        ClapScore(("clap",), {"model": "someone/uncatalogued-clap"}, "cpu", None)


def test_aesthetics_without_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "audiobox_aesthetics", None)  # importing it now fails
    with pytest.raises(MetricUnavailable) as raised:
        AestheticsScores(("pq", "ce"), {}, "cpu", None)
    assert str(raised.value) == "audiobox-aesthetics is not installed: pip install audiobox-aesthetics" == INSTALL_HINT


def test_aesthetics_reads_the_predictor_rows(monkeypatch):
    seen = []

    class FakePredictor:
        def forward(self, rows):
            seen.extend(rows)
            # scores that depend on the input, so a mix-up of clips would show
            return [
                json.dumps({"CE": r["sample_rate"] / 1000, "CU": 1.0, "PC": 2.0, "PQ": r["path"].shape[-1] / 1000}) for r in rows
            ]

    package, infer = types.ModuleType("audiobox_aesthetics"), types.ModuleType("audiobox_aesthetics.infer")
    infer.initialize_predictor = lambda ckpt=None: FakePredictor()
    package.infer = infer
    monkeypatch.setitem(sys.modules, "audiobox_aesthetics", package)
    monkeypatch.setitem(sys.modules, "audiobox_aesthetics.infer", infer)
    scorer = AestheticsScores(("pq", "ce"), {"batch_size": 2}, "cpu", None)
    scorer.update([_item("a", "x", np.zeros(2000, np.float32), 8000), _item("b", "y", np.zeros(4000, np.float32), 16000)])
    scorer.update([_item("c", "z", np.zeros(6000, np.float32), 24000)])
    assert [tuple(r["path"].shape) for r in seen] == [(1, 2000), (1, 4000), (1, 6000)]
    assert scorer.per_clip["b"] == {"pq": 4.0, "pc": 2.0, "ce": 16.0, "cu": 1.0}
    assert scorer.result() == {"pq": pytest.approx(4.0), "ce": pytest.approx(16.0)}
