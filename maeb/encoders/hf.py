"""transformers families, pooled the way mteb's wrappers pool them so scores are comparable.

Whisper: encoder last layer, mean over frames that hold audio, input padded to 30 s.
wav2vec2 / HuBERT / WavLM / data2vec: mean of the last layer under the attention mask.
AST: pooler output (about 10 s). CLAP: projected features, L2-normalised, 48 kHz."""

from __future__ import annotations

import contextlib

import numpy as np

from .pooling import masked_mean


def _torch():
    import torch

    return torch


def _source(meta, path):
    """Hub id at the pinned revision, or a local folder (then the revision does not apply)."""
    return (path, None) if path else (meta.name, meta.revision)


def _dtype(name: str):
    torch = _torch()
    try:
        return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]
    except KeyError:
        raise ValueError(f"dtype must be float32, bfloat16 or float16, not {name!r}") from None


class WhisperEncoder:
    batching = "padded"  # every clip is padded to the 30 s window, so batch-mates do not matter
    min_samples = 0

    def __init__(self, meta, device="cpu", path=None, max_seconds=30.0, dtype="float32"):
        from transformers import WhisperFeatureExtractor, WhisperModel

        source, revision = _source(meta, path)
        model = WhisperModel.from_pretrained(source, revision=revision, dtype=_dtype(dtype))
        self.encoder = model.get_encoder().to(device).eval()
        del model
        self.extractor = WhisperFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        self.max_seconds = min(float(max_seconds), self.extractor.chunk_length)
        self.device, self.dtype = device, dtype

    def config(self):
        return {"pooling": "masked-mean-last-layer", "window": "30s", "max_seconds": self.max_seconds, "dtype": self.dtype}

    def embed_audio(self, clips):
        torch = _torch()
        feats = self.extractor(
            clips,
            sampling_rate=self.sample_rate,
            return_tensors="pt",
            padding="max_length",
            truncation=True,
            max_length=int(self.extractor.chunk_length * self.sample_rate),
            return_attention_mask=True,
        )
        with torch.inference_mode():
            x = feats.input_features.to(self.device, dtype=self.encoder.dtype)
            hidden = self.encoder(x, output_hidden_states=True).hidden_states[-1]
        ratio = feats.attention_mask.shape[1] / hidden.shape[1]
        lengths = (feats.attention_mask.sum(dim=1).float() / ratio).long()
        return masked_mean(hidden, lengths)


class SelfSupervisedEncoder:
    """wav2vec2, HuBERT, WavLM, data2vec-audio and other CTC-style encoders (AutoModel)."""

    min_samples = 400  # the convolutional front end needs one 25 ms window

    def __init__(self, meta, device="cpu", path=None, max_seconds=30.0, dtype="float32"):
        from transformers import AutoConfig, AutoFeatureExtractor, AutoModel

        source, revision = _source(meta, path)
        config = AutoConfig.from_pretrained(source, revision=revision)
        if config.model_type == "speech-encoder-decoder":
            from transformers import SpeechEncoderDecoderModel

            model = SpeechEncoderDecoderModel.from_pretrained(source, revision=revision, dtype=_dtype(dtype)).encoder
        else:
            model = AutoModel.from_pretrained(source, revision=revision, dtype=_dtype(dtype))
        self.model = model.to(device).eval()
        self.extractor = AutoFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        self.max_seconds = None if max_seconds is None else float(max_seconds)
        # group-norm front ends normalise over the padded input, so padding changes the vectors:
        # only clips of identical length may share a batch (mteb runs them one at a time)
        norm = getattr(self.model.config, "feat_extract_norm", "layer")
        self.batching = "same_length" if norm == "group" else "padded"
        self.device, self.dtype = device, dtype

    def config(self):
        return {"pooling": "masked-mean-last-layer", "max_seconds": self.max_seconds, "dtype": self.dtype}

    def embed_audio(self, clips):
        torch = _torch()
        feats = self.extractor(
            clips, sampling_rate=self.sample_rate, return_tensors="pt", padding="longest", return_attention_mask=True
        )
        with torch.inference_mode():
            values = feats.input_values.to(self.device, dtype=self.model.dtype)
            mask = feats.attention_mask.to(self.device)
            hidden = self.model(values, attention_mask=mask).last_hidden_state
        lengths = self.model._get_feat_extract_output_lengths(feats.attention_mask.sum(dim=1))
        return masked_mean(hidden, lengths)


class ASTEncoder:
    batching = "padded"  # the extractor pads every clip to 1024 frames
    min_samples = 401  # one 400-sample FFT window

    def __init__(self, meta, device="cpu", path=None, dtype="float32"):
        from transformers import ASTFeatureExtractor, ASTModel

        source, revision = _source(meta, path)
        self.model = ASTModel.from_pretrained(source, revision=revision, dtype=_dtype(dtype)).to(device).eval()
        self.extractor = ASTFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        # the extractor keeps max_length frames of 10 ms after a 25 ms window; cutting there first
        # gives identical features and saves resampling the rest of long clips
        self.max_seconds = round((self.extractor.max_length * 160 + 400) / 16000, 3)
        self.device, self.dtype = device, dtype

    def config(self):
        return {"pooling": "pooler", "max_frames": self.extractor.max_length, "dtype": self.dtype}

    def embed_audio(self, clips):
        torch = _torch()
        feats = self.extractor(clips, sampling_rate=self.sample_rate, return_tensors="pt")
        with torch.inference_mode():
            values = feats.input_values.to(self.device, dtype=self.model.dtype)
            out = self.model(input_values=values).pooler_output
        return out.float().cpu().numpy()


