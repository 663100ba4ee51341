"""Audio language models used as encoders: the last layer's state at the last token of a prompt
that holds the clip (or the text), as mteb pools Qwen2-Audio and LCO-Embedding-Omni."""

from __future__ import annotations

import numpy as np

from .base import (
    SOFTWARE,
    UNSET,
    AudioEncoderBase,
    TextEncoderBase,
    as_seconds,
    batch_order,
    dtype_name,
    model_source,
    pick,
    protocol_rules,
    torch_dtype,
)


def _last_token(hidden, mask) -> np.ndarray:
    """State at each row's last real token; works for left and right padding."""
    last = mask.shape[1] - 1 - mask.flip(dims=[1]).argmax(dim=1)
    rows = hidden[range(hidden.shape[0]), last]
    return rows.float().cpu().numpy()


class Qwen2AudioEncoder(AudioEncoderBase, TextEncoderBase):
    """Qwen2-Audio as an encoder: the last layer at the last token of a prompt holding the clip or text (mteb's pooling)."""

    batching = "padded"
    min_samples = 0
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, dtype=UNSET, protocol=None):
        from transformers import AutoProcessor, Qwen2AudioForConditionalGeneration

        rules = protocol_rules(protocol, "hf-qwen2-audio")
        source, revision = model_source(meta, path)
        self.processor = AutoProcessor.from_pretrained(source, revision=revision)
        weights_dtype = torch_dtype(pick(dtype, rules, "dtype", "bfloat16"))
        self.model = Qwen2AudioForConditionalGeneration.from_pretrained(source, revision=revision, dtype=weights_dtype)
        self.model = self.model.to(device).eval()
        self.sample_rate = self.processor.feature_extractor.sampling_rate
        self.max_seconds = float(pick(max_seconds, rules, "max_seconds", 30.0))
        self.batch_order = batch_order(rules, self.batching)
        self.device, self.dtype = device, dtype_name(self.model)

    def config(self):
        return {
            "pooling": "last-token-last-layer",
            "prompt": "<|audio_bos|><|AUDIO|><|audio_eos|>",
            "max_seconds": self.max_seconds,
            "batch_order": self.batch_order,
            "dtype": self.dtype,
        }

    def _forward(self, **inputs):
        import torch

        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        if "input_features" in inputs:
            inputs["input_features"] = inputs["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            hidden = self.model(**inputs, output_hidden_states=True).hidden_states[-1]
        return _last_token(hidden, inputs["attention_mask"])

    def embed_audio(self, clips):
        texts = ["<|audio_bos|><|AUDIO|><|audio_eos|>"] * len(clips)
        inputs = self.processor(
            text=texts,
            audio=list(clips),
            sampling_rate=self.sample_rate,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=int(self.max_seconds * self.sample_rate),
        )
        return self._forward(**inputs)

    def embed_text(self, texts):
        return self._forward(**self.processor(text=list(texts), return_tensors="pt", padding=True))


class OmniEmbeddingEncoder(AudioEncoderBase, TextEncoderBase):
    """LCO-Embedding-Omni (a Qwen2.5-Omni thinker): chat prompt "<clip or text> Summarize the above
    audio|text in one word:", last token of the last layer, L2-normalised, bf16, up to 300 s
    (mteb 2.26; the MAEB-introduction code cut at 10 s and did not normalise)."""

    batching = "padded"
    min_samples = 0
    software = SOFTWARE

    def __init__(
        self,
        meta,
        device="cpu",
        path=None,
        max_seconds=UNSET,
        dtype=UNSET,
        processor=None,
        l2=UNSET,
        text_max_tokens=UNSET,
        protocol=None,
    ):
        from transformers import Qwen2_5OmniThinkerForConditionalGeneration

        rules = protocol_rules(protocol, "hf-omni-embedding")
        dtype = pick(dtype, rules, "dtype", "bfloat16")
        source, revision = model_source(meta, path)
        if processor is None:  # needs the vision processors too (pillow, torchvision)
            from transformers import Qwen2_5OmniProcessor

            processor = Qwen2_5OmniProcessor.from_pretrained(source, revision=revision)
        self.processor = processor
        self.processor.tokenizer.padding_side = "left"
        model = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(source, revision=revision, dtype=torch_dtype(dtype))
        self.model = model.to(device).eval()
        # only hidden states are used: run the language-model head on the last position alone
        self.model.lm_head.register_forward_pre_hook(lambda _module, args: (args[0][:, -1:, :],))
        self.sample_rate = self.processor.feature_extractor.sampling_rate
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", 300.0))
        self.l2 = bool(pick(l2, rules, "l2", True))
        self.text_max_tokens = pick(text_max_tokens, rules, "text_max_tokens", 300)
        self.batch_order = batch_order(rules, self.batching)
        self.device, self.dtype = device, dtype_name(self.model)

    def config(self):
        return {
            "pooling": "last-token-l2" if self.l2 else "last-token",
            "prompt": "Summarize the above {modality} in one word:",
            "max_seconds": self.max_seconds,
            "text_max_tokens": self.text_max_tokens,
            "batch_order": self.batch_order,
            "dtype": self.dtype,
        }

    def _messages(self, content: dict, modality: str) -> str:
        message = [
            {"role": "user", "content": [content, {"type": "text", "text": f"\nSummarize the above {modality} in one word:"}]}
        ]
        return self.processor.apply_chat_template(message, tokenize=False, add_generation_prompt=True)

    def _forward(self, texts, audio=None):
        import torch

        kwargs = {}
        if audio and self.max_seconds is not None:
            kwargs = {"audio_kwargs": {"max_length": int(self.max_seconds * self.sample_rate)}}
        inputs = self.processor(text=texts, audio=audio, padding=True, return_tensors="pt", **kwargs)
        inputs = {k: (v.to(self.device) if hasattr(v, "to") else v) for k, v in inputs.items()}
        if "input_features" in inputs:
            inputs["input_features"] = inputs["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            hidden = self.model(**inputs, output_hidden_states=True, return_dict=True).hidden_states[-1][:, -1, :]
        vectors = hidden.float()
        return (vectors / vectors.norm(dim=-1, keepdim=True) if self.l2 else vectors).cpu().numpy()

    def embed_audio(self, clips):
        texts = [self._messages({"type": "audio", "audio": "placeholder"}, "audio") for _ in clips]
        return self._forward(texts, list(clips))

    def embed_text(self, texts):
        tok = self.processor.tokenizer
        capped = []
        cap = self.text_max_tokens
        for text in texts:  # the authors' evaluation caps texts at 300 tokens
            ids = tok(text).input_ids
            capped.append(tok.decode(ids[:cap]) if cap and len(ids) > cap else text)
        return self._forward([self._messages({"type": "text", "text": t}, "text") for t in capped])
