"""Speech encoders that are SelfSupervisedEncoder with one thing more (SEW-D's length horizon,
MMS's language adapter), and two that pool like it with other front ends (SpeechT5's encoder,
M-CTC-T). Pooling is maeb.encoders.pooling's, batching and caps come from the protocol.

As mteb 2.26.24's wrappers:
- SEW-D (sewd_models.py): the base model's last_hidden_state (what the CTC head reads; AutoModel
  on the CTC checkpoint is that base model), cut at max_position_embeddings x conv strides x
  squeeze_factor samples, one clip at a time, ratio frames, at least 720 samples.
- MMS (mms_models.py): wav2vec2 on which mteb tries to load the "eng" adapter (it never loads:
  see MMSEncoder); ratio frames, uncapped.
- SpeechT5 (speecht5_models.py): SpeechT5ForSpeechToText's encoder from microsoft/speecht5_asr,
  masked mean (ratio on samples), one clip at a time, cut at max_speech_positions x conv strides;
  the text side (speecht5_multimodal) is microsoft/speecht5_tts's text encoder, masked mean.
- M-CTC-T (mctct_model.py): MCTCTModel on filterbank frames, cut at max_position_embeddings x
  conv strides frames, padded batches, ratio frames, NaN rows to zero. Needs transformers < 5."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import ModelError
from .base import (
    SOFTWARE,
    UNSET,
    AudioEncoderBase,
    TextEncoderBase,
    as_seconds,
    dtype_name,
    import_torch,
    model_source,
    pick,
    protocol_rules,
    torch_dtype,
)
from .hf import SelfSupervisedEncoder
from .pooling import frame_counts, masked_mean


def _stride(config) -> int:
    return int(math.prod(config.conv_stride))


class SEWDEncoder(SelfSupervisedEncoder):
    """SEW-D: SelfSupervisedEncoder cut at the checkpoint's position horizon, one clip at a time."""

    family = "hf-sew-d"
    defaults = {
        "max_seconds": "position-horizon",
        "dtype": "auto",
        "batching": "single",
        "frames": "ratio",
        "layer": "last_hidden_state",
        "min_samples": 720,
    }

    def _cap(self, value) -> float | None:
        self.cap_rule = "position-horizon" if value == "position-horizon" else "seconds"
        if value != "position-horizon":
            return as_seconds(value)
        config = self.model.config  # the relative-position horizon, as mteb caps SEW-D
        return config.max_position_embeddings * _stride(config) * config.squeeze_factor / self.sample_rate

    def config(self):
        return {**super().config(), "cap_rule": self.cap_rule}


class MMSEncoder(SelfSupervisedEncoder):
    """mteb calls load_adapter(target_lang) on the bare Wav2Vec2Model and goes on when it fails,
    which it does for every MMS checkpoint (fl102 and l1107 have no adapters; on mms-1b-all the
    bare model has no target_lang attribute), so mteb's MMS vectors come from the checkpoint's
    own adapter weights. maeb does the same and records the outcome in config(); with
    force_adapter=True it loads the adapter for real (other vectors, recorded)."""

    family = "hf-mms"
    defaults = {"max_seconds": None, "dtype": "auto", "batching": "by-norm", "frames": "ratio", "min_samples": 0}

    def __init__(self, meta, device="cpu", target_lang="eng", force_adapter=False, protocol=None, **options):
        super().__init__(meta, device=device, protocol=protocol, **options)
        path = options.get("path")
        self.target_lang, self.force_adapter = target_lang, bool(force_adapter)
        source, revision = model_source(meta, path)
        if self.force_adapter:
            self._load_adapter(meta, source, revision, target_lang)
            self.adapter = target_lang
        else:
            try:  # mteb's call, on the bare model
                self.model.load_adapter(target_lang)
                self.adapter = target_lang
            except Exception as exc:
                self.adapter = f"not loaded ({type(exc).__name__}), as in mteb"
        self.model.eval()

    def _load_adapter(self, meta, source, revision, lang):
        """The adapter file of Wav2Vec2ForCTC (keys under wav2vec2., plus its lm_head) on the bare model."""
        from safetensors.torch import load_file
        from transformers.utils import cached_file

        try:
            found = cached_file(source, f"adapter.{lang}.safetensors", revision=revision)
            if found is None:  # transformers said "no such file" without raising
                raise OSError(f"no adapter.{lang}.safetensors in {source}")
            weights = load_file(found)
        except OSError as exc:
            raise ModelError(f"model {meta.name!r}: its {lang!r} adapter could not be loaded ({exc})") from exc
        state = {k.removeprefix("wav2vec2."): v for k, v in weights.items() if not k.startswith("lm_head.")}
        result = self.model.load_state_dict(state, strict=False)
        if result.unexpected_keys or not state:
            raise ModelError(f"model {meta.name!r}: adapter {lang!r} does not fit the model ({result.unexpected_keys[:3]})")

    def config(self):
        return {**super().config(), "target_lang": self.target_lang, "force_adapter": self.force_adapter, "adapter": self.adapter}


