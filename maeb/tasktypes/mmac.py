"""Dimension-targeted caption judging (MMAC). The model captions each clip from one open prompt;
for each of the clip's target dimensions (e.g. speaker gender = female) an LLM judge decides whether
the caption mentions the dimension and, if so, how well it agrees with the label (binary or graded,
normalised to 0-1). Per dimension: Coverage = mentioned / valid, Precision = mean score over the
mentioned, Accuracy = mean score over all valid with omissions scored 0. Dimensions are averaged
within each category, then the categories equally. MMAC's paper has six categories: content,
background, persona, paralinguistic, dynamic and implication (5,638 clips, 13.04 h; English, and
its dynamic subset also has Chinese). A target naming another category is an error naming its
clip, so a typo cannot add a seventh category to the average (set protocol.categories = [] for local
data with categories of its own). Replies that do not parse are counted (unparsed_replies) and their
items left out; so are judgements the judge could not give (judge_failed, with the first reasons in
judge_failures; not cached, so a rerun asks only them).

maeb's judge prompt is its own (prompt_version maeb-mmac-v1), not taken from MMAC: scores are
comparable between maeb runs with the same judge, not with the paper's tables.

Local folder format (MMAC's data is not public yet): annotations.jsonl, one clip per line:
  {"id": "clip-1", "audio": "audio/clip-1.wav", "targets": [
     {"dimension": "speaker gender", "category": "persona", "label": "female", "scale": "binary"}, ...]}"""

from __future__ import annotations

import json
import re

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType
from .generative import GENERATION_DOC, csv_file, generation_settings, require_judge

JUDGE_PROMPT = (
    "You are evaluating an audio caption against one annotated property of the audio.\n"
    "[Caption]\n{caption}\n[Property]\n{dimension}\n[Annotated value]\n{label}\n"
    "First decide whether the caption says anything about this property at all. If it does, rate how well "
    "what it says agrees with the annotated value: {scale_rule}\n"
    'Reply with one JSON object and nothing else: {{"mentioned": true or false, "score": number}} '
    "(use score 0 when the property is not mentioned)."
)
CATEGORIES = ["content", "background", "persona", "paralinguistic", "dynamic", "implication"]  # MMAC's paper
SCALE_RULES = {"binary": "1 if it agrees, 0 if it does not.", "graded": "a number from 0 (contradicts) to 1 (fully agrees)."}


def parse_judgement(reply: str, scale: str) -> tuple[bool, float] | None:
    """(mentioned, score in [0, 1]) from the judge's JSON, or None if it cannot be read."""
    match = re.search(r"\{.*\}", reply, re.S)
    if not match:
        return None
    try:
        obj = json.loads(match.group(0))
        mentioned = obj["mentioned"]
        score = float(obj.get("score", 0.0))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    if isinstance(mentioned, str):
        mentioned = mentioned.strip().lower() in ("true", "yes", "1")
    if not isinstance(mentioned, bool) or not 0.0 <= score <= 1.0:
        return None
    if scale == "binary" and score not in (0.0, 1.0):
        score = 1.0 if score >= 0.5 else 0.0
    return mentioned, (score if mentioned else 0.0)


def aggregate(records: list[tuple[str, str, bool, float]]) -> dict:
    """records: (category, dimension, mentioned, score)."""
    dims: dict[tuple[str, str], list[tuple[bool, float]]] = {}
    for category, dimension, mentioned, score in records:
        dims.setdefault((category, dimension), []).append((mentioned, score))
    out: dict = {}
    per_category: dict[str, dict[str, list[float]]] = {}
    for (category, dimension), items in sorted(dims.items()):
        said = [s for m, s in items if m]
        values = {
            "coverage": len(said) / len(items),
            "precision": sum(said) / len(said) if said else 0.0,
            "accuracy": sum(s for _, s in items) / len(items),
        }
        for metric, value in values.items():
            out[f"{metric}_{dimension}"] = value
            per_category.setdefault(category, {}).setdefault(metric, []).append(value)
    for metric in ("coverage", "precision", "accuracy"):
        category_means = {c: sum(m[metric]) / len(m[metric]) for c, m in per_category.items()}
        for category, value in category_means.items():
            out[f"{metric}_{category}"] = value
        out[metric] = sum(category_means.values()) / len(category_means) if category_means else float("nan")
    return out


