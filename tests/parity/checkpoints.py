"""Tiny random-weight checkpoints, one per family that both mteb 2.26.24 and maeb wrap.

Each folder is a complete `save_pretrained` checkpoint (model, feature extractor, and the processor or
tokenizer that mteb's wrapper loads), so both sides load it with their own code: maeb through a model
entry whose `options.path` names the folder, mteb through the ModelMeta of a real model of the family
copied with `name=<folder>` and its own `load_model()`.

The configs mirror tests/test_encoders.py, with two changes that keep the suite fast and small: the
self-supervised front ends stride 1280 samples per frame (real ones 320), so that a 241 s clip is 3,000
frames and its attention fits in memory in a padded batch; and every family gets the processor pieces
mteb's loader asks for (Whisper and SeamlessM4T tokenizers). Weights come from `torch.manual_seed(0)`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

# bump when a builder changes, so cached folders are rebuilt
BUILD_VERSION = "2"


@dataclass(frozen=True)
class Family:
    key: str  # short name used on the command line and in the table
    mteb_model: str  # a real model of this family in mteb's registry (whose ModelMeta is copied)
    maeb_model: str  # the same model in maeb's registry (whose entry is copied)
    modalities: tuple[str, ...] = ("audio",)
    notes: str = ""
    build_kwargs: dict = field(default_factory=dict)


SSL_COMMON = dict(
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
    conv_dim=(8, 8, 8, 8, 8),
    conv_stride=(5, 4, 4, 4, 4),
    conv_kernel=(10, 4, 4, 4, 4),
    num_conv_pos_embeddings=8,
    num_conv_pos_embedding_groups=2,
)


def _seed():
    import torch

    torch.manual_seed(0)


def _bpe_vocab(extra: list[str]) -> dict[str, int]:
    letters = sorted({c for c in "abcdefghijklmnopqrstuvwxyz0123456789"} | {"Ġ"})
    return {t: i for i, t in enumerate(dict.fromkeys(extra + letters))}


def save_whisper(path: Path) -> None:
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperModel, WhisperProcessor, WhisperTokenizer

    vocab = _bpe_vocab(["<|endoftext|>", "<|startoftranscript|>", "<|notimestamps|>"])
    (path / "vocab.json").write_text(json.dumps(vocab))
    (path / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = WhisperTokenizer(vocab_file=str(path / "vocab.json"), merges_file=str(path / "merges.txt"))
    config = WhisperConfig(
        vocab_size=len(vocab),
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
        eos_token_id=0,
        decoder_start_token_id=1,
    )
    _seed()
    WhisperModel(config).save_pretrained(path)
    WhisperProcessor(feature_extractor=WhisperFeatureExtractor(), tokenizer=tokenizer).save_pretrained(path)


def save_ssl(path: Path, kind: str, norm: str = "group") -> None:
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
    _seed()
    model_cls(config_cls(**SSL_COMMON, **extra)).save_pretrained(path)
    # real base checkpoints (group norm) ship do_normalize=True, return_attention_mask=False;
    # mteb and maeb both ask for the mask explicitly
    Wav2Vec2FeatureExtractor(return_attention_mask=norm == "layer", do_normalize=True).save_pretrained(path)


def save_ast(path: Path) -> None:
    from transformers import ASTConfig, ASTFeatureExtractor, ASTModel

    # a 1.28 s window (128 frames; real checkpoints 1024, 10.24 s): with the clips here mostly padding
    # in a 10 s window, every clip pools to nearly the same vector (pairwise cosine 0.9999)
    _seed()
    config = ASTConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, max_length=128)
    ASTModel(config).save_pretrained(path)
    ASTFeatureExtractor(max_length=128).save_pretrained(path)


def save_clap(path: Path, fusion: bool = False) -> None:
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
            enable_fusion=fusion,
        ),
        projection_dim=8,
    )
    _seed()
    ClapModel(config).save_pretrained(path)
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", *sorted({c for c in "abcdefghijklmnopqrstuvwxyz Ġ"})])}
    (path / "merges.txt").write_text("#version: 0.2\n")
    (path / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = RobertaTokenizerFast(vocab_file=str(path / "vocab.json"), merges_file=str(path / "merges.txt"))
    extractor = ClapFeatureExtractor(truncation="fusion" if fusion else "rand_trunc")
    ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(path)


def save_seamless(path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        SeamlessM4TFeatureExtractor,
        SeamlessM4TProcessor,
        SeamlessM4TTokenizerFast,
        SeamlessM4Tv2Config,
        SeamlessM4Tv2Model,
    )

    words = ["<pad>", "<unk>", "<s>", "</s>", "__eng__", *list("abcdefghijklmnopqrstuvwxyz")]
    backend = Tokenizer(models.Unigram([(w, -1.0) for w in words], unk_id=1))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.save(str(path / "tokenizer.json"))
    tokenizer = SeamlessM4TTokenizerFast(tokenizer_file=str(path / "tokenizer.json"), additional_special_tokens=["__eng__"])
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
    _seed()
    SeamlessM4Tv2Model(config).save_pretrained(path)
    SeamlessM4TProcessor(feature_extractor=SeamlessM4TFeatureExtractor(), tokenizer=tokenizer).save_pretrained(path)


def save_encodec(path: Path) -> None:
    import torch
    from transformers import EncodecConfig, EncodecFeatureExtractor, EncodecModel

    config = EncodecConfig(
        target_bandwidths=[1.5],
        num_filters=2,
        hidden_size=8,
        codebook_size=16,
        codebook_dim=8,
        upsampling_ratios=[8, 5, 4, 2],
        num_lstm_layers=1,
    )
    _seed()
    model = EncodecModel(config)
    # with random biases the time-mean latent is the bias response, the same for every clip (pairwise
    # cosine > 0.99999), and rankings would be decided by rounding; without them it follows the audio
    with torch.no_grad():
        for name, param in model.encoder.named_parameters():
            if name.endswith("bias"):
                param.zero_()
    model.save_pretrained(path)
    EncodecFeatureExtractor().save_pretrained(path)


QWEN_WORDS = "a an the dog cat rain sound of this is person feeling tone at hz summarize above audio text in one word :".split()


def _word_tokenizer(words, special, **extra):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(dict.fromkeys(special + words))}
    backend = Tokenizer(models.WordLevel(vocab, unk_token=special[0]))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token=special[0], pad_token=special[0], eos_token=special[0], padding_side="left", **extra
    )
    tok.add_special_tokens({"additional_special_tokens": special[1:]})
    return tok


def save_qwen2_audio(path: Path) -> None:
    from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration, Qwen2AudioProcessor, WhisperFeatureExtractor

    words = QWEN_WORDS + sorted({w for text in _caption_words() for w in text.split()})
    tok = _word_tokenizer(words, ["<|endoftext|>", "<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>"])
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
    _seed()
    Qwen2AudioForConditionalGeneration(config).save_pretrained(path)
    Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok).save_pretrained(path)


def _caption_words() -> list[str]:
    from .datasets import CAPTION_WORDS_LIST

    return [" ".join(CAPTION_WORDS_LIST)]


FAMILIES: dict[str, tuple[Family, object]] = {
    f.key: (f, builder)
    for f, builder in [
        (Family("whisper", "openai/whisper-base", "openai/whisper-base"), save_whisper),
        (
            Family("wav2vec2-group", "facebook/wav2vec2-base", "facebook/wav2vec2-base"),
            lambda p: save_ssl(p, "wav2vec2", "group"),
        ),
        (
            Family("wav2vec2-layer", "facebook/wav2vec2-large-xlsr-53", "facebook/wav2vec2-large-xlsr-53"),
            lambda p: save_ssl(p, "wav2vec2", "layer"),
        ),
        (Family("hubert", "facebook/hubert-base-ls960", "facebook/hubert-base-ls960"), lambda p: save_ssl(p, "hubert", "group")),
        (Family("wavlm-group", "microsoft/wavlm-base", "microsoft/wavlm-base"), lambda p: save_ssl(p, "wavlm", "group")),
        (Family("wavlm-layer", "microsoft/wavlm-large", "microsoft/wavlm-large"), lambda p: save_ssl(p, "wavlm", "layer")),
        (
            Family("data2vec", "facebook/data2vec-audio-base-960h", "facebook/data2vec-audio-base-960h"),
            lambda p: save_ssl(p, "data2vec"),
        ),
        (Family("ast", "MIT/ast-finetuned-audioset-10-10-0.4593", "MIT/ast-finetuned-audioset-10-10-0.4593"), save_ast),
        (Family("clap", "laion/clap-htsat-unfused", "laion/clap-htsat-unfused", ("audio", "text")), save_clap),
        (
            Family("clap-fusion", "laion/clap-htsat-fused", "laion/clap-htsat-fused", ("audio", "text")),
            lambda p: save_clap(p, fusion=True),
        ),
        (Family("seamless", "facebook/seamless-m4t-v2-large", "facebook/seamless-m4t-v2-large"), save_seamless),
        (Family("encodec", "facebook/encodec_24khz", "facebook/encodec_24khz"), save_encodec),
        (Family("qwen2-audio", "Qwen/Qwen2-Audio-7B", "Qwen/Qwen2-Audio-7B", ("audio", "text")), save_qwen2_audio),
    ]
}

# Families mteb wraps and maeb has, that this suite cannot build here, with the reason.
NOT_BUILT = {
    "lco-omni": (
        "LCO-Embedding-Omni (Qwen2.5-Omni thinker): mteb's wrapper loads Qwen2_5OmniProcessor.from_pretrained, whose image "
        "and video processors need pillow and torchvision; torchvision's wheels link a CUDA torch, so the oracle environment "
        "cannot hold them (maeb's own test assembles the processor by hand instead)"
    ),
}


def build(root: Path, keys: list[str] | None = None) -> dict[str, Path]:
    """Build (or reuse) the checkpoint folders under root; returns key -> folder."""
    root = Path(root)
    out = {}
    for key in keys or list(FAMILIES):
        family, builder = FAMILIES[key]
        folder = root / key
        stamp = folder / ".parity-build"
        if not (stamp.exists() and stamp.read_text() == BUILD_VERSION):
            if folder.exists():
                shutil.rmtree(folder)
            tmp = root / f".{key}.tmp"
            if tmp.exists():
                shutil.rmtree(tmp)
            tmp.mkdir(parents=True)
            builder(tmp)
            (tmp / ".parity-build").write_text(BUILD_VERSION)
            tmp.rename(folder)
        out[key] = folder
    return out
