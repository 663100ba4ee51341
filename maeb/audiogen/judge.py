"""AnyAudio-Judge (MMAG): the caption is split into atomic rubrics, an audio language model is
asked of each whether the generated clip satisfies it, and its answer is read from the next-token
logits: P(yes) = softmax(logit("Yes"), logit("No"))[0]. A clip's score is the mean over its
rubrics, AAJ the mean over clips.

Rubrics come from the data (a JSON list per clip, the task's rubrics column) or, without them,
from the run's LLM judge (--judge-url), which is asked once per caption (replies cached) for a
JSON list of short yes/no statements. A clip left without rubrics is skipped and counted."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from ..audio.pipeline import resample
from ..core.errors import ModelError
from ..encoders.base import torch_dtype
from .metric import GeneratedItem, MetricUnavailable

QWEN2_AUDIO = "Qwen/Qwen2-Audio-7B-Instruct"
# not pinned yet (as maeb's Qwen2-Audio-7B-Instruct entry): "main" is recorded as such; pin one with
# [protocol.scorers] aaj = { revision = "<commit>" } for results that must be reproducible
QWEN2_AUDIO_REVISION = "main"
QUESTION = "Does the audio satisfy this statement: {rubric} Answer Yes or No."
DECOMPOSE = (
    "Split this description of an audio clip into at most {n} short, atomic statements that can each "
    "be checked by listening (one sound, voice, word, instrument, order or time each). Reply with a "
    "JSON list of strings only.\n\nDescription: {caption}"
)
PROMPT_VERSION = "aaj-1"


def parse_rubrics(text: str | None) -> list[str]:
    """A judge reply (or a data cell) as a list of statements; [] when it holds none."""
    if not text:
        return []
    match = re.search(r"\[.*\]", text, flags=re.S)
    try:
        items = json.loads(match.group(0) if match else text)
    except json.JSONDecodeError:
        return []
    return [str(x).strip() for x in items if str(x).strip()] if isinstance(items, list) else []


class YesNoScorer:
    """P(yes) of a Qwen2-Audio model for (clip, statement) pairs."""

    def __init__(self, source: str, revision: str | None, device: str, dtype: str = "bfloat16"):
        import torch
        from transformers import AutoProcessor, Qwen2AudioForConditionalGeneration

        self.torch, self.device = torch, device
        self.processor = AutoProcessor.from_pretrained(source, revision=revision)
        self.processor.tokenizer.padding_side = "left"
        # transformers' stubs say str; None is its default
        model = Qwen2AudioForConditionalGeneration.from_pretrained(source, revision=revision, dtype=torch_dtype(dtype))  # type: ignore[arg-type]
        self.model = model.to(device).eval()  # type: ignore[arg-type]
        self.rate = int(self.processor.feature_extractor.sampling_rate)
        tok = self.processor.tokenizer
        self.yes, self.no = (tok.encode(w, add_special_tokens=False)[0] for w in ("Yes", "No"))
        if self.yes == self.no:
            raise ModelError(f"{source}: 'Yes' and 'No' map to one token; its tokenizer cannot give yes/no logits")

    def _text(self, statement: str) -> str:
        content = [{"type": "audio", "audio_url": "clip"}, {"type": "text", "text": QUESTION.format(rubric=statement)}]
        return self.processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )

    def p_yes(self, clips: list[np.ndarray], statements: list[str]) -> np.ndarray:
        """For each (clip, statement), the model's probability of answering yes."""
        torch = self.torch
        inputs = self.processor(
            text=[self._text(s) for s in statements], audio=clips, sampling_rate=self.rate, return_tensors="pt", padding=True
        )
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        if "input_features" in inputs:
            inputs["input_features"] = inputs["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            logits = self.model(**inputs).logits[:, -1, :].float()
        pair = torch.stack([logits[:, self.yes], logits[:, self.no]], dim=1)
        return torch.softmax(pair, dim=1)[:, 0].cpu().numpy()


class AnyAudioJudge:
    """AnyAudio-Judge: the audio LLM's mean P(yes) over each clip's rubric questions."""

    name = "aaj"
    level = "clip"

    def __init__(self, keys, options, device, cache_dir, judge=None) -> None:
        opts: dict[str, Any] = {
            "model": QWEN2_AUDIO,
            "revision": QWEN2_AUDIO_REVISION,
            "path": None,
            "dtype": "bfloat16",
            "max_rubrics": 8,
        }
        opts.update(options)
        self.options, self.judge = opts, judge
        source = opts["path"] or opts["model"]
        try:
            self.scorer = YesNoScorer(source, None if opts["path"] else opts["revision"], device, opts["dtype"])
        except (OSError, ValueError, ImportError) as exc:
            raise MetricUnavailable(f"aaj: the audio LLM {source} cannot be loaded ({type(exc).__name__}: {exc})") from exc
        self.per_clip: dict[str, dict] = {}
        self.skipped = 0

    def provenance(self) -> dict:
        """The audio LLM and its revision, as results record them."""
        return {
            "model": self.options["path"] or self.options["model"],
            "revision": None if self.options["path"] else self.options["revision"],
            "stand_in": bool(self.options["path"]),
            "question": QUESTION,
            "rubrics_from": "data, else the run's judge" if self.judge else "data",
            **({"judge": self.judge.describe(PROMPT_VERSION)} if self.judge else {}),
            "clips_without_rubrics": self.skipped,
        }

    def _rubrics(self, items: list[GeneratedItem]) -> list[list[str]]:
        given = [list(it.rubrics or []) for it in items]
        ask = [i for i, r in enumerate(given) if not r]
        if ask and self.judge is not None:
            n = self.options["max_rubrics"]
            prompts = [DECOMPOSE.format(n=n, caption=items[i].request.caption) for i in ask]
            replies = self.judge.ask(prompts, [f"clip {items[i].request.key}" for i in ask], context="aaj rubrics")
            for i, text in zip(ask, replies.texts):
                given[i] = parse_rubrics(text)[:n]
        return given

    def update(self, items: list[GeneratedItem]) -> None:
        """Score a batch of generated clips on their rubrics."""
        for item, rubrics in zip(items, self._rubrics(items)):
            if not rubrics:
                self.skipped += 1
                continue
            clip = item.audio if item.rate == self.scorer.rate else resample(item.audio, item.rate, self.scorer.rate, "soxr-hq")
            p = self.scorer.p_yes([clip] * len(rubrics), rubrics)
            self.per_clip[item.request.key] = {"aaj": float(np.mean(p)), "aaj_rubrics": len(rubrics)}

    def result(self) -> dict[str, float]:
        """The mean judge score over the clips that had rubrics."""
        if not self.per_clip:
            raise MetricUnavailable("aaj: no clip has rubrics (give a rubrics column, or --judge-url to write them)")
        return {"aaj": float(np.mean([v["aaj"] for v in self.per_clip.values()]))}
