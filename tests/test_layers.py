"""Layer sweeps (--layers): each layer's vector is the hidden state transformers gives, pooled the
wrapper's way; one forward pass serves every layer; the last layer is a plain run's vector; each
layer is an experiment with its own cache and result file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from maeb.core.errors import ModelError, SpecError
from maeb.encoders import load_encoder, tiny
from maeb.encoders.hf import SelfSupervisedEncoder, WhisperEncoder
from maeb.run.layers import parse_layers
from maeb.run.options import RunOptions, check_options
from maeb.run.runner import run
from maeb.spec.taskspec import parse_spec

from .family_fixtures import clips, meta_for

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_whisper_layers_are_transformers_hidden_states_pooled_over_audio_frames(tmp_path):
    from transformers import WhisperFeatureExtractor, WhisperModel

    enc = load_encoder(meta_for("hf-whisper", **tiny.whisper(tmp_path / "m")))
    arrays = clips((0.5, 1.1, 1.7))
    layers = enc.embed_layers(arrays)
    assert enc.layer_count() == len(layers) == 2
    assert np.array_equal(layers[-1], enc.embed_audio(arrays))  # the last layer is the plain vector, bit for bit
    model = WhisperModel.from_pretrained(tmp_path / "m").encoder.eval()
    fe = WhisperFeatureExtractor.from_pretrained(tmp_path / "m")
    for i, a in enumerate(arrays):
        feats = fe(a, sampling_rate=16000, return_tensors="pt", padding="max_length")
        with torch.no_grad():
            states = model(feats.input_features, output_hidden_states=True).hidden_states
        frames = int(np.ceil(len(a) / 160)) // 2  # 10 ms log-mel frames, halved by the second convolution
        for layer, h in enumerate(states):
            assert np.allclose(layers[layer][i], h[0, :frames].mean(0).numpy(), atol=1e-5), (i, layer)
    assert not np.allclose(layers[0], layers[1], atol=1e-3)


@pytest.mark.parametrize("norm", ["group", "layer"])
def test_wav2vec2_layers_are_transformers_hidden_states(tmp_path, norm):
    from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2Model

    enc = load_encoder(meta_for("hf-ssl", **tiny.ssl(tmp_path / "m", "wav2vec2", norm)))
    arrays = clips((0.4, 0.9))
    model = Wav2Vec2Model.from_pretrained(tmp_path / "m").eval()
    fe = Wav2Vec2FeatureExtractor.from_pretrained(tmp_path / "m")
    for a in arrays:  # one clip per pass: nothing padded, every frame holds audio
        layers = enc.embed_layers([a])
        assert np.array_equal(layers[-1], enc.embed_audio([a]))
        with torch.no_grad():
            out = model(fe(a, sampling_rate=16000, return_tensors="pt").input_values, output_hidden_states=True)
        assert len(layers) == len(out.hidden_states) == enc.layer_count()
        for layer, h in enumerate(out.hidden_states[:-1]):
            assert np.allclose(layers[layer][0], h[0].mean(0).numpy(), atol=1e-5), layer
        # the last index is the wrapper's output (last_hidden_state): with a stable layer norm,
        # transformers records hidden_states[-1] before the encoder's final norm
        assert np.allclose(layers[-1][0], out.last_hidden_state[0].mean(0).numpy(), atol=1e-5)


def test_ast_layers_are_normed_hidden_states_pooled_as_the_pooler(tmp_path):
    from transformers import ASTFeatureExtractor, ASTModel

    enc = load_encoder(meta_for("hf-ast", **tiny.ast(tmp_path / "m")))
    arrays = clips((0.5, 1.2))
    layers = enc.embed_layers(arrays)
    assert len(layers) == enc.layer_count() and np.array_equal(layers[-1], enc.embed_audio(arrays))
    model = ASTModel.from_pretrained(tmp_path / "m").eval()
    feats = ASTFeatureExtractor.from_pretrained(tmp_path / "m")(arrays[1], sampling_rate=16000, return_tensors="pt")
    with torch.no_grad():
        states = model(**feats, output_hidden_states=True).hidden_states
        for layer, h in enumerate(states):  # the final layer norm, then the mean of the two class tokens
            normed = model.layernorm(h)
            assert np.allclose(layers[layer][1], ((normed[0, 0] + normed[0, 1]) / 2).numpy(), atol=1e-5), layer


def test_clap_layers_are_the_audio_towers_stages_and_its_projection_last(tmp_path):
    from transformers import ClapModel

    from maeb.encoders.hf import clap_features

    enc = load_encoder(meta_for("hf-clap", modalities=("audio", "text"), **tiny.clap(tmp_path / "m")))
    arrays = [np.resize(a, 48000) for a in clips((0.5, 1.0))]  # at CLAP's 48 kHz
    layers = enc.embed_layers(arrays)
    assert len(layers) == enc.layer_count() and np.array_equal(layers[-1], enc.embed_audio(arrays))
    model = ClapModel.from_pretrained(tmp_path / "m").eval()
    parts = clap_features(enc.processor.feature_extractor, arrays, 48000, enc.fusion)
    inputs = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
    with torch.no_grad():
        states = model.audio_model(**inputs, output_hidden_states=True).hidden_states
    for layer, h in enumerate(states[:-1]):  # each stage's mean over its grid, unit length
        mean = h.flatten(2).mean(2)
        assert np.allclose(layers[layer], (mean / mean.norm(dim=-1, keepdim=True)).numpy(), atol=1e-5), layer


def test_parse_layers():
    assert parse_layers("all", 3) == [0, 1, 2] and parse_layers("2,0,-1", 3) == [0, 2]
    assert parse_layers("0,4") == [0, 4] and parse_layers([4, 0], 5) == [0, 4]  # syntax only without a count
    with pytest.raises(SpecError, match="hidden states 0..2.*5 is not one"):
        parse_layers("0,5", 3, "m")
    with pytest.raises(SpecError, match="comma-separated"):
        parse_layers("first", 3)
    with pytest.raises(SpecError, match="--layers takes all or comma-separated"):
        check_options(RunOptions(layers="1;2", cache_dir="c"))  # refused before anything loads


def _vectors(cache_dir: Path, name: str) -> dict[str, np.ndarray]:
    (path,) = Path(cache_dir).rglob(name)
    with sqlite3.connect(path) as db:
        return {k: np.frombuffer(v, dtype=np.float32) for k, v in db.execute("SELECT key, vec FROM emb")}


@pytest.mark.slow
@pytest.mark.parametrize("family", [pytest.param("hf-whisper", marks=pytest.mark.heavy), "hf-ssl"])
def test_sweep_runs_one_forward_pass_per_batch_and_files_each_layer_as_an_experiment(tmp_path, tone_folder, family, monkeypatch):
    """The whisper case is heavy (31 s measured): the hf-ssl case runs the same sweep in make test
    (23 s) and test_whisper_layers_are_transformers_hidden_states_pooled_over_audio_frames keeps
    Whisper's layers there."""
    build = tiny.whisper if family == "hf-whisper" else tiny.ssl
    meta = meta_for(family, **build(tmp_path / "m"))
    cls = WhisperEncoder if family == "hf-whisper" else SelfSupervisedEncoder
    calls = {"layers": 0, "audio": 0}
    real_layers, real_audio = cls.embed_layers, cls.embed_audio

    def counted_layers(self, batch):
        calls["layers"] += 1
        return real_layers(self, batch)

    def counted_audio(self, batch):
        calls["audio"] += 1
        return real_audio(self, batch)

    monkeypatch.setattr(cls, "embed_layers", counted_layers)
    monkeypatch.setattr(cls, "embed_audio", counted_audio)
    spec = parse_spec(
        {
            "name": "Tclu",
            "type": "clustering",
            "data": {"source": "audiofolder", "path": str(tone_folder), "label_column": "label", "eval_splits": ["all"]},
        },
        "test spec",
    )
    out, cache = tmp_path / "res", tmp_path / "cache"
    options = dict(output_dir=out, cache_dir=cache, show_progress=False, batch_size=8)
    summary = run(meta, [spec], RunOptions(layers="all", **options))
    assert summary.done == ["Tclu [hidden_layer 0]", "Tclu [hidden_layer 1]"] and not summary.failed
    assert calls["audio"] == 0 and calls["layers"] > 0
    passes = calls["layers"]
    # mteb's layout: ROOT/tiny__FAMILY/0/experiments/hidden_layer_N/Tclu.json
    files = {k: out / f"tiny__{family}" / "0" / "experiments" / f"hidden_layer_{k}" / "Tclu.json" for k in (0, 1)}
    caches = {k: _find(json.loads(p.read_text()), "cache") for k, p in files.items()}
    assert caches[0] != caches[1]
    meta_json = json.loads((files[1].parent / "model_meta.json").read_text())
    assert meta_json["experiment_kwargs"] == {"hidden_layer": 1} and meta_json["name"] == meta.name

    # rerunning the sweep finds every result written: nothing loads into a forward pass again
    again = run(meta, [spec], RunOptions(layers="all", **options))
    assert len(again.skipped_existing) == 2 and calls["layers"] == passes

    # a plain run: its own cache (identity unchanged), the last layer's vectors exactly
    plain = run(meta, [spec], RunOptions(**options))
    assert plain.done == ["Tclu"] and calls["audio"] > 0
    # one forward pass per batch for all layers: the sweep of 2 layers made as many as the plain run
    # (a pass per layer would make twice as many)
    assert passes == calls["audio"], (passes, calls["audio"])
    plain_file = next(p for p in out.rglob("Tclu.json") if "experiments" not in p.parts)
    plain_cache = _find(json.loads(plain_file.read_text()), "cache")
    assert plain_cache not in caches.values()
    last, first, base = _vectors(cache, caches[1]), _vectors(cache, caches[0]), _vectors(cache, plain_cache)
    assert last.keys() == base.keys() == first.keys() and len(base) == 36
    assert all(np.array_equal(last[k], base[k]) for k in base)
    assert not all(np.allclose(first[k], base[k], atol=1e-3) for k in base)

    # the board: each layer a row of its own beside the plain run
    from maeb.analysis.leaderboard import load_board

    board, _ = load_board([out])
    assert {r.model for r in board.rows} >= {meta.name, f"{meta.name} [hidden_layer_0]", f"{meta.name} [hidden_layer_1]"}


