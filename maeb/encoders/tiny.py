"""Tiny random-weight checkpoints of maeb's families, built offline in a folder, so a family's real
loading and pooling code can run where its published weights cannot be downloaded
(`maeb check-model ENTRY --tiny`, and the tests).

`build(meta, folder)` returns the options that point the family at what it wrote (`path`, and
for two-checkpoint families `text_path`), plus objects a family takes directly where a real
processor cannot be built here (the Qwen-Omni processor's vision half needs pillow and
torchvision; the tiny one is assembled from its audio and text parts). The vectors mean nothing:
they exercise shapes, dtypes, determinism, batching and the task pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.errors import ModelError

SSL_COMMON: dict[str, Any] = dict(  # Any: each value is a different config field's type
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
WORDS = "a an the dog cat rain sound of this is person tone at hz low mid high summarize above audio text in one word :".split()


def _seed():
    import torch

    torch.manual_seed(0)


def word_tokenizer(words, special, padding_side="left", **extra):
    """A word-level fast tokenizer (no vocabulary download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(dict.fromkeys(list(special) + list(words)))}
    backend = Tokenizer(models.WordLevel(vocab, unk_token=special[0]))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token=special[0],
        pad_token=special[0],
        eos_token=special[0],
        padding_side=padding_side,
        **extra,
    )
    if len(special) > 1:
        tok.add_special_tokens({"additional_special_tokens": list(special[1:])})
    return tok


def whisper(path: Path) -> dict:
    """A random Whisper encoder-decoder with its feature extractor."""
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
    _seed()
    WhisperModel(config).save_pretrained(path)
    WhisperFeatureExtractor().save_pretrained(path)
    return {"path": str(path)}


def ssl(path: Path, kind: str = "wav2vec2", norm: str = "group") -> dict:
    """A random self-supervised speech model of `kind` (wav2vec2, HuBERT, WavLM, data2vec,
    UniSpeech-SAT, SEW-D) with group or layer norm in its feature encoder."""
    import transformers as tf

    classes = {
        "wav2vec2": ("Wav2Vec2Config", "Wav2Vec2Model"),
        "hubert": ("HubertConfig", "HubertModel"),
        "wavlm": ("WavLMConfig", "WavLMModel"),
        "data2vec": ("Data2VecAudioConfig", "Data2VecAudioModel"),
        "unispeech-sat": ("UniSpeechSatConfig", "UniSpeechSatForCTC"),
        "sew-d": ("SEWDConfig", "SEWDForCTC"),
    }
    config_cls, model_cls = (getattr(tf, n) for n in classes[kind])
    extra = {}
    if kind in ("wav2vec2", "hubert", "wavlm", "unispeech-sat"):
        extra = {"feat_extract_norm": norm, "do_stable_layer_norm": norm == "layer"}
    if kind == "unispeech-sat":
        extra.update(vocab_size=8, num_clusters=4, codevector_dim=8, proj_codevector_dim=8)
    if kind == "sew-d":  # a short position horizon, so its length cap shows
        extra = {
            "feat_extract_norm": "group",
            "squeeze_factor": 2,
            "max_position_embeddings": 256,
            "position_buckets": 16,
            "vocab_size": 8,
        }
    _seed()
    model_cls(config_cls(**SSL_COMMON, **extra)).save_pretrained(path)
    tf.Wav2Vec2FeatureExtractor(return_attention_mask=True, do_normalize=True).save_pretrained(path)
    return {"path": str(path)}


def mms(path: Path) -> dict:
    """A wav2vec2 with language adapters and an "eng" adapter file, as the MMS checkpoints ship."""
    from safetensors.torch import save_file
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC

    config = Wav2Vec2Config(**SSL_COMMON, feat_extract_norm="layer", do_stable_layer_norm=True, adapter_attn_dim=4, vocab_size=8)
    _seed()
    model = Wav2Vec2ForCTC(config)
    model.save_pretrained(path)
    import torch

    adapters = {k: torch.randn_like(v) for k, v in model._get_adapters().items()} if hasattr(model, "_get_adapters") else {}
    if not adapters:
        raise ModelError("this transformers version has no wav2vec2 adapter layers; no tiny MMS")
    save_file({k: v.contiguous() for k, v in adapters.items()}, str(Path(path) / "adapter.eng.safetensors"))
    Wav2Vec2FeatureExtractor(return_attention_mask=True, do_normalize=True).save_pretrained(path)
    return {"path": str(path)}


