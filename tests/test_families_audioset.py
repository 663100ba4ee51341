"""YAMNet and VGGish (package torch-vggish-yamnet, random weights) against mteb 2.26.24's own
wrappers with the same weights, and Wav2CLIP (package wav2clip, random checkpoint in the
published file's layout) against the package's embed_audio. The packages import torchaudio,
which cannot be installed here: see family_fixtures.stub_torchaudio."""

from __future__ import annotations

import numpy as np
import pytest

from maeb.encoders import load_encoder, tiny
from maeb.encoders.audioset import audioset_log_mel
from maeb.encoders.protocols import get_protocol

from .family_fixtures import clips, meta_for, stub_torchaudio, through_mteb

torch = pytest.importorskip("torch")


@pytest.fixture
def vggish_yamnet(monkeypatch):
    stub_torchaudio(monkeypatch)
    return pytest.importorskip("torch_vggish_yamnet.yamnet"), pytest.importorskip("torch_vggish_yamnet.vggish")


def test_log_mel_equals_mteb(vggish_yamnet):
    from mteb.models.model_implementations.vggish_models import _log_mel

    audio = torch.from_numpy(clips((1.3,))[0])
    for dtype, offset in ((torch.float32, 0.001), (torch.float64, 0.01)):
        assert torch.equal(audioset_log_mel(audio.to(dtype), offset), _log_mel(audio.to(dtype), offset))
    assert audioset_log_mel(audio, 0.001).shape == (int((len(audio) - 400) // 160 + 1), 64)


@pytest.mark.parametrize("family", ["yamnet", "vggish"])
def test_audioset_cnn_equals_mteb_wrapper(tmp_path, monkeypatch, vggish_yamnet, family):
    yamnet_mod, vggish_mod = vggish_yamnet
    opts = tiny.audioset(tmp_path, family)
    enc = load_encoder(meta_for(family, f"google/{family}", **opts))
    state = torch.load(opts["path"], weights_only=True)
    # mteb's loader downloads the published weights; hand it the same random ones instead
    if family == "yamnet":
        from mteb.models.model_implementations.yamnet_models import yamnet_loader as loader

        build = yamnet_mod.yamnet
        monkeypatch.setattr(yamnet_mod, "yamnet", lambda pretrained=True: _loaded(build(pretrained=False), state))
    else:
        from mteb.models.model_implementations.vggish_models import vggish_loader as loader

        build = vggish_mod.get_vggish
        monkeypatch.setattr(
            vggish_mod, "get_vggish", lambda with_classifier=False, pretrained=True: _loaded(build(pretrained=False), state)
        )
    reference = through_mteb(loader(device="cpu"))
    arrays = clips((0.3, 1.0, 2.3)) + [2.5 * clips((0.8,), seed=5)[0]]  # a short clip, and a loud one (peak-normalised)
    ours, theirs = enc.embed_audio(arrays), reference.embed_audio(arrays)
    assert ours.shape == (4, 1024 if family == "yamnet" else 128)
    assert np.allclose(ours, theirs, atol=1e-5)
    assert enc.max_seconds is None and enc.config()["front_end"] == "audioset-log-mel"


def _loaded(model, state):
    # VGGish's state has the final ReLU's slot too (no weights): the same keys either way
    model.load_state_dict(state)
    return model


def test_yamnet_pads_to_a_patch_plus_whole_hops(tmp_path, vggish_yamnet):
    enc = load_encoder(meta_for("yamnet", "google/yamnet", **tiny.audioset(tmp_path, "yamnet")))
    assert [enc._padded_length(n) for n in (100, 15600, 15601, 23280, 23281)] == [15600, 15600, 23280, 23280, 30960]
    paper = get_protocol("paper").family_rules("yamnet")
    assert paper == {"max_seconds": 30.0, "front_end": "waveform-to-input", "pad": 15360}


def test_vggish_drops_the_ports_final_relu(tmp_path, vggish_yamnet):
    opts = tiny.audioset(tmp_path, "vggish")
    enc = load_encoder(meta_for("vggish", "google/vggish", **opts))
    kept = load_encoder(meta_for("vggish", "google/vggish", **opts), final_relu=True)
    assert not isinstance(enc.model.embeddings[-1], torch.nn.ReLU) and isinstance(kept.model.embeddings[-1], torch.nn.ReLU)
    a = enc.embed_audio(clips((1.0,)))
    assert (a < 0).any() and (kept.embed_audio(clips((1.0,))) >= 0).all()


def test_wav2clip_audio_per_clip_and_clip_text(tmp_path, monkeypatch):
    stub_torchaudio(monkeypatch)
    wav2clip = pytest.importorskip("wav2clip")
    opts = tiny.wav2clip(tmp_path / "m")
    enc = load_encoder(meta_for("wav2clip", "lyrebird/wav2clip", ("audio", "text"), **opts))
    arrays = clips((0.5, 1.5))
    vecs = enc.embed_audio(arrays)
    expected = np.concatenate([wav2clip.embed_audio(a[None], enc.audio_model) for a in arrays])
    assert vecs.shape == (2, 512) and np.allclose(vecs, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-6)
    text = enc.embed_text(["a dog", "rain"])
    assert text.shape == (2, 512) and np.allclose(np.linalg.norm(text, axis=1), 1, atol=1e-5)
    paper = load_encoder(meta_for("wav2clip", "lyrebird/wav2clip", ("audio", "text"), **opts), protocol="paper")
    assert enc.config()["per_clip"] and not paper.config()["per_clip"]
