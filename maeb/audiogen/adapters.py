"""Adapters of real text-to-audio systems (the AudioSynthesizer protocol of maeb.encoders).

- `TransformersTextToAudio` (family tta-transformers): MusicGen-style models in transformers
  (MusicgenForConditionalGeneration, e.g. facebook/musicgen-small): the caption
  is the text condition; sampled with the request's seed, cut or zero-padded to the asked duration.
- `HTTPTextToAudio` (family tta-http): a system served over HTTP. Each request is POSTed
  as JSON (key, caption, timestamped_caption, transcript, duration, seed, structured, and the voice
  prompt as base64 WAV with its rate); the reply is WAV bytes, or JSON {"audio": base64 WAV}.
  What the server accepts is declared by the entry (option `accepts`)."""

from __future__ import annotations

import base64
import io
import json
import math
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soundfile as sf

from ..audio.pipeline import float_wav, resample
from ..core.errors import ModelError
from ..core.identity import redact
from ..encoders.base import model_source, torch_dtype
from .request import INPUTS, Capabilities, SynthesisRequest


def fit_duration(audio: np.ndarray, rate: int, seconds: float) -> np.ndarray:
    """Cut or zero-pad to the asked duration (systems overshoot by their frame or delay pattern)."""
    n = int(round(seconds * rate))
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    return audio[:n] if audio.size >= n else np.pad(audio, (0, n - audio.size))


class TransformersTextToAudio:
    """MusicGen through transformers: caption in, audio at the audio codec's rate out."""

    capabilities = Capabilities(accepts=("caption",))

    def __init__(
        self, meta, device="cpu", path=None, guidance_scale=3.0, temperature=1.0, top_k=250, dtype="float32", one_by_one=True
    ):
        import torch
        from transformers import AutoTokenizer, MusicgenForConditionalGeneration

        source, revision = model_source(meta, path)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source, revision=revision)
            model = MusicgenForConditionalGeneration.from_pretrained(source, revision=revision, dtype=torch_dtype(dtype))
        except OSError as exc:
            raise ModelError(f"model {meta.name!r} could not be loaded ({exc}); offline, set --option path=<local copy>") from exc
        self.model = model.to(device).eval()
        self.torch, self.device = torch, device
        self.sample_rate = int(model.config.audio_encoder.sampling_rate)
        self.frame_rate = float(model.config.audio_encoder.frame_rate)
        self.codebooks = int(model.config.decoder.num_codebooks)
        self.settings = {"guidance_scale": float(guidance_scale), "temperature": float(temperature), "top_k": int(top_k)}
        self.dtype, self.one_by_one = dtype, bool(one_by_one)

    def config(self) -> dict:
        # one_by_one: each request sampled alone from its own seed, so a clip never depends on its
        # batch-mates; batched sampling draws one random stream for the batch
        """What identifies the system's audio: its generation settings, dtype, batching and rate."""
        return {**self.settings, "dtype": self.dtype, "one_by_one": self.one_by_one, "sample_rate": self.sample_rate}

    def _generate(self, requests: list[SynthesisRequest]) -> list[np.ndarray]:
        torch = self.torch
        tokens = self.tokenizer([r.caption for r in requests], padding=True, return_tensors="pt")
        steps = int(math.ceil(max(r.duration for r in requests) * self.frame_rate)) + self.codebooks
        torch.manual_seed(int(requests[0].seed))
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=tokens["input_ids"].to(self.device),
                attention_mask=tokens["attention_mask"].to(self.device),
                max_new_tokens=steps,
                do_sample=True,
                **self.settings,
            )
        audio = out.float().cpu().numpy()[:, 0]
        return [fit_duration(a, self.sample_rate, r.duration) for a, r in zip(audio, requests)]

    def synthesize(self, requests: list[SynthesisRequest]) -> list[np.ndarray]:
        """One clip per request (each request alone when one_by_one)."""
        if self.one_by_one:
            return [self._generate([r])[0] for r in requests]
        return self._generate(list(requests))


def wav_bytes(audio: np.ndarray, rate: int) -> bytes:
    """The samples as the bytes of a 32-bit float WAV file."""
    return float_wav(np.asarray(audio, dtype=np.float32), rate)