def speecht5(path: Path, text: bool = True) -> dict:
    """A random SpeechT5 speech-to-text model, and with `text` its text-to-speech twin for the text side."""
    from transformers import SpeechT5Config, SpeechT5FeatureExtractor, SpeechT5ForSpeechToText, SpeechT5ForTextToSpeech

    tok = word_tokenizer(WORDS, ["<pad>", "<s>", "</s>"], padding_side="right")  # as SpeechT5's tokenizer pads
    config = SpeechT5Config(
        vocab_size=len(tok),
        hidden_size=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        conv_dim=(8, 8),
        conv_stride=(5, 4),
        conv_kernel=(10, 4),
        num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2,
        speech_decoder_prenet_units=16,
        speech_decoder_postnet_units=16,
        speaker_embedding_dim=16,
        max_speech_positions=400,
        max_text_positions=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
    )
    _seed()
    asr = Path(path) / "asr"
    SpeechT5ForSpeechToText(config).save_pretrained(asr)
    SpeechT5FeatureExtractor(return_attention_mask=True).save_pretrained(asr)
    options = {"path": str(asr)}
    if text:
        tts = Path(path) / "tts"
        SpeechT5ForTextToSpeech(config).save_pretrained(tts)
        tok.save_pretrained(tts)
        options["text_path"] = str(tts)
    return options


def ast(path: Path) -> dict:
    """A random Audio Spectrogram Transformer with its feature extractor."""
    from transformers import ASTConfig, ASTFeatureExtractor, ASTModel

    _seed()
    ASTModel(ASTConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)).save_pretrained(path)
    ASTFeatureExtractor().save_pretrained(path)
    return {"path": str(path)}


def clap(path: Path, fusion: bool = False) -> dict:
    """A random CLAP (fused or unfused audio side) with a word-level tokenizer."""
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
    path = Path(path)
    ClapModel(config).save_pretrained(path)
    vocab = {
        t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", *sorted(set("abcdefghijklmnopqrstuvwxyz0123456789 Ġ"))])
    }
    (path / "merges.txt").write_text("#version: 0.2\n")
    (path / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = RobertaTokenizerFast(vocab_file=str(path / "vocab.json"), merges_file=str(path / "merges.txt"))
    extractor = ClapFeatureExtractor(truncation="fusion" if fusion else "rand_trunc")
    ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(path)
    return {"path": str(path)}


def encodec(path: Path) -> dict:
    """A random EnCodec with its feature extractor."""
    from transformers import EncodecConfig, EncodecFeatureExtractor, EncodecModel

    config = EncodecConfig(
        target_bandwidths=[1.5],
        num_filters=4,
        hidden_size=8,
        codebook_size=16,
        codebook_dim=8,
        upsampling_ratios=[8, 5, 4, 2],
        num_lstm_layers=1,
    )
    _seed()
    EncodecModel(config).save_pretrained(path)
    EncodecFeatureExtractor().save_pretrained(path)
    return {"path": str(path)}


OMNI_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|audio_bos|>",
    "<|AUDIO|>",
    "<|audio_eos|>",
    "<|vision_bos|>",
    "<|IMAGE|>",
    "<|VIDEO|>",
    "<|vision_eos|>",
]
OMNI_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}{% if c['type'] == 'audio' %}"
    "<|audio_bos|><|AUDIO|><|audio_eos|>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def omni_processor():
    """A Qwen2.5-Omni processor from its audio and text parts alone (its image and video parts
    need pillow and torchvision, which audio never reaches)."""
    from transformers import Qwen2_5OmniProcessor, WhisperFeatureExtractor

    tok = word_tokenizer(
        WORDS + ["user", "assistant", "system", "you", "are", "qwen", ","],
        OMNI_SPECIAL,
        extra_special_tokens={
            "image_token": "<|IMAGE|>",
            "audio_token": "<|AUDIO|>",
            "video_token": "<|VIDEO|>",
            "audio_bos_token": "<|audio_bos|>",
            "audio_eos_token": "<|audio_eos|>",
            "vision_bos_token": "<|vision_bos|>",
            "vision_eos_token": "<|vision_eos|>",
        },
    )
    processor = Qwen2_5OmniProcessor.__new__(Qwen2_5OmniProcessor)
    processor.tokenizer, processor.feature_extractor, processor.chat_template = (
        tok,
        WhisperFeatureExtractor(feature_size=128),
        OMNI_TEMPLATE,
    )
    processor.image_processor = processor.video_processor = None
    for name in ("image", "audio", "video"):
        setattr(processor, f"{name}_token", getattr(tok, f"{name}_token"))
        setattr(processor, f"{name}_token_id", tok.convert_tokens_to_ids(getattr(tok, f"{name}_token")))
    for name in ("vision_bos", "vision_eos", "audio_bos", "audio_eos"):
        setattr(processor, f"{name}_token", getattr(tok, f"{name}_token"))
    return processor


