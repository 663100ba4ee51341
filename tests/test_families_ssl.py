"""SEW-D, UniSpeech-SAT, MMS and SpeechT5 from tiny random checkpoints: the vectors equal those of
mteb 2.26.24's own wrappers on the same checkpoint, and caps, batching and layers follow the
protocol tables."""

from __future__ import annotations

import numpy as np
import pytest

from maeb.encoders import load_encoder, tiny
from maeb.encoders.pooling import frame_counts

from .family_fixtures import clips, meta_for, stub_torchaudio, through_mteb

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_sewd_matches_mteb_and_caps_at_its_position_horizon(tmp_path, monkeypatch):
    from mteb.models.model_implementations.sewd_models import SewDWrapper

    stub_torchaudio(monkeypatch)
    opts = tiny.ssl(tmp_path / "m", "sew-d")
    enc = load_encoder(meta_for("hf-sew-d", **opts))
    # 256 positions x (5 x 4) conv stride x squeeze 2 = 10,240 samples, as mteb computes it
    assert enc.max_seconds == pytest.approx(10240 / 16000) and enc.config()["cap_rule"] == "position-horizon"
    assert (enc.batching, enc.frames, enc.layer, enc.min_samples) == ("same_length", "ratio", "last_hidden_state", 720)
    reference = through_mteb(SewDWrapper(str(tmp_path / "m"), revision=None, device="cpu"))
    assert reference.model.max_samples == 10240
    arrays = clips((0.05, 0.3, 0.6))
    ours = np.stack([enc.embed_audio([a])[0] for a in arrays])
    theirs = np.stack([reference.embed_audio([a])[0] for a in arrays])
    assert np.allclose(ours, theirs, atol=1e-5)
    paper = load_encoder(meta_for("hf-sew-d", **opts), protocol="paper")
    assert (paper.max_seconds, paper.batching, paper.layer) == (30.0, "padded", "hidden_states[-1]")
    # the squeezed, half-rate sequence of the CTC model is another vector than its upsampled output
    assert not np.allclose(paper.embed_audio([arrays[2]]), ours[2:], atol=1e-4)


def test_unispeech_sat_matches_mteb(tmp_path, monkeypatch):
    from mteb.models.model_implementations.unispeech_models import UniSpeechWrapper

    stub_torchaudio(monkeypatch)
    opts = tiny.ssl(tmp_path / "m", "unispeech-sat")
    enc = load_encoder(meta_for("hf-ssl", "microsoft/unispeech-sat-base", **opts))
    assert (enc.arch, enc.layer, enc.frames, enc.batching, enc.max_seconds) == (
        "unispeech-sat",
        "hidden_states[-1]",
        "ratio",
        "same_length",
        None,
    )
    reference = through_mteb(UniSpeechWrapper(str(tmp_path / "m"), revision=None, device="cpu"))
    arrays = clips((0.4, 1.0))
    for a in arrays:
        assert np.allclose(enc.embed_audio([a]), reference.embed_audio([a]), atol=1e-5)


def test_mms_matches_mteb_and_records_that_its_adapter_is_not_loaded(tmp_path, monkeypatch):
    from mteb.models.model_implementations.mms_models import MMSWrapper

    stub_torchaudio(monkeypatch)
    opts = tiny.mms(tmp_path / "m")
    enc = load_encoder(meta_for("hf-mms", **opts))
    assert enc.config()["adapter"].startswith("not loaded (AttributeError)") and enc.max_seconds is None
    assert enc.batching == "padded" and enc.frames == "ratio" and enc.min_samples == 0  # layer-norm front end
    reference = through_mteb(MMSWrapper(str(tmp_path / "m"), revision=None, device="cpu"))
    arrays = clips((0.4, 0.9, 1.3))
    assert np.allclose(enc.embed_audio(arrays), reference.embed_audio(arrays), atol=1e-5)
    forced = load_encoder(meta_for("hf-mms", **opts), force_adapter=True)
    assert forced.config()["adapter"] == "eng"
    assert not np.allclose(forced.embed_audio(arrays[:1]), enc.embed_audio(arrays[:1]), atol=1e-4)


def test_speecht5_audio_and_text_encoders(tmp_path):
    from transformers import AutoTokenizer, SpeechT5FeatureExtractor, SpeechT5ForSpeechToText, SpeechT5ForTextToSpeech

    opts = tiny.speecht5(tmp_path / "m")
    meta = meta_for("hf-speecht5", "microsoft/speecht5_multimodal", ("audio", "text"), **opts)
    enc = load_encoder(meta)
    # 400 speech positions x (5 x 4) stride = 8,000 samples, one clip at a time, 400-sample floor
    assert enc.max_seconds == 0.5 and enc.batching == "same_length" and enc.min_samples == 400
    a = clips((0.3,))[0]
    fe = SpeechT5FeatureExtractor.from_pretrained(opts["path"])
    encoder = SpeechT5ForSpeechToText.from_pretrained(opts["path"]).speecht5.encoder.eval()
    values = fe(a, sampling_rate=16000, return_tensors="pt").input_values
    with torch.no_grad():
        hidden = encoder(input_values=values).last_hidden_state
    n = int(frame_counts("ratio", [len(a)], values.shape[1], hidden.shape[1])[0])
    assert np.allclose(enc.embed_audio([a])[0], hidden[0, :n].mean(0).numpy(), atol=1e-5)
    texts = ["a dog", "the sound of rain"]
    tok = AutoTokenizer.from_pretrained(opts["text_path"])(texts, return_tensors="pt", padding="longest")
    text_encoder = SpeechT5ForTextToSpeech.from_pretrained(opts["text_path"]).speecht5.encoder.eval()
    with torch.no_grad():
        th = text_encoder(input_values=tok["input_ids"], attention_mask=tok["attention_mask"]).last_hidden_state
    mask = tok["attention_mask"].unsqueeze(-1).float()
    expected = ((th * mask).sum(1) / mask.sum(1)).numpy()
    assert np.allclose(enc.embed_text(texts), expected, atol=1e-5)
    asr_only = load_encoder(meta_for("hf-speecht5", "microsoft/speecht5_asr", path=opts["path"]))
    assert asr_only.embed_text is None and asr_only.text_model is None
    assert load_encoder(meta, protocol="paper").max_seconds == 30.0


def test_mctct_names_what_it_needs():
    import transformers

    from maeb.core.errors import ModelError

    if int(transformers.__version__.split(".")[0]) < 5:
        pytest.skip("M-CTC-T exists in this transformers")
    with pytest.raises(ModelError, match=r"transformers < 5.*maeb\[mctct\]"):
        load_encoder(meta_for("hf-mctct", "speechbrain/m-ctc-t-large"))