class HTTPTextToAudio:
    """A text-to-audio system behind an HTTP endpoint (one POST per request, a few in flight)."""

    from_environment = {"url": "MAEB_TTA_URL"}  # read by the fronts

    def __init__(
        self,
        meta,
        device="cpu",
        url=None,
        sample_rate=16000,
        accepts=("caption", "transcript"),
        needs_voice_prompt=False,
        api_key_env=None,
        concurrency=4,
        timeout=300.0,
        retries=3,
    ):
        self.url = url
        if not self.url:
            raise ModelError(f"model {meta.name!r}: set the endpoint with --option url=... or MAEB_TTA_URL")
        if isinstance(accepts, str):  # --option accepts=caption,transcript
            accepts = tuple(a.strip() for a in accepts.split(",") if a.strip())
        unknown = set(accepts) - set(INPUTS)
        if unknown:
            raise ModelError(f"model {meta.name!r}: accepts {sorted(unknown)} unknown; known: {', '.join(INPUTS)}")
        self.name = meta.name
        self.sample_rate = int(sample_rate)
        self.capabilities = Capabilities(accepts=tuple(accepts), needs_voice_prompt=bool(needs_voice_prompt))
        self.api_key_env = api_key_env
        self.concurrency, self.timeout, self.retries = int(concurrency), float(timeout), int(retries)

    def config(self) -> dict:
        # the key's variable name is not part of what changes the audio; the URL is
        """What identifies the system's audio: its URL, rate and accepted inputs."""
        return {"url": redact(self.url), "sample_rate": self.sample_rate, **self.capabilities.as_dict()}

    def body(self, r: SynthesisRequest) -> dict:
        """The JSON body posted for one request (a voice prompt as base64 WAV)."""
        out = {
            "key": r.key,
            "caption": r.caption,
            "timestamped_caption": r.timestamped_caption,
            "transcript": r.transcript,
            "duration": r.duration,
            "seed": r.seed,
            "structured": r.structured,
            "sample_rate": self.sample_rate,
        }
        if r.voice_prompt is not None:
            rate = r.voice_prompt_rate or self.sample_rate  # prompts are decoded at the system's rate
            out["voice_prompt"] = base64.b64encode(wav_bytes(r.voice_prompt, rate)).decode()
            out["voice_prompt_rate"] = r.voice_prompt_rate
        return out

    def _post(self, r: SynthesisRequest) -> np.ndarray:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env and os.environ.get(self.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[self.api_key_env]}"
        data = json.dumps(self.body(r)).encode()
        problem = ""
        for attempt in range(self.retries + 1):
            try:
                req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(req, timeout=self.timeout) as reply:
                    payload, kind = reply.read(), reply.headers.get("Content-Type", "")
                return self._audio(payload, kind, r)
            except urllib.error.HTTPError as exc:
                problem = f"HTTP {exc.code}"
                if exc.code < 500 and exc.code != 429:
                    break  # the request itself is wrong: asking again gives the same answer
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                problem = str(getattr(exc, "reason", exc))
            time.sleep(min(30.0, 2.0**attempt))
        raise ModelError(f"model {self.name!r}: {redact(self.url)} gave no audio for clip {r.key!r} ({problem})")

    def _audio(self, payload: bytes, kind: str, r: SynthesisRequest) -> np.ndarray:
        if "json" in kind:
            try:
                payload = base64.b64decode(json.loads(payload)["audio"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ModelError(f"model {self.name!r}: the reply for {r.key!r} is JSON without base64 'audio'") from exc
        try:
            audio, rate = sf.read(io.BytesIO(payload), dtype="float32", always_2d=True)
        except Exception as exc:
            raise ModelError(f"model {self.name!r}: the reply for {r.key!r} is not audio ({exc})") from exc
        if rate != self.sample_rate:
            return resample(audio.mean(axis=1), rate, self.sample_rate, "soxr-hq")
        return audio.mean(axis=1)

    def synthesize(self, requests: list[SynthesisRequest]) -> list[np.ndarray]:
        """One clip per request, a few requests in flight at once."""
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._post, requests))
