"""transformers families, pooled the way mteb's wrappers pool them so scores are comparable.

Whisper: encoder last layer, mean over frames that hold audio, input padded to 30 s.
wav2vec2 / HuBERT / WavLM / data2vec: mean of the last layer under the attention mask.
AST: pooler output (about 10 s). CLAP: projected features, L2-normalised, 48 kHz.
Length caps, batching, frame counting, layer and dtype come from the protocol (maeb.encoders.protocols);
an explicit option overrides the protocol and is recorded as such."""

from __future__ import annotations

import contextlib

import numpy as np

from .base import (
    SOFTWARE,
    UNSET,
    AudioEncoderBase,
    TextEncoderBase,
    as_seconds,
    batch_order,
    dtype_name,
    import_torch,
    model_source,
    pick,
    protocol_rules,
    to_device,
    torch_dtype,
)
from .pooling import frame_centres, frame_counts, frame_list, masked_mean


class WhisperEncoder(AudioEncoderBase):
    """Whisper's encoder: mean of the last layer over the frames that hold audio, clips padded to 30 s."""

    batching = "padded"  # every clip is padded to the 30 s window, so batch-mates do not matter
    min_samples = 0
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, dtype=UNSET, protocol=None):
        from transformers import WhisperFeatureExtractor, WhisperModel

        rules = protocol_rules(protocol, "hf-whisper")
        source, revision = model_source(meta, path)
        model = WhisperModel.from_pretrained(source, revision=revision, dtype=torch_dtype(pick(dtype, rules, "dtype", "float32")))
        self.encoder = model.get_encoder().to(device).eval()
        del model
        self.extractor = WhisperFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        self.max_seconds = min(float(pick(max_seconds, rules, "max_seconds", 30.0)), self.extractor.chunk_length)
        self.padded_seconds = self.max_seconds  # every clip is padded to the window: what it costs in a batch
        self.device, self.dtype = device, dtype_name(self.encoder)

    def config(self):
        return {
            "pooling": "masked-mean-last-layer",
            "frames": "ratio",
            "window": "30s",
            "max_seconds": self.max_seconds,
            "dtype": self.dtype,
        }

    def _encode(self, clips):
        """The last layer's frames of the padded window, and how many of them hold audio."""
        states, lengths = self._states(clips)
        return states[-1], lengths

    def _states(self, clips):
        """Every hidden state of the encoder on the padded window (index 0: the convolutions'
        output with positions, before the first transformer layer), and how many frames hold audio."""
        torch = import_torch()
        feats = self.extractor(
            clips,
            sampling_rate=self.sample_rate,
            return_tensors="pt",
            padding="max_length",
            truncation=True,
            max_length=int(self.max_seconds * self.sample_rate),
            return_attention_mask=True,
        )
        with torch.inference_mode():
            x = to_device(feats.input_features, self.device, self.encoder.dtype)
            states = self.encoder(x, output_hidden_states=True).hidden_states
        mask = feats.attention_mask
        return states, frame_counts("ratio", mask.sum(dim=1), mask.shape[1], states[-1].shape[1])

    def embed_audio(self, clips):
        return masked_mean(*self._encode(clips))

    def layer_count(self) -> int:
        """How many hidden states embed_layers returns (the transformer layers and the input to the first)."""
        return int(self.encoder.config.encoder_layers) + 1

    def embed_layers(self, clips) -> list[np.ndarray]:
        """Each hidden state pooled as embed_audio pools the last (mean over the frames that hold
        audio), from one forward pass; the last entry is embed_audio's vectors."""
        states, lengths = self._states(clips)
        return [masked_mean(h, lengths) for h in states]

    def embed_frames(self, clips):
        """The last layer's frames that hold audio (those pooled by embed_audio, not the 30 s
        window's padding), 20 ms apart: log-mel frame j is centred on sample j * hop (a centred
        STFT) and the two convolutions (kernel 3, padding 1, strides 1 and 2) centre encoder
        frame k on log-mel frame 2k, at 2k * hop / sample_rate seconds."""
        hidden, lengths = self._encode(clips)
        convs = [(c.kernel_size[0], c.stride[0], c.padding[0]) for c in (self.encoder.conv1, self.encoder.conv2)]
        times = frame_centres(hidden.shape[1], convs, 0.0, self.extractor.hop_length) / self.sample_rate
        return frame_list(hidden, lengths.tolist(), times)


