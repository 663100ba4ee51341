"""Text-to-audio generation scored as MMAG scores it (MMAG: A Multi-Control Mixed Audio Generation
Benchmark, Zheng et al.; maeb.audiogen).

Each row asks a system for one clip: a caption (overall, or timestamped), the words to be spoken,
an optional voice prompt, optional structured fields, a target duration and a seed. The system's
clips are written beside the result (maeb.audiogen.store) and read once, in batches, by every
scorer the subset asks for (maeb.audiogen.registry): FD, KL, IS on CNN14; Audiobox Aesthetics
PQ, PC, CE, CU; CLAP caption-audio similarity; WER with its caption-leak diagnostics; UTMOSv2;
AnyAudio-Judge; SPK-SIM on the voice-cloning subset; SpeechF1 and SoundF1 on the timestamp
subset. A metric whose package or reference model is missing is reported as missing (null, with
the reason in the result's evaluation section), never as 0. FD and IS are one value for the set;
the others are means over clips (per-clip values in per_clip.jsonl beside the result)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..core.errors import DataError, SpecError
from ..core.taskspec import TaskSpec
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType

if TYPE_CHECKING:
    from ..engine.embed import Embedder

MAIN_METRICS = ["fd", "kl", "is", "pq", "pc", "ce", "cu", "clap", "wer", "hit_rate", "wer_caps", "proportion", "utmos", "aaj"]
SUBSET_METRICS = {"voice_cloning": ["spk_sim"], "timestamp": ["speech_f1", "sound_f1"]}


def wanted_metrics(p: dict, subset: str, where: str) -> dict[str, list[str]]:
    """Scorer group -> the metric keys this subset asks of it, in the spec's order."""
    from ..audiogen.registry import group_of

    groups: dict[str, list[str]] = {}
    for key in dict.fromkeys([*p["metrics"], *p["subset_metrics"].get(subset, [])]):
        groups.setdefault(group_of(key, where), []).append(key)
    return groups


def _cell(table, column: str, i: int):
    return table[column][i] if column in table else None


def _json_cell(value, what: str, key: str):
    if value is None or isinstance(value, (dict, list)):
        return value
    text = str(value).strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"clip {key!r}: {what} is not JSON ({exc.msg} at {exc.pos})") from exc


def requests_of(table, p: dict, prompt_rate: int, where: str) -> list:
    """The table's rows as synthesis requests (voice prompts decoded at the system's rate)."""
    from ..audio.pipeline import LengthPolicy, load
    from ..audiogen.request import SynthesisRequest

    table.require([p["key_column"], p["caption_column"]], "audio generation columns")
    policy = LengthPolicy(sample_rate=prompt_rate, max_seconds=None)
    out, seen = [], set()
    for i in range(len(table)):
        key = str(table[p["key_column"]][i])
        if key in seen:
            raise DataError(f"{where}: key {key!r} appears twice; each clip needs its own key")
        seen.add(key)
        duration = _cell(table, p["duration_column"], i)
        try:
            duration = float(duration) if duration not in (None, "") else p["default_duration"]
        except (TypeError, ValueError) as exc:
            raise DataError(f"{where}: clip {key!r}: duration {duration!r} is not a number") from exc
        if not duration > 0:
            raise DataError(f"{where}: clip {key!r}: duration {duration} must be positive")
        prompt = _cell(table, p["voice_prompt_column"], i)
        structured = _json_cell(_cell(table, p["structured_column"], i), p["structured_column"], key)
        if structured is not None and not isinstance(structured, dict):
            raise DataError(f"{where}: clip {key!r}: {p['structured_column']} must be a JSON object")
        out.append(
            SynthesisRequest(
                key=key,
                caption=str(table[p["caption_column"]][i]),
                duration=duration,
                seed=p["seed"],
                timestamped_caption=_cell(table, p["timestamped_column"], i) or None,
                transcript=_cell(table, p["transcript_column"], i) or None,
                voice_prompt=load(prompt, policy) if prompt is not None else None,
                voice_prompt_rate=prompt_rate if prompt is not None else None,
                structured=structured,
            )
        )
    return out


def _build_scorers(groups: dict[str, list[str]], p: dict, emb) -> tuple[dict, dict, dict]:
    from ..audiogen import registry
    from ..audiogen.metric import MetricUnavailable

    unknown = set(p["scorers"]) - set(registry.GROUPS)
    if unknown:
        raise SpecError(f"[protocol] scorers: unknown group {sorted(unknown)[0]!r}; known: {', '.join(registry.GROUPS)}")
    scorers, missing, provenance = {}, {}, {}
    for group, keys in groups.items():
        try:
            options = p["scorers"].get(group, {})
            scorers[group] = registry.build(group, tuple(keys), options, emb.ctx.device, emb.ctx.cache_dir, emb.judge)
        except MetricUnavailable as exc:
            missing.update({k: str(exc) for k in keys})
            provenance[group] = {"available": False, "reason": str(exc)}
    return scorers, missing, provenance


def _reference(table, column: str, i: int):
    from ..audio.pipeline import decode

    ref = _cell(table, column, i)
    if ref is None:
        return None, None
    return decode(ref.read(), ref.name)


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