def qwen_omni_thinker(path: Path) -> dict:
    """A random Qwen2.5-Omni thinker with the audio-and-text processor (float32)."""
    from transformers import Qwen2_5OmniThinkerConfig, Qwen2_5OmniThinkerForConditionalGeneration

    processor = omni_processor()
    tok = processor.tokenizer
    config = Qwen2_5OmniThinkerConfig(  # type: ignore[call-arg]  # vision_start_token_id: an extra key the config keeps
        audio_config=dict(
            d_model=16,
            encoder_layers=1,
            encoder_attention_heads=2,
            encoder_ffn_dim=32,
            num_mel_bins=128,
            output_dim=16,
            n_window=50,
        ),
        vision_config=dict(
            depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=16, fullatt_block_indexes=[0]
        ),
        text_config=dict(
            vocab_size=len(tok),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]},
        ),
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"),
        image_token_index=tok.convert_tokens_to_ids("<|IMAGE|>"),
        video_token_index=tok.convert_tokens_to_ids("<|VIDEO|>"),
        audio_start_token_id=tok.convert_tokens_to_ids("<|audio_bos|>"),
        audio_end_token_id=tok.convert_tokens_to_ids("<|audio_eos|>"),
        vision_start_token_id=tok.convert_tokens_to_ids("<|vision_bos|>"),
    )
    _seed()
    Qwen2_5OmniThinkerForConditionalGeneration(config).save_pretrained(path)
    return {"path": str(path), "processor": processor, "dtype": "float32"}


# remote code for two families whose hub repos ship their model code: a tiny module written into
# the folder and named in config.json's auto_map, loaded through trust_remote_code as on the hub
_REMOTE = """
import torch
from transformers import PreTrainedModel, PretrainedConfig
from transformers.modeling_outputs import BaseModelOutputWithPooling


class TinyConfig(PretrainedConfig):
    model_type = "maeb-tiny-remote"

    def __init__(self, hidden=8, frame=160, **kwargs):
        self.hidden, self.frame = hidden, frame
        super().__init__(**kwargs)


class TinyModel(PreTrainedModel):
    config_class = TinyConfig

    def __init__(self, config):
        super().__init__(config)
        self.proj = torch.nn.Linear(config.frame, config.hidden)
        self.text = torch.nn.Embedding(64, config.hidden)
        self.post_init()

    def _frames(self, wav):
        n = max(1, wav.shape[-1] // self.config.frame)
        wav = torch.nn.functional.pad(wav, (0, n * self.config.frame - wav.shape[-1]))
        return torch.tanh(self.proj(wav.reshape(*wav.shape[:-1], n, self.config.frame)))

    def forward(self, input_values, return_dict=True):
        frames = self._frames(input_values)
        return BaseModelOutputWithPooling(last_hidden_state=frames, pooler_output=frames.mean(dim=-2))

    def embed_audio_batch(self, waveforms, sr=16000):
        return torch.stack([self._frames(torch.as_tensor(w)).mean(dim=0) for w in waveforms])

    def embed_text_batch(self, texts):
        ids = [torch.tensor([ord(c) % 64 for c in t] or [0]) for t in texts]
        return torch.stack([self.text(i).mean(dim=0) for i in ids])
"""


def remote(path: Path, hidden: int = 8) -> dict:
    """A checkpoint whose model code ships beside it (config.json's auto_map), loaded through
    trust_remote_code as on the hub."""
    import importlib.util
    import sys

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "tiny_remote.py").write_text(_REMOTE)
    spec = importlib.util.spec_from_file_location("maeb_tiny_remote", path / "tiny_remote.py")
    assert spec is not None and spec.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["maeb_tiny_remote"] = module
    spec.loader.exec_module(module)
    config = module.TinyConfig(hidden=hidden)
    config.auto_map = {"AutoConfig": "tiny_remote.TinyConfig", "AutoModel": "tiny_remote.TinyModel"}
    _seed()
    module.TinyModel(config).save_pretrained(path)
    return {"path": str(path)}