class SelfSupervisedEncoder(AudioEncoderBase):
    """wav2vec2, HuBERT, WavLM, data2vec-audio, UniSpeech-SAT and other CTC-style encoders (AutoModel).

    A variant (SEW-D, MMS) is a subclass that names its protocol family and its own defaults."""

    software = SOFTWARE
    family = "hf-ssl"  # whose rules the protocol gives (by transformers model_type within it)
    defaults = {"max_seconds": 30.0, "dtype": "float32", "min_samples": 400, "frames": "conv", "layer": "last_hidden_state"}

    def __init__(
        self,
        meta,
        device="cpu",
        path=None,
        max_seconds=UNSET,
        dtype=UNSET,
        batching=UNSET,
        frames=UNSET,
        layer=UNSET,
        min_samples=UNSET,
        protocol=None,
    ):
        from transformers import AutoConfig, AutoFeatureExtractor, AutoModel

        source, revision = model_source(meta, path)
        config = AutoConfig.from_pretrained(source, revision=revision)
        self.arch = config.model_type
        rules = {
            **self.defaults,
            **protocol_rules(protocol, self.family, "wav2vec2" if self.arch == "speech-encoder-decoder" else self.arch),
        }
        weights_dtype = torch_dtype(pick(dtype, rules, "dtype", "float32"))
        if config.model_type == "speech-encoder-decoder":
            from transformers import SpeechEncoderDecoderModel

            model = SpeechEncoderDecoderModel.from_pretrained(source, revision=revision, dtype=weights_dtype).encoder
        else:
            model = AutoModel.from_pretrained(source, revision=revision, dtype=weights_dtype)
        self.model = model.to(device).eval()
        self.extractor = AutoFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        self.max_seconds = self._cap(pick(max_seconds, rules, "max_seconds", 30.0))
        self.min_samples = int(pick(min_samples, rules, "min_samples", 400))  # one 25 ms window of the conv front end
        self.frames = pick(frames, rules, "frames", "conv")
        self.layer = pick(layer, rules, "layer", "last_hidden_state")
        if self.layer not in ("last_hidden_state", "hidden_states[-1]"):
            raise ValueError(f"layer must be 'last_hidden_state' or 'hidden_states[-1]', not {self.layer!r}")
        mode = pick(batching, rules, "batching", "by-norm")
        if mode == "by-norm":
            # group-norm front ends normalise over the padded input, so padding changes the vectors;
            # mteb runs them one clip at a time. data2vec configs have no feat_extract_norm.
            mode = "padded" if getattr(self.model.config, "feat_extract_norm", None) == "layer" else "single"
        # "single" means no padding: clips of identical length may still share a batch (same arithmetic)
        self.batching = "same_length" if mode == "single" else mode
        self.batch_order = batch_order(rules, self.batching)
        self.device, self.dtype = device, dtype_name(self.model)

    def _cap(self, value) -> float | None:
        """Seconds from the rule's value (a variant may name a cap it computes from its config)."""
        return as_seconds(value)

    def config(self):
        return {
            "pooling": "masked-mean",
            "layer": self.layer,
            "frames": self.frames,
            "batching": self.batching,
            "batch_order": self.batch_order,
            "max_seconds": self.max_seconds,
            "min_samples": self.min_samples,
            "dtype": self.dtype,
        }

    def _encode(self, clips):
        """The chosen layer's frames of the padded batch, each clip's sample count and the padded length."""
        states, samples, padded = self._states(clips, all_layers=False)
        return states[-1], samples, padded

    def _states(self, clips, all_layers: bool):
        """The model's hidden states on the padded batch (all of them, or only the chosen layer as
        the last entry), each clip's sample count and the padded length. With all layers the last
        entry is still the chosen layer (last_hidden_state by default), so a sweep's last layer is
        exactly embed_audio's vector."""
        torch = import_torch()
        feats = self.extractor(
            clips, sampling_rate=self.sample_rate, return_tensors="pt", padding="longest", return_attention_mask=True
        )
        with torch.inference_mode():
            values = to_device(feats.input_values, self.device, self.model.dtype)
            mask = to_device(feats.attention_mask, self.device)
            wanted = all_layers or self.layer != "last_hidden_state"
            out = self.model(values, attention_mask=mask, output_hidden_states=wanted)
            last = out.last_hidden_state if self.layer == "last_hidden_state" else out.hidden_states[-1]
            states = [*out.hidden_states[:-1], last] if all_layers else [last]
        return states, feats.attention_mask.sum(dim=1), values.shape[1]

    def embed_audio(self, clips):
        hidden, samples, padded = self._encode(clips)
        lengths = frame_counts(self.frames, samples, padded, hidden.shape[1], self.model)
        return masked_mean(hidden, lengths)

    def layer_count(self) -> int:
        """How many hidden states embed_layers returns (the transformer layers and the input to the first)."""
        return int(self.model.config.num_hidden_layers) + 1

    def embed_layers(self, clips) -> list[np.ndarray]:
        """Each hidden state pooled as embed_audio pools the chosen layer (the same frame count),
        from one forward pass; the last entry is embed_audio's vectors. A variant whose hidden
        states run at another frame rate than its output (SEW-D squeezes them) is refused."""
        states, samples, padded = self._states(clips, all_layers=True)
        frames = states[-1].shape[1]
        if any(h.shape[1] != frames for h in states):
            raise ValueError(f"{type(self).__name__}: hidden states at another frame rate than the output; no layer sweep")
        lengths = frame_counts(self.frames, samples, padded, frames, self.model)
        return [masked_mean(h, lengths) for h in states]

    def embed_frames(self, clips):
        """The chosen layer's frames that hold audio (the convolution arithmetic's count, whatever
        the pooling rule), 20 ms apart for the usual front end: frame k is centred on its receptive
        window in the samples, from the feature encoder's kernels and strides (no padding) and
        any adapter layers after it."""
        hidden, samples, _ = self._encode(clips)
        lengths = frame_counts("conv", samples, 0, hidden.shape[1], self.model)
        times = frame_centres(hidden.shape[1], self._conv_layers()) / self.sample_rate
        return frame_list(hidden, lengths.tolist(), times)

    def _conv_layers(self) -> list[tuple[int, int, int]]:
        """(kernel, stride, padding) of each convolution between the samples and the output frames."""
        config = self.model.config
        layers = [(int(k), int(s), 0) for k, s in zip(config.conv_kernel, config.conv_stride)]
        if getattr(config, "add_adapter", False):  # wav2vec2's downsampling adapter (padding 1)
            layers += [(int(config.adapter_kernel_size), int(config.adapter_stride), 1)] * int(config.num_adapter_layers)
        return layers


