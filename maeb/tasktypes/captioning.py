"""Captioning with several references per clip, scored as MECAT-Caption scores it.

The model captions each clip once per subtask (long, short, speech, music, sound, environment),
each with its own prompt (or with one prompt for all, for models that follow no instructions).
Speech, music and sound are scored separately on pure clips (one source) and mixed clips; the
groups follow MECAT's subsets. Per metric (BLEU, FENSE, DATE):
score_caption = 0.4 (0.8 long + 0.2 short) + 0.4 (0.6 S_speech + 0.3 S_music + 0.1 S_sound)
+ 0.2 environment, each S the mean of its pure and mixed groups. A group without clips (a subsampled
run, or a subtask whose generations all failed) scores 0 under every metric, as mecat's own scorer
scores it, and is listed in empty_groups (empty_groups == [] is a complete score_caption)."""

from __future__ import annotations

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from ..metrics.textmetrics import DATE_DELTA
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType
from .generative import (
    MECAT_MIXED,
    MECAT_SCORING,
    MECAT_SUBSETS,
    cache_dir_of,
    csv_file,
    generation_settings,
    mecat_reference_dir,
    read_mecat_references,
    sentence_metrics,
    text_metrics,
)

PROMPTS = {  # MECAT's per-subtask instructions
    "long": "Listen to this audio and describe it in 1-2 sentences:",
    "short": "Listen to the audio and provide a caption for this audio within 15 words:",
    "speech": "Listen to the audio and provide a caption describing the speech content in this audio:",
    "music": "Listen to the audio and provide a caption for the music content in this audio:",
    "sound": "Listen to the audio and provide a general sound excluding speech and music:",
    "environment": "Listen to the audio and provide a caption for quality or acoustic environment for this audio:",
}
GROUPS = {  # MECAT's evaluation groups: subtask and subsets
    "content_long": ("long", MECAT_SUBSETS),
    "content_short": ("short", MECAT_SUBSETS),
    "pure_speech": ("speech", ["S00"]),
    "mixed_speech": ("speech", MECAT_MIXED),
    "pure_music": ("music", ["0M0"]),
    "mixed_music": ("music", MECAT_MIXED),
    "pure_sound": ("sound", ["00A"]),
    "mixed_sound": ("sound", MECAT_MIXED),
    "environment": ("environment", MECAT_SUBSETS),
}


def score_caption(groups: dict[str, float]) -> float:
    """MECAT's overall caption score from its group scores: content (long, short) and the speech, music and sound groups (each the
    mean of pure and mixed clips), weighted as MECAT weights them."""

    def s(name):
        return (groups[f"pure_{name}"] + groups[f"mixed_{name}"]) / 2

    return (
        0.4 * (0.8 * groups["content_long"] + 0.2 * groups["content_short"])
        + 0.4 * (0.6 * s("speech") + 0.3 * s("music") + 0.1 * s("sound"))
        + 0.2 * groups["environment"]
    )


class Captioning(TaskType):
    """The captioning task type (the module's docstring says what it scores and how)."""

    NAME = "captioning"
    MAIN_SCORE = "date_score_caption"
    PARAMS = {
        "prompts": Param(PROMPTS, "prompt per subtask (long, short, speech, music, sound, environment); MECAT's by default"),
        "single_prompt": Param(None, "one prompt for every subtask instead of prompts (models that follow no instructions)"),
        **MECAT_SCORING,
    }

    def needs(self, spec: TaskSpec) -> set[str]:
        """The side of the model the type uses: text generation."""
        return {"generate"}

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: caption each clip once per subtask and score the captions against MECAT's references (BLEU, FENSE,
        DATE per group, and the weighted overall score)."""
        p = spec.protocol
        table = data[split]
        audio, key_col = spec.data.audio_column, p["key_column"]
        table.require([audio, key_col])
        refs = read_mecat_references(str(mecat_reference_dir(p["references"], "caption")))
        rows = [i for i, k in enumerate(table[key_col]) if str(k) in refs]
        if not rows:
            raise DataError(
                f"{spec.name}: none of the {len(table)} clips has a MECAT reference (keys like {table[key_col][0]!r})"
            )
        keys = [str(table[key_col][i]) for i in rows]
        clips = [table[audio][i] for i in rows]
        settings = generation_settings(p)
        subtasks = list(PROMPTS)
        prompt_of = {sub: p["single_prompt"] or p["prompts"][sub] for sub in subtasks}
        asked = list(dict.fromkeys(prompt_of.values()))  # one call, so each clip is decoded once
        texts, ok = emb.generate([c for _ in asked for c in clips], [q for q in asked for _ in clips], settings)
        n = len(clips)
        by_prompt = {
            q: {k: t for k, t, good in zip(keys, texts[j * n : (j + 1) * n], ok[j * n : (j + 1) * n]) if good}
            for j, q in enumerate(asked)
        }
        predictions = {sub: by_prompt[prompt_of[sub]] for sub in subtasks}
        wanted = {"fense", "date"} & set(p["metrics"])
        scorer = sentence_metrics(p["sentence_model"], p["error_checker"], cache_dir=cache_dir_of(emb)) if wanted else None
        out: dict = {"n_clips": len(keys), "clips_without_reference": len(table) - len(rows)}
        per_metric: dict[str, dict[str, float]] = {}
        empty: list[str] = []
        for group, (sub, subsets) in emb.progress(list(GROUPS.items()), "MECAT groups"):
            members = [k for k in keys if refs[k]["_subset"] in subsets and k in predictions[sub]]
            values = text_metrics(
                [predictions[sub][k] for k in members],
                [list(refs[k][sub]) if isinstance(refs[k][sub], list) else [refs[k][sub]] for k in members],
                members,
                p["metrics"],
                scorer,
                DATE_DELTA[sub],
            )
            out[f"n_{group}"] = len(members)
            if not members:
                empty.append(group)
            for metric, value in values.items():
                out[f"{metric.lower()}_{group}"] = value
                per_metric.setdefault(metric.lower(), {})[group] = value
        for metric, groups in per_metric.items():
            out[f"{metric}_score_caption"] = score_caption(groups)
        # a group without clips (a subsample, or a subtask whose generations all failed) scores 0, as in
        # mecat; listed here so that a score_caption holding such a 0 is never read as a complete one
        out["empty_groups"] = empty
        out["generation"] = settings
        out["prompts"] = prompt_of
        return Evaluation(out, files={f"{sub}_caption.csv": csv_file(sorted(predictions[sub].items())) for sub in subtasks})