class SpeechT5Encoder(AudioEncoderBase, TextEncoderBase):
    """microsoft/speecht5_asr's speech encoder; with a text side (speecht5_multimodal), the
    text encoder of microsoft/speecht5_tts. Revisions "ASR-TTS" pin both."""

    software = SOFTWARE
    ASR, TTS = "microsoft/speecht5_asr", "microsoft/speecht5_tts"

    def __init__(
        self,
        meta,
        device="cpu",
        path=None,
        text_path=None,
        max_seconds=UNSET,
        batching=UNSET,
        min_samples=UNSET,
        dtype=UNSET,
        protocol=None,
    ):
        from transformers import AutoFeatureExtractor, SpeechT5ForSpeechToText

        rules = protocol_rules(protocol, "hf-speecht5")
        asr_rev, _, tts_rev = str(meta.revision).partition("-")
        revision: Any  # None for a local folder (see base.model_source)
        source, revision = (path, None) if path else (self.ASR, asr_rev)
        weights_dtype = torch_dtype(pick(dtype, rules, "dtype", "auto"))
        # what SpeechT5Processor(audio=...) and (text=...) delegate to
        self.extractor = AutoFeatureExtractor.from_pretrained(source, revision=revision)
        model = SpeechT5ForSpeechToText.from_pretrained(source, revision=revision, dtype=weights_dtype)
        self.encoder = model.speecht5.encoder.to(device).eval()
        self.sample_rate = self.extractor.sampling_rate
        cap = pick(max_seconds, rules, "max_seconds", "position-horizon")
        self.cap_rule = "position-horizon" if cap == "position-horizon" else "seconds"
        if cap == "position-horizon":  # the sinusoidal position table's size, mteb's cap
            cap = model.config.max_speech_positions * _stride(model.config) / self.sample_rate
        self.max_seconds = as_seconds(cap)
        del model
        self.min_samples = int(pick(min_samples, rules, "min_samples", 400))  # the conv prenet's window
        mode = pick(batching, rules, "batching", "single")
        self.batching = "same_length" if mode == "single" else mode
        self.text_model: Any = None  # the TTS model's text encoder, for entries that declare text
        self.tokenizer: Any = None
        if "text" in meta.modalities:
            from transformers import AutoTokenizer, SpeechT5ForTextToSpeech

            trev: Any  # None for a local folder (see base.model_source)
            tsource, trev = (text_path, None) if text_path else (self.TTS, tts_rev or asr_rev)
            self.tokenizer = AutoTokenizer.from_pretrained(tsource, revision=trev)  # SpeechT5's needs sentencepiece
            tts = SpeechT5ForTextToSpeech.from_pretrained(tsource, revision=trev, dtype=weights_dtype)
            self.text_model = tts.speecht5.encoder.to(device).eval()
        else:
            # an audio-only entry (speecht5_asr) has no text side: has_text() reads a callable embed_text
            setattr(self, "embed_text", None)  # noqa: B010  (mypy refuses assigning to a method)
        self.device, self.dtype = device, dtype_name(self.encoder)

    def config(self):
        return {
            "pooling": "masked-mean-last-layer",
            "frames": "ratio",
            "cap_rule": self.cap_rule,
            "max_seconds": self.max_seconds,
            "min_samples": self.min_samples,
            "batching": self.batching,
            "text": "speecht5_tts-encoder-masked-mean" if self.text_model is not None else None,
            "dtype": self.dtype,
        }

    def embed_audio(self, clips):
        torch = import_torch()
        feats = self.extractor(
            audio=list(clips),
            sampling_rate=self.sample_rate,
            return_tensors="pt",
            padding="longest",
            return_attention_mask=True,
        )
        with torch.inference_mode():
            values = feats.input_values.to(self.device, dtype=self.encoder.dtype)
            hidden = self.encoder(input_values=values, attention_mask=feats.attention_mask.to(self.device)).last_hidden_state
        lengths = frame_counts("ratio", feats.attention_mask.sum(dim=1), values.shape[1], hidden.shape[1])
        return masked_mean(hidden, lengths)

    def embed_text(self, texts):
        if self.text_model is None:
            raise ModelError("this SpeechT5 entry has no text side (use microsoft/speecht5_multimodal)")
        torch = import_torch()
        tok = self.tokenizer(list(texts), return_tensors="pt", padding="longest", truncation=True)
        with torch.inference_mode():
            hidden = self.text_model(
                input_values=tok["input_ids"].to(self.device), attention_mask=tok["attention_mask"].to(self.device)
            ).last_hidden_state
        mask = tok["attention_mask"].to(hidden.device).unsqueeze(-1).to(hidden.dtype)  # either padding side
        return ((hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)).float().cpu().numpy()