@contextlib.contextmanager
def _numpy_seed(seed: int = 0):
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


class ClapEncoder:
    batching = "padded"  # each clip is featurised alone to the fixed window
    min_samples = 0

    def __init__(self, meta, device="cpu", path=None, dtype="float32"):
        from transformers import ClapModel, ClapProcessor

        source, revision = _source(meta, path)
        self.model = ClapModel.from_pretrained(source, revision=revision, dtype=_dtype(dtype)).to(device).eval()
        self.processor = ClapProcessor.from_pretrained(source, revision=revision)
        fe = self.processor.feature_extractor
        self.sample_rate = fe.sampling_rate
        self.fusion = fe.truncation == "fusion"
        # rand_trunc would crop a random window of longer clips; cutting at the window keeps the
        # deterministic repeat-pad branch. Fusion is the checkpoint's own long-audio path.
        self.max_seconds = None if self.fusion else fe.nb_max_samples / fe.sampling_rate
        self.device, self.dtype = device, dtype

    def config(self):
        return {"pooling": "projection-l2", "fusion": self.fusion, "max_seconds": self.max_seconds, "int16": True}

    def embed_audio(self, clips):
        torch = _torch()
        fe = self.processor.feature_extractor
        parts = []
        for clip in clips:
            # laion_clap rounds every clip to 16 bit in training and inference
            clip = (np.clip(clip, -1.0, 1.0) * 32767.0).astype(np.int16) / np.float32(32767.0)
            with _numpy_seed(0):
                feats = fe(clip, sampling_rate=self.sample_rate, return_tensors="pt")
            if self.fusion:
                feats["is_longer"][:] = len(clip) > fe.nb_max_samples
            parts.append(feats)
        batch = {k: torch.cat([p[k] for p in parts]).to(self.device) for k in parts[0]}
        batch["input_features"] = batch["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            out = self.model.get_audio_features(**batch)
        return _unit(out)

    def embed_text(self, texts):
        torch = _torch()
        tok = self.processor.tokenizer(list(texts), padding=True, truncation=True, max_length=77, return_tensors="pt")
        with torch.inference_mode():
            out = self.model.get_text_features(**{k: v.to(self.device) for k, v in tok.items()})
        return _unit(out)


def _unit(out) -> np.ndarray:
    vectors = getattr(out, "pooler_output", out)
    vectors = vectors.float()
    return (vectors / vectors.norm(dim=-1, keepdim=True)).cpu().numpy()


class SeamlessEncoder:
    """SeamlessM4T v2 speech encoder: masked mean of its last layer (as mteb pools it), 60 s cap."""

    batching = "padded"
    min_samples = 400

    def __init__(self, meta, device="cpu", path=None, max_seconds=60.0, dtype="float32"):
        from transformers import AutoFeatureExtractor, SeamlessM4Tv2Model

        source, revision = _source(meta, path)
        model = SeamlessM4Tv2Model.from_pretrained(source, revision=revision, dtype=_dtype(dtype))
        self.encoder = model.speech_encoder.to(device).eval()
        del model
        self.extractor = AutoFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        self.max_seconds = float(max_seconds)
        self.device, self.dtype = device, dtype

    def config(self):
        return {"pooling": "masked-mean-last-layer", "max_seconds": self.max_seconds, "dtype": self.dtype}

    def embed_audio(self, clips):
        torch = _torch()
        feats = self.extractor(clips, sampling_rate=self.sample_rate, return_tensors="pt", padding=True)
        with torch.inference_mode():
            x = feats.input_features.to(self.device, dtype=self.encoder.dtype)
            mask = feats.attention_mask.to(self.device)
            hidden = self.encoder(x, attention_mask=mask).last_hidden_state
        ratio = feats.attention_mask.shape[1] / hidden.shape[1]
        lengths = (feats.attention_mask.sum(dim=1).float() / ratio).long()
        return masked_mean(hidden, lengths)


class EncodecEncoder:
    """EnCodec's encoder latents, mean over time, L2-normalised; one clip per forward pass because
    padding would enter the time mean (as mteb runs it)."""

    batching = "single"

    def __init__(self, meta, device="cpu", path=None, max_seconds=30.0):
        import numpy
        from transformers import AutoFeatureExtractor, EncodecModel

        source, revision = _source(meta, path)
        self.model = EncodecModel.from_pretrained(source, revision=revision).to(device).eval()
        self.extractor = AutoFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        self.min_samples = int(numpy.prod(self.model.config.upsampling_ratios))  # one latent frame
        self.max_seconds = None if max_seconds is None else float(max_seconds)
        self.device = device

    def config(self):
        return {"pooling": "mean-latent-l2", "max_seconds": self.max_seconds}

    def embed_audio(self, clips):
        torch = _torch()
        out = []
        with torch.inference_mode():
            for clip in clips:
                values = self.extractor(raw_audio=[clip], sampling_rate=self.sample_rate, return_tensors="pt")["input_values"]
                values = values.unsqueeze(1) if values.dim() == 2 else values
                latent = self.model.encoder(values.to(self.device)).mean(dim=2)
                out.append(_unit(latent)[0])
        return np.stack(out)