def _check_category(target: dict, key, p: dict, spec) -> None:
    allowed = p["categories"]
    if allowed and target.get("category") not in allowed:
        raise DataError(
            f"{spec.name}: clip {key!s}: target {target.get('dimension')!r} has category {target.get('category')!r}; "
            f"MMAC's categories are {', '.join(allowed)} (set protocol.categories = [] to allow others)"
        )


class CaptionJudging(TaskType):
    """The mmac task type (the module's docstring says what it scores and how)."""

    NAME = "mmac"
    MAIN_SCORE = "accuracy"
    PARAMS = {
        "prompt": Param("Describe this audio in detail.", "the one caption prompt sent with every clip"),
        "generation": Param({"max_new_tokens": 512}, GENERATION_DOC),
        "judge_prompt": Param(JUDGE_PROMPT, "judge prompt with {caption}, {dimension}, {label}, {scale_rule} (maeb's own)"),
        "prompt_version": Param("maeb-mmac-v1", "name of the judge prompt, recorded in every result"),
        "categories": Param(CATEGORIES, "categories a target may name (MMAC's six); [] accepts any (local data of one's own)"),
        "targets_column": Param("targets", "column holding each clip's list of target dimensions"),
        "key_column": Param("id", "column naming each clip in errors and caption files (absent: the row number)"),
    }

    def needs(self, spec: TaskSpec) -> set[str]:
        """The sides the type uses: text generation and an LLM judge."""
        return {"generate", "judge"}

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: caption each clip, have the judge rate each target dimension, and report coverage, precision and
        accuracy per dimension, category and overall."""
        p = spec.protocol
        require_judge(emb, spec)
        table = data[split]
        audio = spec.data.audio_column
        table.require([audio, p["targets_column"]])
        keys = table[p["key_column"]] if p["key_column"] in table else [str(i) for i in range(len(table))]
        for key, targets in zip(keys, table[p["targets_column"]]):  # before generating: a typo costs no model time
            for target in targets:
                _check_category(target, key, p, spec)
        captions, ok = emb.generate(table[audio], [p["prompt"]] * len(table), generation_settings(p))
        prompts, owners, labels = [], [], []
        for i in range(len(table)):
            if not ok[i]:
                continue
            for target in table[p["targets_column"]][i]:
                scale = target.get("scale", "binary")
                prompts.append(
                    p["judge_prompt"].format(
                        caption=captions[i],
                        dimension=target["dimension"],
                        label=target["label"],
                        scale_rule=SCALE_RULES.get(scale, SCALE_RULES["binary"]),
                    )
                )
                owners.append((target["category"], target["dimension"], scale))
                labels.append(f"clip {keys[i]} / {target['dimension']}")
        replies = emb.judge.ask(prompts, labels, progress=lambda it, n: emb.progress_iter(it, n, "judge"), context=emb.context)
        records, unparsed = [], 0
        for (category, dimension, scale), reply in zip(owners, replies.texts):
            if reply is None:  # the judge failed on it: counted in judge_failed, left out like an unparsed reply
                continue
            parsed = parse_judgement(reply, scale)
            if parsed is None:
                unparsed += 1
                continue
            records.append((category, dimension, *parsed))
        out = aggregate(records)
        out.update(
            {
                "n_clips": int(ok.sum()),
                "judgements": len(prompts),
                "unparsed_replies": unparsed,
                **replies.record(),
                "judge": emb.judge.describe(p["prompt_version"]),
                "generation": generation_settings(p),
            }
        )
        return Evaluation(
            out, files={"captions.csv": csv_file([(str(keys[i]), captions[i]) for i in range(len(table)) if ok[i]])}
        )