class AudioGeneration(TaskType):
    """The audio generation task type (the module's docstring says what it scores and how)."""

    NAME = "audio_generation"
    MAIN_SCORE = "clap"
    PARAMS = {
        "metrics": Param(MAIN_METRICS, "metrics of every subset (MMAG's main set; ce, cu from its appendix)", items=str),
        "subset_metrics": Param(SUBSET_METRICS, "metrics a subset adds, by subset name"),
        "scorers": Param(
            {},
            "options by scorer group (cnn14, aesthetics, clap, wer, utmos, spk_sim, timing, aaj): the reference model, "
            "revision or local path, or an offline stand-in; each group's options are in its maeb/audiogen module",
        ),
        "generation": Param({}, "settings handed to the system's synthesize(requests, settings=...) (part of each file's name)"),
        "seed": Param(0, "generation seed of every request", min=0, max=2**32 - 1),
        "default_duration": Param(10.0, "target seconds where the data gives no duration", min=0.1),
        "key_column": Param("key", "unique id of each clip (names the generated file)"),
        "caption_column": Param("caption", "overall caption"),
        "transcript_column": Param("transcript", "words to be spoken (absent or empty: none)"),
        "timestamped_column": Param("timestamped_caption", "caption with intervals (timestamp subset)"),
        "voice_prompt_column": Param("voice_prompt", "audio of the voice to clone (voice-cloning subset)"),
        "duration_column": Param("duration", "target seconds"),
        "structured_column": Param("structured", "JSON object of structured fields (speaker, events, music, script)"),
        "rubrics_column": Param("rubrics", "JSON list of rubric questions for AnyAudio-Judge (absent: from the judge)"),
        "score_batch": Param(16, "generated clips each scorer sees at once (memory bound)", min=1),
    }

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """Every metric the MMAG groups can report."""
        from ..audiogen.registry import KEY_GROUP

        return tuple(KEY_GROUP)

    def needs(self, spec: TaskSpec) -> set[str]:
        """The side of the model the type uses: a text-to-audio system."""
        return {"synthesize"}

    def check_columns(self, spec: TaskSpec, table: Any) -> None:
        """Key and caption columns; reference recordings are optional (FD and KL need them)."""
        if hasattr(table, "columns"):
            table.require([spec.protocol["key_column"], spec.protocol["caption_column"]], "audio generation columns")

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: the system writes (or has written) one clip per row, then each MMAG metric group scores the clips;
        metrics a group cannot compute here are listed, not guessed."""
        from ..audiogen.metric import GeneratedItem, MetricUnavailable
        from ..audiogen.registry import GROUPS
        from ..audiogen.store import generated_folder, read_generated, synthesize, system_rate, system_record

        p = spec.protocol
        table = data[split]
        subset = getattr(state, "subset", "default")
        where = emb.context
        engine = cast(
            "Embedder", emb
        )  # the engine's own functions run the embedder's loop: they take it whole, beyond Embeddings
        groups = wanted_metrics(p, subset, f"task {spec.name} [protocol]")
        requests = requests_of(table, p, system_rate(engine), where)
        folder = generated_folder(engine, spec.name) / subset / split
        paths, hashes = synthesize(engine, requests, p["generation"], folder)
        scorers, missing, provenance = _build_scorers(groups, p, emb)
        audio_col = spec.data.audio_column
        step = p["score_batch"]
        for start in emb.progress(list(range(0, len(requests), step)), "scoring"):
            items = []
            for i in range(start, min(start + step, len(requests))):
                audio, rate = read_generated(paths[i], hashes[i])
                reference, reference_rate = _reference(table, audio_col, i)
                rubrics = _json_cell(_cell(table, p["rubrics_column"], i), p["rubrics_column"], requests[i].key)
                items.append(GeneratedItem(requests[i], audio, rate, reference, reference_rate, rubrics))
            for scorer in scorers.values():
                scorer.update(items)
        values: dict[str, float | None] = {}
        per_clip: dict[str, dict] = {r.key: {"file": paths[i].name} for i, r in enumerate(requests)}
        for group, scorer in scorers.items():
            try:
                out = scorer.result()
            except MetricUnavailable as exc:
                missing.update({k: str(exc) for k in groups[group]})
                provenance[group] = {"available": False, "reason": str(exc)}
                continue
            provenance[group] = {"available": True, "keys": groups[group], **scorer.provenance()}
            for key in groups[group]:
                value = out.get(key)
                if value is None or not np.isfinite(value):
                    missing[key] = f"{group} gave no value for {key}"
                else:
                    values[key] = float(value)
            for clip_key, row in (getattr(scorer, "per_clip", None) or {}).items():
                per_clip.setdefault(clip_key, {}).update(row)
        wanted = [k for keys in groups.values() for k in keys]
        if spec.main_score in missing:
            raise DataError(
                f"{where}: the main score {spec.main_score} is missing ({missing[spec.main_score]}); "
                "the generated clips are kept, rerun once the scorer is available or choose another main_score"
            )
        set_level = sorted({k for g in groups for k in GROUPS[g].set_level} & set(wanted))
        metrics_out = {k: values.get(k) for k in wanted}
        metrics_out["n_clips"] = len(requests)
        info = {
            "scorers": provenance,
            "missing_metrics": missing,
            "set_level_metrics": set_level,
            "lower_is_better": sorted(k for k in wanted if self.lower_is_better(k)),
            "system": system_record(engine),
            "generated_folder": str(folder),
            "generation": p["generation"],
        }
        lines = "".join(json.dumps({"key": k, **v}, sort_keys=True, default=_plain) + "\n" for k, v in per_clip.items())
        return Evaluation(metrics=metrics_out, info=info, files={"per_clip.jsonl": lines})
