"""Contrastive audio-text models outside transformers: Microsoft's CLAP (package msclap),
Wav2CLIP (package wav2clip, text side OpenAI CLIP) and MuQ-MuLan (package muq), as mteb 2.26.24's
wrappers run them.

- MS-CLAP (msclap_models.py): weights from microsoft/msclap at the pinned revision; clips cut at
  the checkpoint's duration (so msclap's random-window branch is never taken), written as float
  WAV files at its own rate (44.1 kHz) and read by msclap.get_audio_embeddings(resample=False),
  L2; texts get " <|endoftext|>" for the GPT-2 encoder (2023), padded to the longest, cut at the
  tokenizer's limit, caption_encoder, L2. The "paper" protocol: 48 kHz audio written as 16-bit
  WAV (read by msclap as 44.1 kHz), no cap, texts padded to max_length 100 (2022) / 77 (2023).
- Wav2CLIP (wav2clip_model.py): wav2clip.embed_audio on one clip at a time (its input
  normalisation is batch-wide), L2; texts: CLIP ViT-B/32's text features, L2.
- MuQ-MuLan (muq_mulan_model.py): 24 kHz, one clip per forward (MuQ-MuLan splits clips over 10 s
  and averages; zero padding would enter as silent clips), no L2; texts through the model.
  mteb scores it with its own calc_similarity (a scaled dot product): similarity "dot"."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .base import UNSET, AudioEncoderBase, TextEncoderBase, as_seconds, import_torch, pick, protocol_rules
from .install import require


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class MSClapEncoder(AudioEncoderBase, TextEncoderBase):
    """Microsoft CLAP (msclap): audio and caption embeddings, L2-normalised, as mteb runs it."""

    min_samples = 0
    batching = "padded"  # msclap reads each file alone and pads it to its duration
    software = ("torch", "msclap", "transformers", "soundfile")

    def __init__(self, meta, device="cpu", path=None, sample_rate=UNSET, max_seconds=UNSET, protocol=None):
        msclap = require("msclap", "msclap")
        rules = protocol_rules(protocol, "msclap")
        self.version = "2022" if "2022" in meta.name else "2023"
        if not path:
            from huggingface_hub import hf_hub_download

            path = hf_hub_download(msclap.CLAP.model_repo, msclap.CLAP.model_name[self.version], revision=meta.revision)
        self.model = msclap.CLAP(model_fp=path, version=self.version, use_cuda=str(device).startswith("cuda"))
        self.model.clap = self.model.clap.to(device)
        self.tokenizer = self.model.tokenizer
        rate = pick(sample_rate, rules, "sample_rate", "model")
        self.sample_rate = int(self.model.args.sampling_rate) if rate == "model" else int(rate)
        cap = pick(max_seconds, rules, "max_seconds", "model-duration")
        self.max_seconds = float(self.model.args.duration) if cap == "model-duration" else as_seconds(cap)
        self.wav_subtype = rules.get("wav_subtype", "FLOAT")
        self.text_rule = rules.get("text", "2.26")
        self.device = device

    def config(self):
        return {
            "version": self.version,
            "pooling": "msclap-l2",
            "sample_rate": self.sample_rate,
            "max_seconds": self.max_seconds,
            "wav_subtype": self.wav_subtype,
            "text": self.text_rule,
        }

    def embed_audio(self, clips):
        import soundfile as sf

        torch = import_torch()
        files = []
        try:
            for clip in clips:
                with tempfile.NamedTemporaryFile(suffix=".wav", delete=False) as handle:
                    files.append(handle.name)
                sf.write(handle.name, clip, self.sample_rate, subtype=self.wav_subtype)
            with torch.inference_mode():
                vectors = self.model.get_audio_embeddings(files, resample=False)
        finally:
            for name in files:
                with contextlib.suppress(OSError):
                    Path(name).unlink()
        return _unit(vectors.float().cpu().numpy())

    def embed_text(self, texts):
        torch = import_torch()
        texts = list(texts)
        if self.text_rule == "a79":
            features = self.tokenizer(
                texts,
                return_tensors="pt",
                padding="max_length",
                truncation=True,
                max_length=100 if self.version == "2022" else 77,
            )
        else:
            if "gpt" in self.model.args.text_model:  # msclap's own suffix: the GPT-2 encoder pools on it
                texts = [t + " <|endoftext|>" for t in texts]
            features = self.tokenizer(
                texts, return_tensors="pt", padding="longest", truncation=True, max_length=self.tokenizer.model_max_length
            )
        with torch.inference_mode():
            vectors = self.model.clap.caption_encoder({k: v.to(self.device) for k, v in features.items()})
        return _unit(vectors.float().cpu().numpy())


class Wav2ClipEncoder(AudioEncoderBase, TextEncoderBase):
    """Wav2CLIP: audio embeddings one clip at a time and CLIP ViT-B/32 text features, L2-normalised."""

    sample_rate = 16000
    min_samples = 0
    software = ("torch", "wav2clip", "librosa", "transformers")
    CLIP, CLIP_REVISION = "openai/clip-vit-base-patch32", "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268"

    def __init__(self, meta, device="cpu", path=None, text_path=None, max_seconds=UNSET, batching=UNSET, protocol=None):
        wav2clip = require("wav2clip", "wav2clip")
        torch = import_torch()
        rules = protocol_rules(protocol, "wav2clip")
        if path:  # the published checkpoint (Wav2CLIP.pt) as a local file
            from wav2clip.model.encoder import ResNetExtractor

            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
            self.audio_model = ResNetExtractor(checkpoint=checkpoint, scenario="frozen", transform=True)
        else:
            self.audio_model = wav2clip.get_model()
        self.audio_model = self.audio_model.to(device).eval()
        self._embed = wav2clip.embed_audio
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", None))
        # per clip (2.26) or one zero-padded batch per call (paper); the engine may group any lengths
        self.per_clip = pick(batching, rules, "batching", "single") != "padded"
        self.batching = "padded"
        self.clip: Any = None  # the text side (CLIP's), for entries that declare text
        self.tokenizer: Any = None
        if "text" in meta.modalities:
            from transformers import AutoTokenizer, CLIPModel

            revision: Any  # None for a local folder (see base.model_source)
            source, revision = (text_path, None) if text_path else (self.CLIP, self.CLIP_REVISION)
            self.clip = CLIPModel.from_pretrained(source, revision=revision).to(device).eval()
            self.tokenizer = AutoTokenizer.from_pretrained(source, revision=revision)  # what CLIPProcessor(text=) runs
        self.device = device

    def config(self):
        return {
            "pooling": "wav2clip-l2",
            "per_clip": self.per_clip,
            "max_seconds": self.max_seconds,
            "text": "clip-vit-base-patch32-l2" if self.clip is not None else None,
        }

    def embed_audio(self, clips):
        if not self.per_clip:  # the MAEB-introduction code: one zero-padded batch per call
            longest = max(len(c) for c in clips)
            batch = np.stack([np.pad(np.asarray(c, dtype=np.float32), (0, longest - len(c))) for c in clips])
            return _unit(self._embed(batch, self.audio_model))
        return _unit(np.concatenate([self._embed(np.asarray(c, dtype=np.float32)[None], self.audio_model) for c in clips]))

    def embed_text(self, texts):
        torch = import_torch()
        tok = self.tokenizer(list(texts), return_tensors="pt", padding=True, truncation=True)
        with torch.inference_mode():
            out = self.clip.get_text_features(**{k: v.to(self.device) for k, v in tok.items()})
        vectors = getattr(out, "pooler_output", out)
        return _unit(vectors.float().cpu().numpy())


class MuQMuLanEncoder(AudioEncoderBase, TextEncoderBase):
    """MuQ-MuLan (muq): joint music and text embeddings at 24 kHz."""

    sample_rate = 24000
    min_samples = 0
    software = ("torch", "muq")

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, batching=UNSET, protocol=None):
        muq = require("muq", "muq-mulan")
        rules = protocol_rules(protocol, "muq-mulan")
        source, revision = (path, None) if path else (meta.name, meta.revision)
        kwargs = {"revision": revision} if revision else {}
        self.model = muq.MuQMuLan.from_pretrained(source, **kwargs).to(device).eval()
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", None))
        self.per_clip = pick(batching, rules, "batching", "single") != "padded"
        self.batching = "padded"
        self.device = device

    def config(self):
        return {"pooling": "muq-mulan", "per_clip": self.per_clip, "max_seconds": self.max_seconds}

    def embed_audio(self, clips):
        torch = import_torch()
        with torch.inference_mode():
            if not self.per_clip:  # the MAEB-introduction code: one zero-padded batch
                longest = max(len(c) for c in clips)
                wavs = torch.stack([torch.nn.functional.pad(torch.as_tensor(c), (0, longest - len(c))) for c in clips])
                return self.model(wavs=wavs.to(self.device)).float().cpu().numpy()
            out = [self.model(wavs=torch.as_tensor(np.ascontiguousarray(c))[None].to(self.device)) for c in clips]
        return torch.cat(out).float().cpu().numpy()

    def embed_text(self, texts):
        torch = import_torch()
        with torch.inference_mode():
            return self.model(texts=list(texts)).float().cpu().numpy()