def wav2clip(path: Path, text: bool = True) -> dict:
    """A random Wav2CLIP checkpoint in the published file's layout, and a tiny CLIP text side."""
    import torch
    from wav2clip.model.encoder import MLPLayers, ResNetExtractor

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    _seed()
    encoder = ResNetExtractor(scenario="supervise").encoder
    checkpoint = {f"audio_encoder.{k}": v for k, v in encoder.state_dict().items()}
    checkpoint.update({f"audio_transform.{k}": v for k, v in MLPLayers(units=[512, 512, 512]).state_dict().items()})
    torch.save(checkpoint, path / "Wav2CLIP.pt")
    options = {"path": str(path / "Wav2CLIP.pt")}
    if text:
        from transformers import CLIPConfig, CLIPModel

        tok = word_tokenizer(WORDS, ["<|endoftext|>", "<|startoftext|>"])
        config = CLIPConfig(
            text_config=dict(
                vocab_size=len(tok),
                hidden_size=16,
                intermediate_size=32,
                num_hidden_layers=1,
                num_attention_heads=2,
                max_position_embeddings=77,
            ),
            vision_config=dict(
                hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=32, patch_size=16
            ),
            projection_dim=512,
        )
        CLIPModel(config).save_pretrained(path / "clip")
        tok.save_pretrained(path / "clip")
        options["text_path"] = str(path / "clip")
    return options


def audioset(path: Path, family: str) -> dict:
    """A state dict of the package's YAMNet or VGGish with random weights."""
    import torch

    from .install import require

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    _seed()
    if family == "yamnet":
        model = require("torch_vggish_yamnet.yamnet", family, "torch-vggish-yamnet").yamnet(pretrained=False)
    else:
        model = require("torch_vggish_yamnet.vggish", family, "torch-vggish-yamnet").get_vggish(pretrained=False)
    torch.save(model.state_dict(), path / f"{family}.pth")
    return {"path": str(path / f"{family}.pth")}


def _ssl_kind(name: str) -> str:
    lowered = name.lower()
    for kind in ("hubert", "wavlm", "data2vec", "unispeech-sat"):
        if kind in lowered:
            return kind
    return "wav2vec2"


# The tiny builders named by the family records (maeb.encoders.families): (meta, folder) -> options
def for_whisper(meta, path: Path) -> dict:
    """Whisper's tiny variant."""
    return whisper(path)


def for_ssl(meta, path: Path) -> dict:
    """The tiny variant of the self-supervised kind the entry's name says (layer norm for "large")."""
    return ssl(path, _ssl_kind(meta.name), "layer" if "large" in meta.name.lower() else "group")


def for_sew_d(meta, path: Path) -> dict:
    """SEW-D's tiny variant."""
    return ssl(path, "sew-d")


def for_mms(meta, path: Path) -> dict:
    """MMS's tiny variant."""
    return mms(path)


def for_speecht5(meta, path: Path) -> dict:
    """SpeechT5's tiny variant, with a text side where the entry has one."""
    return speecht5(path, "text" in meta.modalities)


def for_ast(meta, path: Path) -> dict:
    """AST's tiny variant."""
    return ast(path)


def for_clap(meta, path: Path) -> dict:
    """CLAP's tiny variant, fused where the entry's name says so."""
    return clap(path, "fused" in meta.name.lower())


def for_encodec(meta, path: Path) -> dict:
    """EnCodec's tiny variant."""
    return encodec(path)


def for_qwen_omni(meta, path: Path) -> dict:
    """Qwen2.5-Omni's tiny thinker."""
    return qwen_omni_thinker(path)


def for_remote(meta, path: Path) -> dict:
    """A tiny checkpoint with its model code beside it (HeAR, fusion-embedding)."""
    return remote(path)


def for_wav2clip(meta, path: Path) -> dict:
    """Wav2CLIP's tiny variant, with a text side where the entry has one."""
    return wav2clip(path, "text" in meta.modalities)


def for_yamnet(meta, path: Path) -> dict:
    """YAMNet's random state dict."""
    return audioset(path, "yamnet")


def for_vggish(meta, path: Path) -> dict:
    """VGGish's random state dict."""
    return audioset(path, "vggish")


def build(meta, folder: Path) -> dict:
    """Write a tiny random checkpoint of `meta`'s family into `folder`; the options that load it."""
    from .familyrecord import FAMILY_REGISTRY

    record = FAMILY_REGISTRY.get(meta.family)
    builder = record.tiny_builder() if record is not None else None
    if builder is None:
        known = sorted(name for name, f in FAMILY_REGISTRY.items() if f.tiny)
        raise ModelError(
            f"family {meta.family!r} has no tiny variant; tiny variants exist for {', '.join(known)}. "
            "Run check-model without --tiny where its weights can be loaded"
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return builder(meta, folder / "tiny")
