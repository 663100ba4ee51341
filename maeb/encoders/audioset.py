"""AudioSet-style CNNs: YAMNet and VGGish (package torch-vggish-yamnet) and CNN14 (SpeechBrain's
speechbrain/cnn14-esc50), pooled as mteb 2.26.24's wrappers pool them.

- YAMNet (yamnet_models.py): peak-normalise clips louder than 1, pad to one 0.96 s patch plus
  whole 0.48 s hops (15,600 + k x 7,680 samples), the official AudioSet log-mel (25 ms Hann
  window, 10 ms hop, 512-point FFT, 64 HTK mel bands 125-7500 Hz, log offset 0.001), 96-frame
  patches with a 48-frame hop, the model's embedding per patch, mean over patches. 16 kHz, no cap.
- VGGish (vggish_models.py): the same log-mel in float64 with log offset 0.01, padded to 15,600
  samples, non-overlapping 96-frame examples, the embedding without the port's final ReLU, mean.
- CNN14 (cnn14_model.py): 44.1 kHz, the checkpoint's compute_stft -> spectral magnitude ->
  compute_fbank front end, at least 32 frames, embedding_model, mean over time; one clip per pass.

The "paper" protocol (the MAEB-introduction code) fed YAMNet and VGGish through the package's
WaveformToInput (torchaudio's mel spectrogram), padded to 15,360 samples, kept VGGish's ReLU, cut
at 30 s; and ran CNN14 at 16 kHz on zero-padded batches through compute_features.

Every clip is embedded on its own inside embed_audio, so batch-mates never change a vector."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import ModelError
from .base import UNSET, AudioEncoderBase, as_seconds, import_torch, pick, protocol_rules
from .install import require

SOFTWARE = ("torch", "torch-vggish-yamnet")


def audioset_log_mel(audio, log_offset: float):
    """Log-mel spectrogram [frames, 64] of 16 kHz audio as the official AudioSet code computes
    it (mel_features.py), operation by operation as mteb 2.26.24 does, in audio's dtype."""
    torch = import_torch()
    frames = audio.unfold(-1, 400, 160)  # 25 ms windows, 10 ms hop, no centring
    window = torch.hann_window(400, periodic=True, dtype=audio.dtype)
    magnitude = torch.fft.rfft(frames * window, n=512).abs()

    def hertz_to_mel(hertz):
        return 1127.0 * np.log(1.0 + hertz / 700.0)

    bins_mel = hertz_to_mel(np.linspace(0.0, 8000.0, 257))[:, None]
    edges = np.linspace(hertz_to_mel(125.0), hertz_to_mel(7500.0), 64 + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    weights = np.maximum(0.0, np.minimum((bins_mel - lower) / (center - lower), (upper - bins_mel) / (upper - center)))
    weights[0, :] = 0.0  # the DC bin
    mel = magnitude @ torch.from_numpy(weights).to(audio.dtype)
    return torch.log(mel + log_offset)


def _peak_normalise(audio):
    if audio.numel() > 0 and audio.abs().max() > 1.0:
        audio = audio / audio.abs().max()
    return audio


def _load_package_model(module: str, family: str, build, path):
    """The package's model with random weights replaced by a local state dict (`path`), or its
    own download of the published weights."""
    torch = import_torch()
    package = require(f"torch_vggish_yamnet.{module}", family, "torch-vggish-yamnet")
    if path:
        model = build(package, pretrained=False)
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        return package, model
    return package, build(package, pretrained=True)


class _AudioSetCNN(AudioEncoderBase):
    sample_rate = 16000
    min_samples = 0
    batching = "padded"  # one clip at a time inside embed_audio
    software = SOFTWARE
    family = ""
    device: str
    converter: Any  # the package's WaveformToInput, or None with the AudioSet log-mel front end

    def _embed_one(self, audio) -> Any:
        """One clip's vector (a torch tensor); each network says how."""
        raise NotImplementedError

    def _setup(self, rules, max_seconds, front_end, pad, default_pad, package):
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", None))
        self.front_end = pick(front_end, rules, "front_end", "audioset-log-mel")
        if self.front_end not in ("audioset-log-mel", "waveform-to-input"):
            raise ValueError(f"front_end must be audioset-log-mel or waveform-to-input, not {self.front_end!r}")
        self.pad = pick(pad, rules, "pad", default_pad)
        self.converter = package.WaveformToInput() if self.front_end == "waveform-to-input" else None

    def _prepare(self, clip):
        torch = import_torch()
        audio = _peak_normalise(torch.as_tensor(np.asarray(clip, dtype=np.float32)).reshape(-1))
        return torch.nn.functional.pad(audio, (0, max(0, self._padded_length(audio.shape[-1]) - audio.shape[-1])))

    def _padded_length(self, n: int) -> int:
        return max(n, int(self.pad))

    def _converted(self, audio):
        """The package's WaveformToInput with the MAEB-introduction code's reshaping."""
        x = self.converter(audio[None].float(), self.sample_rate).to(self.device)
        if x.dim() == 3:
            x = x.mean(dim=0, keepdim=True).unsqueeze(0) if x.shape[0] == 3 else x.unsqueeze(1)
        elif x.dim() == 2:
            x = x.unsqueeze(0).unsqueeze(0)
        return x

    def embed_audio(self, clips):
        torch = import_torch()
        out = []
        with torch.inference_mode():
            for clip in clips:
                out.append(self._embed_one(self._prepare(clip)))
        return np.stack(out).astype(np.float32)


class YAMNetEncoder(_AudioSetCNN):
    """YAMNet (torch-vggish-yamnet): mean of its per-patch embeddings over 0.96 s log-mel patches."""

    family = "yamnet"

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, front_end=UNSET, pad=UNSET, protocol=None):
        package, model = _load_package_model("yamnet", "yamnet", lambda p, pretrained: p.yamnet(pretrained=pretrained), path)
        self.model = model.to(device).eval()
        self.device = device
        self._setup(protocol_rules(protocol, "yamnet"), max_seconds, front_end, pad, "patch-hops", package)

    def config(self):
        return {"pooling": "mean-over-patches", "front_end": self.front_end, "pad": self.pad, "max_seconds": self.max_seconds}

    def _padded_length(self, n: int) -> int:
        if self.pad == "patch-hops":  # one 0.96 s patch (0.975 s with the window) plus whole hops
            return 15_600 + math.ceil(max(n - 15_600, 0) / 7_680) * 7_680
        return max(n, int(self.pad))

    def _embed_one(self, audio):
        if self.converter is not None:
            x = self._converted(audio)
            if x.dim() == 4 and x.shape[0] == 2:  # the MAEB-introduction code averaged a two-patch input
                x = x.mean(dim=0, keepdim=True)
        else:
            patches = audioset_log_mel(audio.float(), log_offset=0.001).unfold(0, 96, 48)
            x = patches.transpose(1, 2).unsqueeze(1).to(self.device)  # [patches, 1, frames, mels]
        embedding, _ = self.model(x)
        if embedding.dim() == 4 and embedding.shape[2] == 1 and embedding.shape[3] == 1:
            embedding = embedding.squeeze(2).squeeze(2)
        return embedding.mean(dim=0).float().cpu().numpy()


