"""Random checkpoints of real size for the speed benchmarks (no hub access: built from configs).

Each folder is a complete `save_pretrained` checkpoint (model and feature extractor, and for Whisper
the processor mteb's wrapper loads), so mteb loads it through the ModelMeta of the real model copied
with `name=<folder>` and maeb through that model's registry entry with `options.path` (both done by
scripts/parity.py's helpers). Speed depends on the dimensions, not on the weights, so the
dimensions are the real models'; the weights come from `torch.manual_seed(0)`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the parity builders live in tests/parity
    sys.path.insert(0, str(ROOT))

from tests.parity import checkpoints as ckpt  # noqa: E402

BUILD_VERSION = "1"


def save_whisper_base(path: Path) -> None:
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperModel, WhisperProcessor, WhisperTokenizer

    # whisper-base: 6+6 layers of width 512; the tokenizer only has to load (the encoder never uses it)
    vocab = ckpt._bpe_vocab(["<|endoftext|>", "<|startoftranscript|>", "<|notimestamps|>"])
    (path / "vocab.json").write_text(json.dumps(vocab))
    (path / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = WhisperTokenizer(vocab_file=str(path / "vocab.json"), merges_file=str(path / "merges.txt"))
    config = WhisperConfig(
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=2048,
        decoder_ffn_dim=2048,
    )
    ckpt._seed()
    WhisperModel(config).save_pretrained(path)
    WhisperProcessor(feature_extractor=WhisperFeatureExtractor(), tokenizer=tokenizer).save_pretrained(path)


def save_ssl_base(path: Path, kind: str, norm: str) -> None:
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2Model, WavLMConfig, WavLMModel

    config_cls, model_cls = {"wav2vec2": (Wav2Vec2Config, Wav2Vec2Model), "wavlm": (WavLMConfig, WavLMModel)}[kind]
    # the configs' defaults are the base models (12 layers of width 768, stride 320)
    ckpt._seed()
    model_cls(config_cls(feat_extract_norm=norm, do_stable_layer_norm=norm == "layer")).save_pretrained(path)
    # as real checkpoints ship: group-norm base models without an attention mask, layer-norm ones with
    Wav2Vec2FeatureExtractor(return_attention_mask=norm == "layer", do_normalize=True).save_pretrained(path)


# key -> (family as scripts/parity.py uses it, builder). The padded family is WavLM at base size
# with layer norm: the arithmetic of wavlm-large (whose wrappers on both sides it borrows), a
# padded batch of 32 in mteb's call order, at a size this machine runs in minutes.
FAMILIES: dict[str, tuple[ckpt.Family, object]] = {
    "wav2vec2-base": (
        ckpt.Family("wav2vec2-base", "facebook/wav2vec2-base", "facebook/wav2vec2-base", notes="group norm, one clip a batch"),
        lambda p: save_ssl_base(p, "wav2vec2", "group"),
    ),
    "whisper-base": (
        ckpt.Family("whisper-base", "openai/whisper-base", "openai/whisper-base", notes="30 s window"),
        save_whisper_base,
    ),
    "wavlm-base-layer": (
        ckpt.Family("wavlm-base-layer", "microsoft/wavlm-large", "microsoft/wavlm-large", notes="layer norm, padded batches"),
        lambda p: save_ssl_base(p, "wavlm", "layer"),
    ),
}


def build(root: Path, keys: list[str]) -> dict[str, Path]:
    """Build (or reuse) the checkpoint folders under root; key -> folder."""
    root = Path(root)
    out = {}
    for key in keys:
        _, builder = FAMILIES[key]
        folder = root / key
        stamp = folder / ".bench-build"
        if not (stamp.exists() and stamp.read_text() == BUILD_VERSION):
            shutil.rmtree(folder, ignore_errors=True)
            tmp = root / f".{key}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            builder(tmp)
            (tmp / ".bench-build").write_text(BUILD_VERSION)
            tmp.rename(folder)
        out[key] = folder
    return out
