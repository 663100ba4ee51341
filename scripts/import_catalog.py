"""Regenerate tasks/maeb/*.toml and tasks/benchmarks.toml (the MAEB+ catalog).

  python scripts/import_catalog.py --reference ../shared/reference/maeb_tasks.json

Facts come from two places: the reference snapshot of mteb's MAEB task set (hub path and revision,
splits, columns, benchmark membership) and the task registry of the pinned mteb release
(metadata, class-level protocol overrides, zero-shot prompts). What mteb does in custom loading
code is restated below, task by task, as declarative transforms and derivations; the script
checks that every task with custom code has an entry. mteb's code itself is not copied."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from toml_out import dumps  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

sys.path.insert(0, str(ROOT))
from maeb.tasktypes import mteb_types  # noqa: E402

# mteb type name -> maeb type name, from the one registry of task types
TYPES = {mteb: maeb for maeb, mteb in mteb_types(generative=False).items()}

MUSIC = {
    "BeijingOpera",
    "GTZANGenre",
    "MridinghamStroke",
    "MridinghamTonic",
    "NSynth",
    "GTZANGenreClustering",
    "MusicGenreClustering",
    "GTZANAudioReranking",
    "JamAltArtistA2ARetrieval",
    "JamAltLyricA2TRetrieval",
    "JamAltLyricT2ARetrieval",
    "MusicCapsA2TRetrieval",
    "MusicCapsT2ARetrieval",
}
BIO = {"BirdCLEF", "BirdSet"}
ENVIRONMENTAL = {
    "AmbientAcousticContext",
    "AmbientAcousticContextClustering",
    "AudioSet",
    "AudioSetMini",
    "ESC50",
    "ESC50Clustering",
    "ESC50PairClassification",
    "ESC50AudioReranking",
    "ESC50_Zeroshot",
    "FSD50K",
    "FSD2019Kaggle",
    "GunshotTriangulation",
    "TUTAcousticScenes",
    "UrbanSound8k",
    "UrbanSound8kZeroshot",
    "UrbanSound8KAudioReranking",
    "UrbanSound8KA2TRetrieval",
    "UrbanSound8KT2ARetrieval",
    "VehicleSoundClustering",
    "FSDnoisy18kAudioReranking",
    "AudioCapsA2TRetrieval",
    "AudioCapsT2ARetrieval",
    "AudioSetStrongA2TRetrieval",
    "AudioSetStrongT2ARetrieval",
    "ClothoA2TRetrieval",
    "ClothoT2ARetrieval",
    "MACSA2TRetrieval",
    "MACST2ARetrieval",
    "SoundDescsA2TRetrieval",
    "SoundDescsT2ARetrieval",
}

# variants of one task on one source (versions, sizes): task selection keeps one per family
FAMILIES = {
    "speech-commands-zeroshot": ["SpeechCommandsZeroshotv0.01", "SpeechCommandsZeroshotv0.02"],
    "audioset-tagging": ["AudioSet", "AudioSetMini"],
    "common-voice-t2a": ["CommonVoiceMini17T2ARetrieval", "CommonVoiceMini21T2ARetrieval"],
    "common-voice-a2t": ["CommonVoiceMini17A2TRetrieval", "CommonVoiceMini21A2TRetrieval"],
}

GENDER = {"female": 0, "male": 1}
BIRDSET_NAMES = {
    0: "Gray-crowned Rosy-Finch",
    1: "White-crowned Sparrow",
    2: "American Pipit",
    3: "Spotted Sandpiper",
    4: "Rock Wren",
    5: "Brewer's Blackbird",
    6: "Dark-eyed Junco",
    7: "Fox Sparrow",
    8: "Clark's Nutcracker",
    9: "Mountain Bluebird",
    10: "Cassin's Finch",
    11: "Mallard",
    12: "Hermit Thrush",
    13: "American Robin",
    14: "Yellow-rumped Warbler",
    15: "Yellow Warbler",
    16: "Dusky Flycatcher",
    17: "Mountain Chickadee",
    18: "Orange-crowned Warbler",
    19: "Warbling Vireo",
    20: "Northern Flicker",
}
IEMOCAP_EMOTIONS = ["angry", "sad", "happy", "neutral", "frustrated", "excited", "fear", "surprise", "disgust", "other"]


def subsample(column, split, n=2048):
    return {"op": "stratified_subsample", "column": column, "n": n, "splits": [split]}


def rows(direction, id_template, text, audio="audio", **extra):
    return {
        "kind": "rows",
        "direction": direction,
        "id_template": id_template,
        "text_column": text,
        "audio_column": audio,
        **extra,
    }


CLOTHO_NOTE = (
    "mteb splits each caption string on '.', so the empty piece after the final full stop becomes an "
    "extra, empty caption (Clotho v1 in MAEB). Kept as MAEB ran it; the fixed variant drops empty pieces."
)
FLEURS_NOTE = (
    "FLEURS reuses one sentence id for each of its recordings, so queries and documents repeat ids; "
    "mteb merges them per id in its search heap. maeb reproduces that merge (see retrieval.search)."
)
JAMALT_NOTE = (
    "Ids are corpus-/query- prefixed, so each line's own recording is one of its relevant documents "
    "(and is not ignored), as in mteb."
)

# What mteb's custom loading code does, task by task.
CUSTOM: dict[str, dict] = {
    "CommonLanguageAgeDetection": {
        "transforms": [{"op": "filter", "column": "age", "drop": ["not_defined", "eighties"]}, subsample("age", "test")]
    },
    "CommonLanguageGenderDetection": {"transforms": [subsample("gender", "test")]},
    "CommonLanguageLanguageDetection": {"transforms": [subsample("language", "test")]},
    "IEMOCAPEmotion": {
        "transforms": [
            {"op": "filter", "column": "major_emotion", "drop_empty": True},
            {
                "op": "map",
                "column": "major_emotion",
                "to": "emotion",
                "lowercase": True,
                "unmapped": "drop",
                "mapping": {e: i for i, e in enumerate(IEMOCAP_EMOTIONS)},
            },
        ]
    },
    "IEMOCAPGender": {
        "transforms": [
            {"op": "map", "column": "gender", "to": "gender_id", "unmapped": "error", "mapping": {"Female": 0, "Male": 1}}
        ]
    },
    "SpokenQAForIC": {"data": {"split_names": {"train": "test"}}},
    "VocalSound": {"data": {"split_names": {"train": "val"}}},
    "VoxCelebSA": {
        "data": {"split_names": {"train": "test"}},
        "transforms": [{"op": "filter", "column": "label", "drop": ["Disagreement"]}],
    },
    "VoxPopuliAccentID": {
        "data": {"split_names": {"train": "test"}},
        "transforms": [{"op": "drop_invalid_audio", "min_samples": 500}],
        "notes": "mteb drops clips under 500 samples, with NaN/inf or that do not decode.",
    },
    "VoxPopuliGenderID": {
        "transforms": [{"op": "map", "column": "gender", "to": "gender_id", "unmapped": "error", "mapping": GENDER}]
    },
    "VoxPopuliLanguageID": {
        "transforms": [{"op": "drop_invalid_audio", "min_samples": 500}],
        "notes": "mteb drops clips under 500 samples or with NaN/inf.",
    },
    "CREMA_DClustering": {"transforms": [subsample("label", "train")]},
    "VoxCelebClustering": {
        "transforms": [
            {"op": "filter", "column": "label", "drop": ["Disagreement", "<mixed>"]},
            {
                "op": "map",
                "column": "label",
                "to": "label_id",
                "unmapped": "error",
                "mapping": {"Negative": 0, "Neutral": 1, "Positive": 2},
            },
            subsample("label_id", "test"),
        ]
    },
    "VoxPopuliAccentClustering": {
        "transforms": [{"op": "drop_invalid_audio", "min_samples": 1, "check_finite": False}],
        "notes": "mteb drops clips that are empty or do not decode.",
    },
    "VoxPopuliGenderClustering": {
        "transforms": [{"op": "map", "column": "gender", "to": "gender_id", "unmapped": "error", "mapping": GENDER}]
    },
    "BirdSet": {
        # mteb casts the audio to 32 kHz after its transforms: datasets decodes at that rate
        "data": {"decode_rate": 32000},
        "transforms": [
            {"op": "rename", "column": "ebird_code_multilabel", "to": "labels", "if_present": True},
            {"op": "map", "column": "labels", "unmapped": "error", "mapping": {str(k): v for k, v in BIRDSET_NAMES.items()}},
            {"op": "filter", "column": "labels", "drop_empty": True},
            subsample("labels", "test_5s"),
        ],
    },
    "UrbanSound8kZeroshot": {"transforms": [subsample("classID", "train")]},
    "ClothoT2ARetrieval": {"derive": rows("t2a", "{index}", "text", split_text="."), "notes": CLOTHO_NOTE},
    "ClothoA2TRetrieval": {"derive": rows("a2t", "{index}", "text", split_text="."), "notes": CLOTHO_NOTE},
    "CommonVoiceMini17T2ARetrieval": {"derive": rows("t2a", "{path}", "sentence")},
    "CommonVoiceMini17A2TRetrieval": {"derive": rows("a2t", "{path}", "sentence")},
    "CommonVoiceMini21T2ARetrieval": {"derive": rows("t2a", "{path}", "sentence")},
    "CommonVoiceMini21A2TRetrieval": {"derive": rows("a2t", "{path}", "sentence")},
    "FleursT2ARetrieval": {"derive": rows("t2a", "{id}", "transcription"), "notes": FLEURS_NOTE},
    "FleursA2TRetrieval": {"derive": rows("a2t", "{id}", "transcription"), "notes": FLEURS_NOTE},
    "GoogleSVQT2ARetrieval": {
        "data": {"subset_column": "locale", "audio_columns": ["waveform"]},
        "derive": rows("t2a", "{utt_id}", "text", audio="waveform"),
    },
    "GoogleSVQA2TRetrieval": {
        "data": {"subset_column": "locale", "audio_columns": ["waveform"]},
        "derive": rows("a2t", "{utt_id}", "text", audio="waveform"),
    },
    "JamAltArtistA2ARetrieval": {
        "data": {"subset_column": "song_language"},
        "notes": JAMALT_NOTE,
        "derive": rows(
            "a2a",
            "{song_name}{line_indices[0]}",
            "text",
            relevance="artist",
            query_id_prefix="query-",
            corpus_id_prefix="corpus-",
        ),
    },
    "JamAltLyricA2TRetrieval": {
        "data": {"subset_column": "song_language"},
        "notes": JAMALT_NOTE,
        "derive": rows(
            "a2t", "{song_name}{line_indices[0]}", "text", relevance="text", query_id_prefix="query-", corpus_id_prefix="corpus-"
        ),
    },
    "JamAltLyricT2ARetrieval": {
        "data": {"subset_column": "song_language"},
        "notes": JAMALT_NOTE,
        "derive": rows(
            "t2a", "{song_name}{line_indices[0]}", "text", relevance="text", query_id_prefix="query-", corpus_id_prefix="corpus-"
        ),
    },
    "FSD2019Kaggle": {},  # per-subset configs, read the standard way
    "ESC50_Zeroshot": {},
    "RavdessZeroshot": {},
    "SpeechCommandsZeroshotv0.01": {},
    "SpeechCommandsZeroshotv0.02": {},
}


def domain(name: str) -> str:
    if name in MUSIC:
        return "music"
    if name in BIO:
        return "bioacoustics"
    if name in ENVIRONMENTAL:
        return "environmental"
    return "speech"


def family(name: str) -> str | None:
    return next((f for f, members in FAMILIES.items() if name in members), None)


def parse_stats(text: str, kind: str) -> dict:
    """Per split: unique audio clips, hours and longest clip, from the reference's descriptive
    statistics (mteb's), so a dry run can size a task without downloading it."""
    import re

    out = {}
    for part in text.split(" | "):
        split, _, rest = part.partition(":")
        groups = re.findall(r"(\w*?)avg=([\d.]+)s max=([\d.]+)s tot=([\d.]+)h uniq=(\d+)", rest)
        if not groups:
            continue
        clips = sum(int(g[4]) for g in groups)
        hours = sum(float(g[3]) for g in groups)
        if kind == "pair_classification":  # the statistics describe the first clip of each pair only
            clips, hours = 2 * clips, 2 * hours
        entry = {"clips": clips, "hours": round(hours, 2), "max_seconds": max(float(g[2]) for g in groups)}
        classes = re.search(r"classes=(\d+)", rest)
        if classes:
            entry["classes"] = int(classes.group(1))
        out[split.strip()] = entry
    return out


def describe(kind: str, ref: dict, dom: str) -> str:
    what = {
        "classification": "8-shot linear probe",
        "multilabel": "multilabel linear probe (LRAP)",
        "zeroshot": "zero-shot classification from text prompts",
        "clustering": "clustering (V-measure)",
        "pair_classification": "pair classification (max AP)",
        "reranking": "reranking of candidate lists",
        "retrieval": {"a2a": "audio-to-audio retrieval", "a2t": "audio-to-text retrieval", "t2a": "text-to-audio retrieval"}.get(
            ref["category"], "retrieval"
        ),
    }[kind]
    return f"{what[0].upper()}{what[1:]} on {ref['hf_path']} ({dom})."


def build(ref: dict, task) -> tuple[dict, dict]:
    """(spec document, comments) for one task."""
    name, kind = ref["name"], TYPES[ref["type"]]
    md = task.metadata
    cols = ref["columns_and_overrides"]
    custom = CUSTOM.get(name, {})
    extra_dataset = {k: v for k, v in md.dataset.items() if k not in ("path", "revision")}
    subsets = list(task.hf_subsets)
    langs = md.eval_langs
    doc: dict = {
        "name": name,
        "type": kind,
        "description": describe(kind, ref, domain(name)),
        "category": ref["category"],
        "domains": [domain(name)],
        "main_score": ref["main_score"],
        "languages": dict(langs) if isinstance(langs, dict) else list(langs),
        "license": md.license,
        "reference": md.reference,
    }
    if family(name):
        doc["family"] = family(name)
    doc["benchmarks"] = ref["benchmarks"]
    data: dict = {"source": "hub", "path": ref["hf_path"], "revision": ref["hf_revision"]}
    if subsets != ["default"]:
        data["subsets"] = subsets
    if "name" in extra_dataset:
        data["config"] = extra_dataset["name"]
    data["eval_splits"] = ref["eval_splits"]
    if kind in ("classification", "multilabel"):
        data["train_split"] = getattr(task, "train_split", "train")
    if kind == "pair_classification":
        data["audio_columns"] = [cols.get("input1_column_name", "audio1"), cols.get("input2_column_name", "audio2")]
    elif "input_column_name" in cols and cols["input_column_name"] != "audio":
        data["audio_columns"] = [cols["input_column_name"]]
    if "label_column_name" in cols:
        data["label_column"] = cols["label_column_name"]
    if kind in ("retrieval", "reranking") and "derive" not in custom:
        data["layout"] = "retrieval"
    data.update(custom.get("data", {}))
    doc["data"] = data

    protocol: dict = {}
    if kind == "classification":
        protocol["cross_validation"] = bool(getattr(task, "is_cross_validation", False))
        for attr in ("samples_per_label", "n_experiments", "n_splits"):
            default = {"samples_per_label": 8, "n_experiments": 10, "n_splits": 5}[attr]
            if getattr(task, attr, default) != default:
                protocol[attr] = getattr(task, attr)
    elif kind == "multilabel":
        if getattr(task, "samples_per_label", 8) != 8:
            protocol["samples_per_label"] = task.samples_per_label
        protocol["max_eval_samples"] = getattr(task, "max_eval_samples", None) or 0
    elif kind == "zeroshot":
        protocol["candidate_texts"] = list(task.get_candidate_labels())
    elif kind == "pair_classification":
        protocol["audio1_column"], protocol["audio2_column"] = data["audio_columns"]
    elif kind == "clustering":
        fraction = getattr(task, "max_fraction_of_documents_to_embed", None)
        if fraction is not None:
            protocol["max_fraction_of_documents_to_embed"] = fraction
    elif kind in ("retrieval", "reranking"):
        for attr in ("ignore_identical_ids", "skip_first_result"):
            if getattr(task, attr, False):
                protocol[attr] = True
    if protocol:
        doc["protocol"] = protocol
    if custom.get("transforms"):
        doc["transforms"] = custom["transforms"]
    if custom.get("derive"):
        doc["derive"] = custom["derive"]
    if custom.get("notes"):
        doc["notes"] = custom["notes"]
    stats = parse_stats(ref["split_stats"], kind)
    if stats:
        doc["stats"] = stats
    comments = {
        "name": f"Generated by scripts/import_catalog.py from the MAEB reference and mteb {_mteb_version()}; edit the script, not this file."
    }
    return doc, comments


def _mteb_version() -> str:
    import mteb

    return mteb.__version__


def benchmarks_doc(ref: dict) -> str:
    aliases = {
        "MAEB": ["MAEB(v1)", "MAEB(beta)"],
        "MAEB(audio-only)": ["MAEB(v1, audio-only)", "MAEB(beta, audio-only)"],
        "MAEB+": ["MAEB+(beta)"],
        "MAEB(extended)": [],
    }
    order = ["MAEB", "MAEB(audio-only)", "MAEB(extended)", "MAEB+"]
    items = []
    for name in order:
        entry = {
            "name": name,
            "aliases": aliases[name],
            "tasks": ref["benchmarks"][name],
            "reference": "https://arxiv.org/abs/2602.16008",
        }
        if "FSD2019Kaggle" in ref["benchmarks"][name] and name in ("MAEB", "MAEB(audio-only)"):
            entry["subsets"] = {"FSD2019Kaggle": ["curated"]}
        items.append(entry)
    return items


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, default=ROOT.parent / "shared" / "reference" / "maeb_tasks.json")
    parser.add_argument("--out", type=Path, default=ROOT / "tasks")
    args = parser.parse_args()
    import mteb

    ref = json.loads(args.reference.read_text())
    out = args.out / "maeb"
    out.mkdir(parents=True, exist_ok=True)
    missing = []
    for task_ref in ref["tasks"]:
        task = mteb.get_task(task_ref["name"])
        own = {n for n in ("dataset_transform", "load_data", "get_candidate_labels") if n in type(task).__dict__}
        if own and task_ref["name"] not in CUSTOM:
            missing.append(task_ref["name"])
        doc, comments = build(task_ref, task)
        (out / f"{task_ref['name']}.toml").write_text(dumps(doc, comments), encoding="utf-8")
    bench_items = benchmarks_doc(ref)
    header = "# The MAEB benchmarks (arXiv 2602.16008). Generated by scripts/import_catalog.py; MAEB-lite is in lite/benchmarks.toml.\n"
    (args.out / "benchmarks.toml").write_text(header + dumps({"benchmark": bench_items}), encoding="utf-8")
    if missing:
        print(f"tasks with custom loading code but no CUSTOM entry: {missing}", file=sys.stderr)
        return 1
    print(f"wrote {len(ref['tasks'])} task specs to {out} and {len(bench_items)} benchmarks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