class ASTEncoder(AudioEncoderBase):
    """Audio Spectrogram Transformer: the pooler output of a clip's fixed window (about 10 s)."""

    batching = "padded"  # the extractor pads every clip to 1024 frames
    min_samples = 401  # one 400-sample FFT window
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, dtype=UNSET, protocol=None):
        from transformers import ASTFeatureExtractor, ASTModel

        rules = protocol_rules(protocol, "hf-ast")
        source, revision = model_source(meta, path)
        weights_dtype = torch_dtype(pick(dtype, rules, "dtype", "float32"))
        self.model = ASTModel.from_pretrained(source, revision=revision, dtype=weights_dtype).to(device).eval()
        self.extractor = ASTFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        # the extractor keeps max_length frames of 10 ms after a 25 ms window; cutting there first
        # gives identical features and saves resampling the rest of long clips
        self.max_seconds = round((self.extractor.max_length * 160 + 400) / 16000, 3)
        self.padded_seconds = self.max_seconds  # the extractor pads every clip to max_length frames
        self.device, self.dtype = device, dtype_name(self.model)

    def config(self):
        return {"pooling": "pooler", "max_frames": self.extractor.max_length, "features": "kaldi-fbank", "dtype": self.dtype}

    def embed_audio(self, clips):
        from ..audio.fbank import ast_features

        torch = import_torch()
        # the extractor's torchaudio branch (mteb's environment has torchaudio; its numpy fallback
        # differs by up to 2e-3), computed by maeb.audio.fbank
        values = ast_features(clips, self.extractor)
        with torch.inference_mode():
            values = to_device(values, self.device, self.model.dtype)
            out = self.model(input_values=values).pooler_output
        return out.float().cpu().numpy()

    def layer_count(self) -> int:
        """How many hidden states embed_layers returns (the transformer layers and the input to the first)."""
        return int(self.model.config.num_hidden_layers) + 1

    def embed_layers(self, clips) -> list[np.ndarray]:
        """Each hidden state pooled as the pooler pools the last: the model's final layer norm,
        then the mean of the two class tokens, from one forward pass; the last entry is
        embed_audio's vectors."""
        from ..audio.fbank import ast_features

        torch = import_torch()
        values = ast_features(clips, self.extractor)
        with torch.inference_mode():
            values = to_device(values, self.device, self.model.dtype)
            states = self.model(input_values=values, output_hidden_states=True).hidden_states
            normed = [self.model.layernorm(h) for h in states]
            pooled = [((h[:, 0] + h[:, 1]) / 2).float().cpu().numpy() for h in normed]
        return pooled