class VGGishEncoder(_AudioSetCNN):
    """VGGish (torch-vggish-yamnet): mean of its per-example embeddings over 0.96 s log-mel examples."""

    family = "vggish"

    def __init__(
        self, meta, device="cpu", path=None, max_seconds=UNSET, front_end=UNSET, pad=UNSET, final_relu=UNSET, protocol=None
    ):
        rules = protocol_rules(protocol, "vggish")
        package, model = _load_package_model(
            "vggish", "vggish", lambda p, pretrained: p.get_vggish(with_classifier=False, pretrained=pretrained), path
        )
        self.final_relu = bool(pick(final_relu, rules, "final_relu", False))
        if not self.final_relu:  # the official embedding layer has no activation
            model.embeddings = model.embeddings[:-1]
        self.model = model.to(device).eval()
        self.device = device
        self._setup(rules, max_seconds, front_end, pad, 15_600, package)

    def config(self):
        return {
            "pooling": "mean-over-examples",
            "front_end": self.front_end,
            "pad": self.pad,
            "final_relu": self.final_relu,
            "max_seconds": self.max_seconds,
        }

    def _embed_one(self, audio):
        if self.converter is not None:
            x = self._converted(audio)
        else:
            log_mel = audioset_log_mel(audio.double(), log_offset=0.01)
            x = log_mel.float().unfold(0, 96, 96).transpose(1, 2).unsqueeze(1).to(self.device)
        embedding = self.model(x)
        if embedding.dim() > 1:
            embedding = embedding.mean(dim=0)
        return embedding.float().cpu().numpy()


