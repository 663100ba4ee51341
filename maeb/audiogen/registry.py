"""The one registry of audio-generation scorers. A scorer group computes one or more result keys
from one pass over the generated clips (CNN14 gives FD, KL and IS from the same forward); a spec
names the keys it wants and, per group, the options of its reference model (the defaults are the
MMAG paper's models; MMAG-lite names the offline stand-ins)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..core.errors import SpecError
from .metric import MetricUnavailable


@dataclass(frozen=True)
class ScorerGroup:
    """One scorer group: the metric keys it gives and how it is built."""

    keys: tuple[str, ...]  # result keys the group can give (a spec asks for some of them)
    factory: str  # "module:callable"(keys: tuple[str, ...], options: dict, device: str, cache_dir) -> Metric
    needs_reference: bool = False  # needs the real recording of each scene
    needs_voice_prompt: bool = False
    needs_timestamps: bool = False
    set_level: tuple[str, ...] = ()  # keys that are one value for the whole set, not a mean over clips
    # a key's direction, range and baselines live in its metric record (maeb.metrics.scores), not here


GROUPS: dict[str, ScorerGroup] = {
    "cnn14": ScorerGroup(
        ("fd", "kl", "is"),
        "maeb.audiogen.distribution:CNN14Scores",
        needs_reference=True,
        set_level=("fd", "is"),
    ),
    "aesthetics": ScorerGroup(("pq", "pc", "ce", "cu"), "maeb.audiogen.aesthetics:AestheticsScores"),
    "clap": ScorerGroup(("clap",), "maeb.audiogen.clapscore:ClapScore"),
    "wer": ScorerGroup(
        ("wer", "hit_rate", "wer_caps", "proportion"),
        "maeb.audiogen.speech:WERScore",
    ),
    "utmos": ScorerGroup(("utmos",), "maeb.audiogen.speech:UTMOSScore"),
    "spk_sim": ScorerGroup(("spk_sim",), "maeb.audiogen.speech:SpeakerSimilarity", needs_voice_prompt=True),
    "timing": ScorerGroup(("speech_f1", "sound_f1"), "maeb.audiogen.timing:TimestampF1", needs_timestamps=True),
    "aaj": ScorerGroup(("aaj",), "maeb.audiogen.judge:AnyAudioJudge"),
}
KEY_GROUP = {key: name for name, group in GROUPS.items() for key in group.keys}


def group_of(key: str, where: str) -> str:
    """The scorer group that gives a metric key, or a SpecError naming it."""
    if key not in KEY_GROUP:
        raise SpecError(f"{where}: unknown generation metric {key!r}; known: {', '.join(KEY_GROUP)}")
    return KEY_GROUP[key]


def build(group: str, keys: tuple[str, ...], options: dict, device: str, cache_dir, judge=None):
    """The group's scorer; raises MetricUnavailable (its package or model is missing). The run's
    LLM judge goes to factories that take one (AnyAudio-Judge writes rubrics with it)."""
    import inspect

    module, attr = GROUPS[group].factory.split(":")
    try:
        factory = getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise MetricUnavailable(f"{group}: {exc}") from exc
    extra = {"judge": judge} if "judge" in inspect.signature(factory).parameters else {}
    return factory(keys=keys, options=dict(options), device=device, cache_dir=cache_dir, **extra)
