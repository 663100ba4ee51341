"""Each transformers family from a tiny random-weight model saved by the test (no download),
loaded through the same from_pretrained path as the hub, pooled as mteb pools it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maeb.audio import AudioRef
from maeb.encoders import ModelMeta, load_encoder
from maeb.mock import tone, vector_wav
from maeb.runner import evaluate_task
from maeb.spec import parse_spec

from .conftest import FREQS, make_embedder

transformers = pytest.importorskip("transformers")

SSL_COMMON = dict(
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
    conv_dim=(8, 8),
    conv_stride=(5, 4),
    conv_kernel=(10, 4),
    num_conv_pos_embeddings=8,
    num_conv_pos_embedding_groups=2,
)


def save_whisper(path):
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperModel

    config = WhisperConfig(
        vocab_size=64,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        num_mel_bins=80,
        max_source_positions=1500,
        max_target_positions=16,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
    )
    torch.manual_seed(0)
    WhisperModel(config).save_pretrained(path)
    WhisperFeatureExtractor().save_pretrained(path)


def save_ssl(path, kind: str, norm: str = "group"):
    from transformers import (
        Data2VecAudioConfig,
        Data2VecAudioModel,
        HubertConfig,
        HubertModel,
        Wav2Vec2Config,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2Model,
        WavLMConfig,
        WavLMModel,
    )

    config_cls, model_cls = {
        "wav2vec2": (Wav2Vec2Config, Wav2Vec2Model),
        "hubert": (HubertConfig, HubertModel),
        "wavlm": (WavLMConfig, WavLMModel),
        "data2vec": (Data2VecAudioConfig, Data2VecAudioModel),
    }[kind]
    extra = {} if kind == "data2vec" else {"feat_extract_norm": norm, "do_stable_layer_norm": norm == "layer"}
    torch.manual_seed(0)
    model_cls(config_cls(**SSL_COMMON, **extra)).save_pretrained(path)
    Wav2Vec2FeatureExtractor(return_attention_mask=True, do_normalize=True).save_pretrained(path)


def save_ast(path):
    from transformers import ASTConfig, ASTFeatureExtractor, ASTModel

    torch.manual_seed(0)
    ASTModel(ASTConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)).save_pretrained(path)
    ASTFeatureExtractor().save_pretrained(path)


def save_clap(path):
    from transformers import ClapConfig, ClapFeatureExtractor, ClapModel, ClapProcessor, RobertaTokenizerFast

    config = ClapConfig(
        text_config=dict(
            vocab_size=300,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=80,
        ),
        audio_config=dict(
            hidden_size=32,
            depths=[1, 1],
            num_attention_heads=[2, 2],
            patch_embeds_hidden_size=16,
            window_size=8,
            spec_size=256,
            num_mel_bins=64,
            enable_fusion=False,
        ),
        projection_dim=8,
    )
    torch.manual_seed(0)
    ClapModel(config).save_pretrained(path)
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", *sorted({c for c in "abcdefghijklmnopqrstuvwxyz Ġ"})])}
    merges = path / "merges.txt"
    merges.write_text("#version: 0.2\n")
    vocab_file = path / "vocab.json"
    import json

    vocab_file.write_text(json.dumps(vocab))
    tokenizer = RobertaTokenizerFast(vocab_file=str(vocab_file), merges_file=str(merges))
    ClapProcessor(feature_extractor=ClapFeatureExtractor(truncation="rand_trunc"), tokenizer=tokenizer).save_pretrained(path)


def clips(n=6, seed=0):
    rng = np.random.default_rng(seed)
    return [tone(float(f), float(rng.uniform(0.2, 1.8)), 16000, seed=i) for i, f in enumerate(rng.uniform(200, 3000, n))]


def refs_for(arrays):
    import io

    import soundfile as sf

    out = []
    for i, a in enumerate(arrays):
        buf = io.BytesIO()
        sf.write(buf, a, 16000, format="WAV", subtype="FLOAT")
        out.append(AudioRef(f"clip{i}", data=buf.getvalue()))
    return out


def meta(family, path, modalities=("audio",)):
    return ModelMeta(name=f"tiny/{family}", family=family, revision="0", modalities=modalities, options={"path": str(path)})


def test_whisper_masked_mean_over_audio_frames(tmp_path):
    from transformers import WhisperFeatureExtractor, WhisperModel

    save_whisper(tmp_path / "m")
    m = meta("hf-whisper", tmp_path / "m")
    enc = load_encoder(m)
    arrays = clips()
    vecs, ok = make_embedder(tmp_path, encoder=enc, meta=m, batch_size=4).audio(refs_for(arrays))
    assert ok.all() and vecs.shape == (6, 16)
    model = WhisperModel.from_pretrained(tmp_path / "m").encoder.eval()
    fe = WhisperFeatureExtractor.from_pretrained(tmp_path / "m")
    for i in (0, 3):
        feats = fe(arrays[i], sampling_rate=16000, return_tensors="pt", padding="max_length")
        with torch.no_grad():
            hidden = model(feats.input_features).last_hidden_state[0]
        frames = int(np.ceil(len(arrays[i]) / 160)) // 2
        assert np.allclose(vecs[i], hidden[:frames].mean(0).numpy(), atol=1e-5)
    assert enc.config()["window"] == "30s" and enc.max_seconds == 30.0


@pytest.mark.parametrize(
    "kind, norm", [("wav2vec2", "group"), ("wav2vec2", "layer"), ("hubert", "group"), ("wavlm", "layer"), ("data2vec", None)]
)
def test_self_supervised_families(tmp_path, kind, norm):
    save_ssl(tmp_path / "m", kind, norm or "layer")
    m = meta("hf-ssl", tmp_path / "m")
    enc = load_encoder(m)
    assert enc.batching == ("same_length" if norm == "group" else "padded")
    arrays = clips(5)
    arrays.append(arrays[1].copy())  # an identical length, so same_length mode really batches
    batched, ok = make_embedder(tmp_path / "a", encoder=enc, meta=m, batch_size=6).audio(refs_for(arrays))
    single = np.stack([enc.embed_audio([a])[0] for a in arrays])
    assert ok.all() and batched.shape == (6, 16) and np.isfinite(batched).all()
    if norm == "group":  # identical-length batches only, so batching changes nothing at all
        assert np.allclose(batched, single, atol=1e-6)
    else:  # attention-masked padding moves vectors only slightly (mteb: cosine >= 0.9999 on real models)
        cos = (batched * single).sum(1) / np.linalg.norm(batched, axis=1) / np.linalg.norm(single, axis=1)
        assert cos.min() > 0.999
    assert np.allclose(batched[1], batched[5], atol=1e-6)


def test_ssl_pooling_matches_direct_computation(tmp_path):
    from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2Model

    save_ssl(tmp_path / "m", "wav2vec2", "layer")
    enc = load_encoder(meta("hf-ssl", tmp_path / "m"))
    a = clips(1)[0]
    model = Wav2Vec2Model.from_pretrained(tmp_path / "m").eval()
    values = Wav2Vec2FeatureExtractor.from_pretrained(tmp_path / "m")(a, sampling_rate=16000, return_tensors="pt").input_values
    with torch.no_grad():
        expected = model(values).last_hidden_state[0].mean(0).numpy()
    assert np.allclose(enc.embed_audio([a])[0], expected, atol=1e-5)


def test_ast_pooler(tmp_path):
    from transformers import ASTFeatureExtractor, ASTModel

    save_ast(tmp_path / "m")
    enc = load_encoder(meta("hf-ast", tmp_path / "m"))
    arrays = clips(3)
    vecs = enc.embed_audio(arrays)
    model = ASTModel.from_pretrained(tmp_path / "m").eval()
    feats = ASTFeatureExtractor.from_pretrained(tmp_path / "m")(arrays[2], sampling_rate=16000, return_tensors="pt")
    with torch.no_grad():
        assert np.allclose(vecs[2], model(**feats).pooler_output[0].numpy(), atol=1e-5)
    assert 10.0 < enc.max_seconds < 10.5


def test_clap_audio_and_text_in_a_zeroshot_task(tmp_path, tone_folder):
    save_clap(tmp_path / "m")
    m = meta("hf-clap", tmp_path / "m", modalities=("audio", "text"))
    enc = load_encoder(m)
    assert enc.sample_rate == 48000 and enc.max_seconds == 10.0
    audio = enc.embed_audio(clips(2))
    text = enc.embed_text(["a dog barks", "rain"])
    assert audio.shape == (2, 8) and text.shape == (2, 8)
    assert np.allclose(np.linalg.norm(audio, axis=1), 1, atol=1e-5) and np.allclose(np.linalg.norm(text, axis=1), 1, atol=1e-5)
    assert np.allclose(enc.embed_audio(clips(2)), audio)  # deterministic (seeded feature extraction)
    spec = parse_spec(
        {
            "name": "Zs",
            "type": "zeroshot",
            "data": {"source": "audiofolder", "path": str(tone_folder), "eval_splits": ["all"]},
            "protocol": {"template": "a {label} sound"},
        },
        "spec",
    )
    scores, _ = evaluate_task(spec, make_embedder(tmp_path, encoder=enc, meta=m))
    assert 0.0 <= scores["all"][0]["accuracy"] <= 1.0 and len(FREQS) == 3


def test_long_clips_are_cut_before_the_encoder(tmp_path):
    save_ssl(tmp_path / "m", "wav2vec2", "layer")
    m = meta("hf-ssl", tmp_path / "m")
    enc = load_encoder(m, max_seconds=1.0)
    emb = make_embedder(tmp_path, encoder=enc, meta=m)
    long_clip = tone(300.0, 3.0, 16000)
    head = long_clip[:16000]
    a, _ = emb.audio(refs_for([long_clip]))
    assert np.allclose(a[0], enc.embed_audio([head])[0], atol=1e-5)
    assert emb.policy.describe()["max_seconds"] == 1.0 and vector_wav([0.0])