class MCTCTEncoder(AudioEncoderBase):
    """M-CTC-T (speechbrain/m-ctc-t-large): transformers removed the model in 5.0, so this family
    needs transformers < 5 (`pip install 'maeb[mctct]'` in an environment of its own)."""

    batching = "padded"
    min_samples = 0
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, protocol=None):
        try:
            from transformers import MCTCTFeatureExtractor, MCTCTModel  # type: ignore[attr-defined]  # gone in transformers 5
        except ImportError as exc:
            import transformers

            raise ModelError(
                f"model {meta.name!r}: M-CTC-T is not in transformers {transformers.__version__} (removed in 5.0); "
                "run it where transformers < 5 is installed (`pip install 'maeb[mctct]'`)"
            ) from exc
        rules = protocol_rules(protocol, "hf-mctct")
        source, revision = model_source(meta, path)
        self.model = MCTCTModel.from_pretrained(source, revision=revision).to(device).eval()
        self.extractor = MCTCTFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        cap = pick(max_seconds, rules, "max_seconds", "position-horizon")
        if cap == "position-horizon":  # filterbank frames of hop_length ms
            frames = self.model.config.max_position_embeddings * _stride(self.model.config)
        else:
            frames = int(float(cap) * 1000 / self.extractor.hop_length)
        self.max_frames = frames
        # frames of hop_length ms after a win_length ms window: cutting the waveform there first
        # gives the same features
        self.max_seconds = (frames * self.extractor.hop_length + self.extractor.win_length) / 1000.0
        self.device = device

    def config(self):
        return {"pooling": "masked-mean-last-layer", "frames": "ratio", "max_frames": self.max_frames, "nan": "zero"}

    def embed_audio(self, clips):
        torch = import_torch()
        feats = self.extractor(
            list(clips),
            sampling_rate=self.sample_rate,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_frames,
        )
        with torch.inference_mode():
            hidden = self.model(
                input_features=feats.input_features.to(self.device), attention_mask=feats.attention_mask.to(self.device)
            ).last_hidden_state
        mask = feats.attention_mask
        out = masked_mean(hidden, frame_counts("ratio", mask.sum(dim=1), mask.shape[1], hidden.shape[1]))
        return np.nan_to_num(out, nan=0.0)
