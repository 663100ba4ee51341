"""What a text-to-audio system is asked for one clip, and what it declares it accepts."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# what a system may take as input (its `accepts`); a request field the system does not accept is
# left out of its input and recorded in the result, never silently dropped
INPUTS = ("caption", "timestamped_caption", "transcript", "voice_prompt", "structured")


@dataclass(frozen=True)
class SynthesisRequest:
    """One clip to generate. `caption` is the overall description; `timestamped_caption` the same
    scene with intervals such as "0.2-1.5s" (timestamp subset); `transcript` the words to be
    spoken; `voice_prompt` a mono float32 clip at `voice_prompt_rate` whose voice is to be cloned;
    `structured` free-form fields (speaker attributes, events, music, a scene script); `duration`
    the target length in seconds; `seed` the generation seed."""

    key: str
    caption: str
    duration: float
    seed: int = 0
    timestamped_caption: str | None = None
    transcript: str | None = None
    voice_prompt: np.ndarray | None = field(default=None, compare=False, repr=False)
    voice_prompt_rate: int | None = None
    structured: dict | None = field(default=None, compare=False)

    def fingerprint(self) -> str:
        """A digest of every field that changes what a system is asked (the voice prompt by content)."""
        body = {
            "key": self.key,
            "caption": self.caption,
            "duration": round(float(self.duration), 6),
            "seed": int(self.seed),
            "timestamped_caption": self.timestamped_caption,
            "transcript": self.transcript,
            "voice_prompt_rate": self.voice_prompt_rate,
            "structured": self.structured,
        }
        digest = hashlib.blake2b(json.dumps(body, sort_keys=True, default=str).encode(), digest_size=16)
        if self.voice_prompt is not None:
            digest.update(np.ascontiguousarray(self.voice_prompt, dtype=np.float32).tobytes())
        return digest.hexdigest()

    def restricted(self, accepts: tuple[str, ...]) -> SynthesisRequest:
        """The request as a system that accepts only `accepts` sees it (the caption always stays)."""
        from dataclasses import replace

        drop: dict[str, Any] = {name: None for name in INPUTS if name != "caption" and name not in accepts}
        if "voice_prompt" in drop:
            drop["voice_prompt_rate"] = None
        return replace(self, **drop)


@dataclass(frozen=True)
class Capabilities:
    """What a system takes and returns: `accepts` (a subset of INPUTS), whether it cannot run
    without a voice prompt or without structured input, and whether it returns video whose audio
    track is kept."""

    accepts: tuple[str, ...] = ("caption",)
    needs_voice_prompt: bool = False
    needs_structured: bool = False
    returns_video: bool = False

    def as_dict(self) -> dict:
        """The capabilities as results record them."""
        return {
            "accepts": list(self.accepts),
            "needs_voice_prompt": self.needs_voice_prompt,
            "needs_structured": self.needs_structured,
            "returns_video": self.returns_video,
        }


def capabilities_of(system) -> Capabilities:
    """A system's declared capabilities (the defaults when it declares none)."""
    caps = getattr(system, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else Capabilities()