class CNN14Encoder(AudioEncoderBase):
    """speechbrain/cnn14-esc50 through SpeechBrain's AudioClassifier (hyperparams.yaml of the hub
    repo or of a local folder given as `path`)."""

    min_samples = 0
    software = ("torch", "speechbrain")

    def __init__(
        self, meta, device="cpu", path=None, sample_rate=UNSET, max_seconds=UNSET, batching=UNSET, front_end=UNSET, protocol=None
    ):
        rules = protocol_rules(protocol, "sb-cnn14")
        require("speechbrain", "sb-cnn14")
        from speechbrain.inference.classifiers import AudioClassifier

        kwargs = {}
        if not path:
            try:
                from speechbrain.utils.fetching import FetchConfig

                kwargs["fetch_config"] = FetchConfig(revision=meta.revision)
            except ImportError:  # speechbrain < 1.0
                kwargs["revision"] = meta.revision
        import tempfile

        self.model = AudioClassifier.from_hparams(
            source=path or meta.name, savedir=tempfile.mkdtemp(prefix="maeb_cnn14_"), run_opts={"device": device}, **kwargs
        )
        self.sample_rate = int(pick(sample_rate, rules, "sample_rate", 44100))
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", None))
        mode = pick(batching, rules, "batching", "single")
        self.batching = "same_length" if mode == "single" else mode
        self.front_end = pick(front_end, rules, "front_end", "stft-fbank")
        if self.front_end == "compute-features" and not hasattr(self.model.mods, "compute_features"):
            raise ModelError(f"model {meta.name!r}: its hyperparams define no compute_features (front_end 'compute-features')")
        self.device = device

    def config(self):
        return {
            "pooling": "mean-over-time",
            "front_end": self.front_end,
            "sample_rate": self.sample_rate,
            "batching": self.batching,
            "max_seconds": self.max_seconds,
        }

    def _pool(self, feats):
        embeddings = self.model.mods.embedding_model(feats)
        return embeddings.mean(dim=1) if embeddings.dim() > 2 else embeddings

    def embed_audio(self, clips):
        torch = import_torch()
        wavs = [torch.as_tensor(np.asarray(c, dtype=np.float32)) for c in clips]
        with torch.inference_mode():
            if self.front_end == "compute-features":  # the MAEB-introduction code: a zero-padded batch
                longest = max(w.shape[0] for w in wavs)
                batch = torch.stack([torch.nn.functional.pad(w, (0, longest - w.shape[0])) for w in wavs]).to(self.device)
                feats = self.model.mods.compute_features(batch)
                _b, f, t = feats.shape
                feats = torch.nn.functional.pad(feats, (0, max(0, 80 - t), 0, max(0, 64 - f)))
                return self._pool(feats).float().cpu().numpy()
            from speechbrain.processing.features import spectral_magnitude

            out = []
            for wav in wavs:
                stft = self.model.mods.compute_stft(wav[None].to(self.device))
                feats = self.model.mods.compute_fbank(spectral_magnitude(stft, power=self.model.hparams.spec_mag_power))
                if feats.shape[1] < 32:  # Cnn14's five 2x2 poolings need 32 frames
                    feats = torch.nn.functional.pad(feats, (0, 0, 0, 32 - feats.shape[1]))
                out.append(self._pool(feats)[0].float().cpu().numpy())
        return np.stack(out)