def clap_features(fe, clips, rate: int, fusion: bool) -> list:
    """CLAP's feature extractor on each clip as laion_clap prepares it: rounded to 16 bit (as in its
    training and inference), crops seeded, the fused model's is_longer flag set per clip."""
    parts = []
    for clip in clips:
        clip = (np.clip(clip, -1.0, 1.0) * 32767.0).astype(np.int16) / np.float32(32767.0)
        with _numpy_seed(0):
            feats = fe(clip, sampling_rate=rate, return_tensors="pt")
        if fusion:
            feats["is_longer"][:] = len(clip) > fe.nb_max_samples
        parts.append(feats)
    return parts


@contextlib.contextmanager
def _numpy_seed(seed: int = 0):
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


class ClapEncoder(AudioEncoderBase, TextEncoderBase):
    """transformers CLAP: projected audio and text features, L2-normalised, at the extractor's rate (48 kHz)."""

    batching = "padded"  # each clip is featurised alone to the fixed window
    min_samples = 0
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, dtype=UNSET, protocol=None):
        from transformers import ClapModel, ClapProcessor

        rules = protocol_rules(protocol, "hf-clap")
        source, revision = model_source(meta, path)
        weights_dtype = torch_dtype(pick(dtype, rules, "dtype", "float32"))
        self.model = ClapModel.from_pretrained(source, revision=revision, dtype=weights_dtype).to(device).eval()
        self.processor = ClapProcessor.from_pretrained(source, revision=revision)
        fe = self.processor.feature_extractor
        self.sample_rate = fe.sampling_rate
        self.fusion = fe.truncation == "fusion"
        # rand_trunc would crop a random window of longer clips; cutting at the window keeps the
        # deterministic repeat-pad branch. Fusion is the checkpoint's own long-audio path.
        self.max_seconds = None if self.fusion else fe.nb_max_samples / fe.sampling_rate
        self.padded_seconds = fe.nb_max_samples / fe.sampling_rate  # each clip becomes one fixed window
        self.device, self.dtype = device, dtype_name(self.model)

    def config(self):
        return {
            "pooling": "projection-l2",
            "fusion": self.fusion,
            "max_seconds": self.max_seconds,
            "int16": True,
            "text_max_tokens": 77,
            "dtype": self.dtype,
        }

    def embed_audio(self, clips):
        torch = import_torch()
        parts = clap_features(self.processor.feature_extractor, clips, self.sample_rate, self.fusion)
        batch = {k: to_device(torch.cat([p[k] for p in parts]), self.device) for k in parts[0]}
        batch["input_features"] = batch["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            out = self.model.get_audio_features(**batch)
        return _unit(out)

    def layer_count(self) -> int:
        """How many vectors embed_layers returns: the patch embedding's and each Swin stage's output."""
        return len(self.model.config.audio_config.depths) + 1

    def embed_layers(self, clips) -> list[np.ndarray]:
        """The audio tower's hidden states from one forward pass: the patch embedding's and each
        stage's output but the last, each the mean over its time-frequency grid, L2-normalised (the
        stages differ in width, so neither the final norm nor the projection applies to them); the
        last entry is embed_audio's projected vectors."""
        torch = import_torch()
        parts = clap_features(self.processor.feature_extractor, clips, self.sample_rate, self.fusion)
        batch = {k: to_device(torch.cat([p[k] for p in parts]), self.device) for k in parts[0]}
        batch["input_features"] = batch["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            out = self.model.audio_model(**batch, output_hidden_states=True)
            # as get_audio_features: the projection, normalised (embed_audio's _unit normalises again)
            projected = torch.nn.functional.normalize(self.model.audio_projection(out.pooler_output), dim=-1)
            stages = [h.flatten(2).mean(dim=2) for h in out.hidden_states[:-1]]
        return [_unit(h) for h in stages] + [_unit(projected)]

    def embed_text(self, texts):
        torch = import_torch()
        tok = self.processor.tokenizer(list(texts), padding=True, truncation=True, max_length=77, return_tensors="pt")
        with torch.inference_mode():
            out = self.model.get_text_features(**{k: to_device(v, self.device) for k, v in tok.items()})
        return _unit(out)


def _unit(out) -> np.ndarray:
    vectors = getattr(out, "pooler_output", out)
    vectors = vectors.float()
    return (vectors / vectors.norm(dim=-1, keepdim=True)).cpu().numpy()


class SeamlessEncoder(AudioEncoderBase):
    """SeamlessM4T v2 speech encoder: masked mean of its last layer (as mteb pools it), 60 s cap."""

    batching = "padded"
    min_samples = 400
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, dtype=UNSET, protocol=None):
        from transformers import AutoFeatureExtractor, SeamlessM4Tv2Model

        rules = protocol_rules(protocol, "hf-seamless")
        source, revision = model_source(meta, path)
        model = SeamlessM4Tv2Model.from_pretrained(
            source, revision=revision, dtype=torch_dtype(pick(dtype, rules, "dtype", "float32"))
        )
        self.encoder = model.speech_encoder.to(device).eval()
        del model
        self.extractor = AutoFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", 60.0))
        self.batch_order = batch_order(rules, self.batching)
        self.device, self.dtype = device, dtype_name(self.encoder)

    def config(self):
        return {
            "pooling": "masked-mean-last-layer",
            "frames": "ratio",
            "max_seconds": self.max_seconds,
            "batch_order": self.batch_order,
            "dtype": self.dtype,
        }

    def embed_audio(self, clips):
        torch = import_torch()
        feats = self.extractor(clips, sampling_rate=self.sample_rate, return_tensors="pt", padding=True)
        with torch.inference_mode():
            x = to_device(feats.input_features, self.device, self.encoder.dtype)
            mask = to_device(feats.attention_mask, self.device)
            hidden = self.encoder(x, attention_mask=mask).last_hidden_state
        mask = feats.attention_mask
        lengths = frame_counts("ratio", mask.sum(dim=1), mask.shape[1], hidden.shape[1])
        return masked_mean(hidden, lengths)


class EncodecEncoder(AudioEncoderBase):
    """EnCodec's encoder latents, mean over time, L2-normalised. mteb 2.26 runs one clip per
    forward pass because padding would enter the time mean; the MAEB-introduction code padded
    batches (the "paper" protocol)."""

    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, batching=UNSET, short_pad_samples=UNSET, protocol=None):
        import numpy
        from transformers import AutoFeatureExtractor, EncodecModel

        rules = protocol_rules(protocol, "hf-encodec")
        source, revision = model_source(meta, path)
        self.model = EncodecModel.from_pretrained(source, revision=revision).to(device).eval()
        self.extractor = AutoFeatureExtractor.from_pretrained(source, revision=revision)
        self.sample_rate = self.extractor.sampling_rate
        frame = int(numpy.prod(self.model.config.upsampling_ratios))  # samples per latent frame
        pad = pick(short_pad_samples, rules, "short_pad_samples", "latent-frame")
        self.min_samples = frame if pad == "latent-frame" else int(pad)
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", None))
        self.batching = pick(batching, rules, "batching", "single")
        self.batch_order = batch_order(rules, self.batching)
        self.device = device

    def config(self):
        return {
            "pooling": "mean-latent-l2",
            "max_seconds": self.max_seconds,
            "batching": self.batching,
            "batch_order": self.batch_order,
            "min_samples": self.min_samples,
        }

    def _latent_mean(self, values):
        values = values.unsqueeze(1) if values.dim() == 2 else values
        return self.model.encoder(to_device(values, self.device)).mean(dim=2)

    def embed_audio(self, clips):
        torch = import_torch()
        with torch.inference_mode():
            if self.batching == "padded":
                values = self.extractor(raw_audio=list(clips), sampling_rate=self.sample_rate, padding=True, return_tensors="pt")
                return _unit(self._latent_mean(values["input_values"]))
            out = []
            for clip in clips:
                values = self.extractor(raw_audio=[clip], sampling_rate=self.sample_rate, return_tensors="pt")["input_values"]
                out.append(_unit(self._latent_mean(values))[0])
        return np.stack(out)