def _find(payload, key):
    """The first value under `key` anywhere in a result payload (the encoder's cache file name)."""
    if isinstance(payload, dict):
        if key in payload and isinstance(payload[key], str):
            return payload[key]
        for value in payload.values():
            found = _find(value, key)
            if found is not None:
                return found
    if isinstance(payload, list):
        for value in payload:
            found = _find(value, key)
            if found is not None:
                return found
    return None


def test_sweep_refuses_a_family_without_hidden_states(tmp_path, tone_folder):
    meta = meta_for("mock-spectral")
    spec = parse_spec(
        {"name": "T", "type": "clustering", "data": {"source": "audiofolder", "path": str(tone_folder), "eval_splits": ["all"]}},
        "test spec",
    )
    with pytest.raises(ModelError, match="--layers needs a wrapper that exposes its hidden states"):
        run(meta, [spec], RunOptions(layers="all", output_dir=None, cache_dir=tmp_path, show_progress=False))


def test_score_by_layer_figure_reads_sweep_rows_of_the_board():
    pytest.importorskip("matplotlib")
    from maeb.analysis.figures import svg_text
    from maeb.analysis.layerfig import MEAN_PANEL, layer_curves, layer_of, sweeps
    from maeb.analysis.leaderboard import Board

    assert layer_of("org/m [hidden_layer_12]") == ("org/m", 12)
    assert layer_of("org/m [dtype_bfloat16__hidden_layer_3]") == ("org/m [dtype_bfloat16]", 3)
    assert layer_of("org/m [dtype_bfloat16]") is None and layer_of("org/m") is None
    partial = {
        "A": {"m [hidden_layer_0]": 0.5, "m [hidden_layer_1]": 0.7, "m": 0.7, "n [hidden_layer_0]": 0.2},
        "B": {"m [hidden_layer_0]": 0.3, "m [hidden_layer_1]": 0.1},
    }
    board = Board(None, [], [], partial=partial)
    curves = sweeps(board)
    assert list(curves) == [MEAN_PANEL, "A", "B"]
    assert curves[MEAN_PANEL] == {"m": {0: pytest.approx(0.4), 1: pytest.approx(0.4)}}  # n lacks task B: no mean
    assert curves["A"] == {"m": {0: 0.5, 1: 0.7}, "n": {0: 0.2}}
    fig = layer_curves(board)
    assert fig is not None and fig.name == "score_by_layer"
    text = svg_text(fig)
    assert "hidden layer" in text and "mean over tasks" in text  # text stays text in the SVG
    assert layer_curves(Board(None, [], [], partial={"A": {"m": 0.5}})) is None
