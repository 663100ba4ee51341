"""Omni-modal models used as audio (and text) encoders, as mteb 2.26.24's wrappers run them.

- hf-qwen-omni (qwen_omni_lm.py): the Qwen2.5-Omni / Qwen3-Omni thinker, Qwen's system prompt,
  user content [clip, ""] or [text], no generation prompt, last token of the last layer,
  L2-normalised, bf16, 300 s; Qwen3-Omni (mixture of experts) one clip at a time.
- st-omni: sentence-transformers checkpoints with remote code that take audio (e5-omni
  (e5_omni_models.py), Tevatron OmniEmbed (tevatron_omni_embed_models.py), jina-embeddings-v5-omni
  (jina_models.py), BidirLM-Omni (bidirlm_omni_models.py)); the entry's `variant` picks the
  wrapper's input format and prompts.
- ebind (ebind_models.py): EBind's ImageBind audio branch through its processor (clips written
  to 16-bit WAV files, as mteb does), projection, L2.

maeb embeds a clip once for every task, so task-dependent prompts (jina's adapter and
"Query:"/"Document:" prefixes, BidirLM's per-task instructions) are options fixed per run,
defaulting to what mteb uses on most MAEB audio tasks; config() records them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ModelError
from ..core.trust import require_model_code
from .audio_lm import _last_token
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
from .install import require

QWEN_SYSTEM = (
    "You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of perceiving auditory and "
    "visual inputs, as well as generating text and speech."
)


def _l2(vectors) -> np.ndarray:
    vectors = vectors.float()
    return (vectors / vectors.norm(dim=-1, keepdim=True).clamp(min=1e-12)).cpu().numpy()


class QwenOmniEncoder(AudioEncoderBase, TextEncoderBase):
    """The Qwen2.5-Omni / Qwen3-Omni thinker: last token of the last layer, L2-normalised."""

    min_samples = 0
    software = SOFTWARE

    def __init__(
        self, meta, device="cpu", path=None, max_seconds=UNSET, dtype=UNSET, batching=UNSET, processor=None, protocol=None
    ):
        from transformers import AutoConfig

        source, revision = model_source(meta, path)
        model_type = AutoConfig.from_pretrained(source, revision=revision).model_type
        self.arch = "qwen3_omni_moe" if model_type.startswith("qwen3_omni") else "qwen2_5_omni"
        rules = protocol_rules(protocol, "hf-qwen-omni", self.arch)
        Thinker: Any  # the thinker class of the checkpoint's architecture
        if self.arch == "qwen3_omni_moe":
            from transformers import Qwen3OmniMoeThinkerForConditionalGeneration as Thinker
        else:
            from transformers import Qwen2_5OmniThinkerForConditionalGeneration as Thinker
        if processor is None:  # the processor also builds the vision parts (pillow, torchvision)
            from transformers import AutoProcessor

            processor = AutoProcessor.from_pretrained(source, revision=revision)
        self.processor = processor
        self.processor.tokenizer.padding_side = "left"
        weights_dtype = torch_dtype(pick(dtype, rules, "dtype", "bfloat16"))
        self.model = Thinker.from_pretrained(source, revision=revision, dtype=weights_dtype).to(device).eval()
        # only hidden states are used: the language-model head runs on the last position alone
        self.model.get_output_embeddings().register_forward_pre_hook(lambda _module, args: (args[0][:, -1:, :],))
        self.sample_rate = self.processor.feature_extractor.sampling_rate
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", 300.0))
        mode = pick(batching, rules, "batching", "padded")
        self.batching = "same_length" if mode == "single" else mode
        self.device, self.dtype = device, dtype_name(self.model)

    def config(self):
        return {
            "pooling": "last-token-l2",
            "prompt": "qwen-system+[audio,'']|[text]",
            "max_seconds": self.max_seconds,
            "batching": self.batching,
            "dtype": self.dtype,
        }

    def _chat(self, content: list) -> str:
        messages = [
            {"role": "system", "content": [{"type": "text", "text": QWEN_SYSTEM}]},
            {"role": "user", "content": content},
        ]
        return self.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=False)

    def _forward(self, texts, audio=None):
        torch = import_torch()
        kwargs = {}
        if audio:
            kwargs["audio_kwargs"] = {"max_length": int(self.max_seconds * self.sample_rate)} if self.max_seconds else {}
        inputs = self.processor(text=texts, audio=audio, padding=True, return_tensors="pt", **kwargs)
        inputs = {k: (v.to(self.device) if hasattr(v, "to") else v) for k, v in inputs.items()}
        if "input_features" in inputs:
            inputs["input_features"] = inputs["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            hidden = self.model(**inputs, output_hidden_states=True, return_dict=True).hidden_states[-1]
        last = torch.as_tensor(_last_token(hidden, inputs["attention_mask"]))
        return _l2(last)

    def embed_audio(self, clips):
        texts = [self._chat([{"type": "audio", "audio": "placeholder"}, {"type": "text", "text": ""}]) for _ in clips]
        return self._forward(texts, list(clips))

    def embed_text(self, texts):
        return self._forward([self._chat([{"type": "text", "text": t}]) for t in texts])


# per variant: how a clip is handed to SentenceTransformer.encode, and the prompts mteb uses
ST_VARIANTS: dict[str, dict[str, Any]] = {
    # mteb's SentenceTransformerEncoderWrapper: rows {"audio": {"array", "sampling_rate"}}; texts
    # of a text-only input capped at 512 tokens
    "e5-omni": {"audio_input": "dict", "text_max_tokens": 512, "audio_prompt": None, "text_prompt": "query"},
    "omniembed": {
        "audio_input": "dict",
        "text_max_tokens": 512,
        "audio_prompt": None,
        "text_prompt": "query",
        "dtype": "bfloat16",
    },
    # JinaV5OmniWrapper: raw arrays, the "retrieval" adapter for audio tasks, "Document: " for
    # the clips of classification, clustering and retrieval corpora, "Query: " for text queries
    "jina-v5-omni": {"audio_input": "array", "task": "retrieval", "audio_prompt": "Document: ", "text_prompt": "Query: "},
    # BidirLMOmniEncoder: rows {"audio": ...}, one clip at a time; no instruction on most audio tasks
    "bidirlm-omni": {"audio_input": "dict", "text_max_tokens": 1024, "audio_prompt": None, "text_prompt": None},
}


class SentenceOmniEncoder(AudioEncoderBase, TextEncoderBase):
    """sentence-transformers checkpoints (remote code) that embed audio and text."""

    min_samples = 0
    software = (*SOFTWARE, "sentence-transformers")

    def __init__(
        self,
        meta,
        device="cpu",
        path=None,
        variant="e5-omni",
        base_revision=None,
        max_seconds=UNSET,
        batching=UNSET,
        audio_prompt=UNSET,
        text_prompt=UNSET,
        model=None,
        protocol=None,
    ):
        if variant not in ST_VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(ST_VARIANTS)}, not {variant!r}")
        self.variant = variant
        spec = ST_VARIANTS[variant]
        rules = protocol_rules(protocol, "st-omni", variant)
        source, revision = model_source(meta, path)
        if model is None:
            require_model_code(meta.name, ModelError)  # sentence-transformers runs the checkpoint's own .py files
            model = self._load(source, revision, base_revision, variant, device)
        self.model = model
        self.sample_rate = 16000
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", 300.0))
        mode = pick(batching, rules, "batching", "padded")
        self.batching = "same_length" if mode == "single" else mode
        self.audio_prompt = spec["audio_prompt"] if audio_prompt is UNSET else audio_prompt
        self.text_prompt = spec["text_prompt"] if text_prompt is UNSET else text_prompt
        self.base_revision = base_revision
        self.device = device

    @staticmethod
    def _load(source, revision, base_revision, variant, device):
        spec = ST_VARIANTS[variant]
        st = require("sentence_transformers", "st-omni", "sentence-transformers")
        kwargs: dict[str, Any] = {"trust_remote_code": True}
        if spec.get("dtype"):
            kwargs["model_kwargs"] = {"torch_dtype": spec["dtype"]}
        if base_revision and revision is not None:
            source, revision = _adapter_with_base_revision(source, revision, base_revision), None
        if variant in ("jina-v5-omni", "bidirlm-omni"):  # their wrappers pass a video processor
            from transformers import AutoVideoProcessor

            extra: dict[str, Any] = {"do_sample_frames": False}
            if variant == "jina-v5-omni":  # jina: the evaluation sizes its custom code expects
                extra = {"size": {"longest_edge": 12_845_056, "shortest_edge": 262_144}}
            video = AutoVideoProcessor.from_pretrained(source, revision=revision, trust_remote_code=True, **extra)
            kwargs["processor_kwargs"] = {"video_processor": video}
        return st.SentenceTransformer(source, revision=revision, device=device, **kwargs)

    def config(self):
        spec = ST_VARIANTS[self.variant]
        return {
            "variant": self.variant,
            "pooling": "sentence-transformers",
            "audio_input": spec["audio_input"],
            "task": spec.get("task"),
            "audio_prompt": self.audio_prompt,
            "text_prompt": self.text_prompt,
            "text_max_tokens": spec.get("text_max_tokens"),
            "max_seconds": self.max_seconds,
            "batching": self.batching,
            "base_revision": self.base_revision,
        }

    def _set_text_limit(self, text_only: bool):
        spec = ST_VARIANTS[self.variant]
        cap = spec.get("text_max_tokens")
        first = self.model[0] if hasattr(self.model, "__getitem__") else None
        if cap and first is not None and hasattr(first, "processing_kwargs"):
            first.processing_kwargs["text"] = {"truncation": True, "max_length": cap} if text_only else {}
        if cap and hasattr(self.model, "max_seq_length"):
            self.model.max_seq_length = cap if text_only else 32768

    def _encode(self, items, prompt):
        kwargs = {"convert_to_numpy": True, "show_progress_bar": False}
        task = ST_VARIANTS[self.variant].get("task")
        if task:
            kwargs["task"] = task
        if prompt in ("query", "document"):  # the checkpoint's own prompt for that role
            encode = getattr(self.model, f"encode_{prompt}", self.model.encode)
            return np.asarray(encode(items, **kwargs), dtype=np.float32)
        return np.asarray(self.model.encode(items, prompt=prompt, **kwargs), dtype=np.float32)

    def embed_audio(self, clips):
        self._set_text_limit(False)
        items: list[Any]
        if ST_VARIANTS[self.variant]["audio_input"] == "array":
            items = [np.asarray(c, dtype=np.float32) for c in clips]
        else:
            items = [{"audio": {"array": np.asarray(c, dtype=np.float32), "sampling_rate": self.sample_rate}} for c in clips]
        return self._encode(items, self.audio_prompt)

    def embed_text(self, texts):
        self._set_text_limit(True)
        return self._encode(list(texts), self.text_prompt)


def _adapter_with_base_revision(model: str, revision: str, base_revision: str) -> str:
    """A local view of a LoRA adapter whose adapter_config.json names its base model at a pinned
    revision (sentence-transformers does not pass the revision on), as mteb builds it."""
    import json
    import tempfile
    from pathlib import Path

    from huggingface_hub import snapshot_download

    snapshot = Path(snapshot_download(model, revision=revision))
    config = json.loads((snapshot / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = snapshot_download(config["base_model_name_or_path"], revision=base_revision)
    local = Path(tempfile.mkdtemp(prefix=f"maeb_{model.replace('/', '__')}_"))
    for item in snapshot.iterdir():
        if item.name != "adapter_config.json":
            (local / item.name).symlink_to(item)
    (local / "adapter_config.json").write_text(json.dumps(config, indent=2))
    return str(local)


class EBindEncoder(AudioEncoderBase, TextEncoderBase):
    """EBind: audio through its ImageBind processor from 16-bit WAV files (the processor takes
    paths), clips under one 25 ms window padded, projection, L2-normalised; texts likewise."""

    min_samples = 0
    software = (*SOFTWARE, "ebind")

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, batching=UNSET, protocol=None):
        ebind = require("ebind", "ebind")
        rules = protocol_rules(protocol, "ebind")
        source, revision = model_source(meta, path)
        self.model = ebind.EBindModel.from_pretrained(source, revision=revision).to(device).eval()
        self.processor = ebind.EBindProcessor.from_pretrained(source, revision=revision).to(device)
        self.sample_rate = 16000
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", None))
        self.batching = pick(batching, rules, "batching", "padded")
        self.device = device

    def config(self):
        return {"pooling": "projection-l2", "wav": "PCM_16", "min_window_seconds": 0.025, "max_seconds": self.max_seconds}

    def embed_audio(self, clips):
        import math
        import tempfile

        import soundfile as sf

        torch = import_torch()
        tensors = []
        for clip in clips:
            need = math.ceil(self.sample_rate * 0.025)
            clip = np.pad(clip, (0, max(0, need - len(clip))))
            with tempfile.NamedTemporaryFile(suffix=".wav") as tmp:
                sf.write(tmp.name, clip, self.sample_rate)
                tensors.append(self.processor.processors["audio"](tmp.name))
        with torch.inference_mode():
            out = self.model.forward(audio=torch.stack(tensors).to(self.device))
        return _l2(sum(out.values()))

    def embed_text(self, texts):
        torch = import_torch()
        with torch.inference_mode():
            processed = self.processor({"text": list(texts)}, return_tensors="pt")
            out = self.model.forward(text=processed["text"])
        return _l2(sum(out.values()))
