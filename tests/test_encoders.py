"""Each transformers family from a tiny random-weight model saved by the test (no download),
loaded through the same from_pretrained path as the hub, pooled as mteb pools it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maeb.audio.pipeline import AudioRef
from maeb.encoders import ModelMeta, load_encoder, tiny
from maeb.mock import tone, vector_wav
from maeb.run.task import evaluate_task
from maeb.spec.taskspec import parse_spec

from .conftest import FREQS, make_embedder

transformers = pytest.importorskip("transformers")


# the checkpoints are maeb.encoders.tiny's (the same builders `maeb check-model --tiny` uses)
def save_whisper(path):
    tiny.whisper(path)


def save_ssl(path, kind: str, norm: str = "group"):
    tiny.ssl(path, kind, norm)


def save_ast(path):
    tiny.ast(path)


def save_clap(path, fusion: bool = False):
    tiny.clap(path, fusion)


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
    # mteb 2.26 runs group-norm front ends and data2vec one clip at a time (here: identical lengths only)
    assert enc.batching == ("same_length" if norm == "group" or kind == "data2vec" else "padded")
    arrays = clips(5)
    arrays.append(arrays[1].copy())  # an identical length, so same_length mode really batches
    batched, ok = make_embedder(tmp_path / "a", encoder=enc, meta=m, batch_size=6).audio(refs_for(arrays))
    single = np.stack([enc.embed_audio([a])[0] for a in arrays])
    assert ok.all() and batched.shape == (6, 16) and np.isfinite(batched).all()
    if enc.batching == "same_length":  # identical-length batches only, so batching changes nothing at all
        assert np.allclose(batched, single, atol=1e-6)
    else:  # attention-masked padding moves vectors only slightly (mteb: cosine >= 0.9999 on real models)
        cos = (batched * single).sum(1) / np.linalg.norm(batched, axis=1) / np.linalg.norm(single, axis=1)
        assert cos.min() > 0.999
    assert np.allclose(batched[1], batched[5], atol=1e-6)


@pytest.mark.parametrize(
    "kind, protocol, cap, batching, frames, layer",
    [
        ("wav2vec2", "mteb-2.26", None, "same_length", "conv", "last_hidden_state"),
        ("hubert", "mteb-2.26", None, "same_length", "ratio", "last_hidden_state"),
        ("wavlm", "mteb-2.26", 240.0, "same_length", "ratio", "last_hidden_state"),
        ("data2vec", "mteb-2.26", None, "same_length", "ratio", "last_hidden_state"),
        ("wav2vec2", "paper", 30.0, "padded", "conv", "last_hidden_state"),
        ("wavlm", "paper", 30.0, "padded", "ratio", "hidden_states[-1]"),
        ("data2vec", "paper", 30.0, "padded", "ratio", "last_hidden_state"),
    ],
)
def test_ssl_settings_follow_the_protocol(tmp_path, kind, protocol, cap, batching, frames, layer):
    save_ssl(tmp_path / "m", kind, "group")
    enc = load_encoder(meta("hf-ssl", tmp_path / "m"), protocol=protocol)
    assert (enc.max_seconds, enc.batching, enc.frames, enc.layer) == (cap, batching, frames, layer)
    assert enc.config()["max_seconds"] == cap and enc.min_samples == 400
    explicit = load_encoder(meta("hf-ssl", tmp_path / "m"), protocol=protocol, max_seconds=12.5, batching="padded")
    assert explicit.max_seconds == 12.5 and explicit.batching == "padded"  # options override the protocol


def test_ratio_frames_follow_mteb_arithmetic():
    from maeb.encoders.pooling import frame_counts, masked_mean

    # mteb: (samples.float() / (padded / frames)).long(): float32 division can land just below an integer
    counts = frame_counts("ratio", torch.tensor([16000, 8000, 100]), 16000, 49)
    expected = (torch.tensor([16000, 8000, 100]).float() / (16000 / 49)).long()
    assert counts.tolist() == expected.tolist()
    hidden = torch.arange(2 * 3 * 2, dtype=torch.float32).reshape(2, 3, 2)
    pooled = masked_mean(hidden, torch.tensor([2, 0]))
    assert np.allclose(pooled[0], hidden[0, :2].mean(0).numpy()) and np.all(pooled[1] == 0)  # no frame: zero vector


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
    scores, *_ = evaluate_task(spec, make_embedder(tmp_path, encoder=enc, meta=m))
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


def save_seamless(path):
    from transformers import SeamlessM4TFeatureExtractor, SeamlessM4Tv2Config, SeamlessM4Tv2Model

    config = SeamlessM4Tv2Config(
        vocab_size=64,
        t2u_vocab_size=64,
        char_vocab_size=64,
        hidden_size=16,
        speech_encoder_layers=1,
        speech_encoder_attention_heads=2,
        speech_encoder_intermediate_size=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        t2u_encoder_layers=1,
        t2u_decoder_layers=1,
        t2u_encoder_attention_heads=2,
        t2u_decoder_attention_heads=2,
        t2u_encoder_ffn_dim=32,
        t2u_decoder_ffn_dim=32,
        unit_embed_dim=16,
        upsample_initial_channel=64,
        unit_hifi_gan_vocab_size=16,
        spkr_embed_dim=8,
        lang_embed_dim=8,
        vocoder_num_langs=2,
        vocoder_num_spkrs=2,
        variance_predictor_kernel_size=3,
        vocoder_offset=4,
        adaptor_kernel_size=8,
        adaptor_stride=8,
    )
    torch.manual_seed(0)
    SeamlessM4Tv2Model(config).save_pretrained(path)
    SeamlessM4TFeatureExtractor().save_pretrained(path)


def test_seamless_speech_encoder(tmp_path):
    save_seamless(tmp_path / "m")
    m = meta("hf-seamless", tmp_path / "m")
    enc = load_encoder(m)
    arrays = clips(4)
    vecs, ok = make_embedder(tmp_path, encoder=enc, meta=m, batch_size=4).audio(refs_for(arrays))
    assert ok.all() and vecs.shape == (4, 16) and np.isfinite(vecs).all() and enc.max_seconds == 60.0
    alone = enc.embed_audio([arrays[0]])[0]
    cos = alone @ vecs[0] / np.linalg.norm(alone) / np.linalg.norm(vecs[0])
    assert cos > 0.9  # padded batches, as mteb runs Seamless: batch-mates move a clip a little


def test_encodec_latent_mean(tmp_path):
    tiny.encodec(tmp_path / "m")
    m = meta("hf-encodec", tmp_path / "m")
    enc = load_encoder(m)
    assert enc.sample_rate == 24000 and enc.min_samples == 320 and enc.batching == "single"
    vecs, ok = make_embedder(tmp_path, encoder=enc, meta=m).audio(refs_for(clips(3)))
    assert ok.all() and vecs.shape == (3, 8) and np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)


word_tokenizer = tiny.word_tokenizer


WORDS = "a an the dog cat rain sound of this is person feeling tone at hz summarize above audio text in one word :".split()


def save_tiny_qwen2_audio(path, special=(), words=(), chat_template=None):
    """A one-layer Qwen2-Audio with a word-level tokenizer, saved with its processor."""
    from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration, Qwen2AudioProcessor, WhisperFeatureExtractor

    tok = word_tokenizer(WORDS + list(words), ["<|endoftext|>", "<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>", *special])
    config = Qwen2AudioConfig(
        audio_config=dict(
            d_model=16,
            encoder_layers=1,
            encoder_attention_heads=2,
            encoder_ffn_dim=32,
            num_mel_bins=128,
            max_source_positions=1500,
        ),
        text_config=dict(
            model_type="qwen2",
            vocab_size=len(tok),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
        ),
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"),
    )
    torch.manual_seed(0)
    Qwen2AudioForConditionalGeneration(config).save_pretrained(path)
    processor = Qwen2AudioProcessor(
        feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok, chat_template=chat_template
    )
    processor.save_pretrained(path)


def test_qwen2_audio_last_token(tmp_path):
    save_tiny_qwen2_audio(tmp_path / "m")
    m = meta("hf-qwen2-audio", tmp_path / "m", modalities=("audio", "text"))
    enc = load_encoder(m, dtype="float32")
    arrays = clips(3)
    vecs, ok = make_embedder(tmp_path, encoder=enc, meta=m).audio(refs_for(arrays))
    assert ok.all() and vecs.shape == (3, 16)
    assert np.allclose(enc.embed_audio([arrays[2]])[0], vecs[2], atol=1e-4)  # left padding: the last token is found
    texts = enc.embed_text(["a dog", "the sound of rain"])
    assert texts.shape == (2, 16) and not np.allclose(texts[0], texts[1])
    # mteb 2.26 passes no dtype: the checkpoint's own (saved in float32 here); an option overrides it
    assert load_encoder(m).config()["dtype"] == "float32"
    assert load_encoder(m, dtype="bfloat16").config()["dtype"] == "bfloat16"


def test_omni_embedding_last_token(tmp_path):
    options = tiny.qwen_omni_thinker(tmp_path / "m")  # the processor is assembled from its audio and text parts
    processor = options["processor"]
    m = meta("hf-omni-embedding", tmp_path / "m", modalities=("audio", "text"))
    enc = load_encoder(m, processor=processor, dtype="float32", max_seconds=30.0)
    arrays = clips(2)
    audio = enc.embed_audio(arrays)
    text = enc.embed_text(["a tone at hz", "rain"])
    assert audio.shape == (2, 16) and text.shape == (2, 16)
    assert np.allclose(np.linalg.norm(audio, axis=1), 1, atol=1e-5) and np.allclose(np.linalg.norm(text, axis=1), 1, atol=1e-5)
    assert np.allclose(enc.embed_audio([arrays[1]])[0], audio[1], atol=1e-4)


def test_clap_fused_keeps_long_clips_whole(tmp_path):
    save_clap(tmp_path / "m", fusion=True)
    enc = load_encoder(meta("hf-clap", tmp_path / "m", modalities=("audio", "text")))
    assert enc.fusion and enc.max_seconds is None
    long_clip, short_clip = tone(300.0, 12.0, 48000), tone(300.0, 2.0, 48000)
    a = enc.embed_audio([long_clip, short_clip])
    assert a.shape == (2, 8) and np.allclose(enc.embed_audio([long_clip])[0], a[0], atol=1e-5)
