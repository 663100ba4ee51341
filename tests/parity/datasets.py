"""Hub-layout datasets on disk for real MAEB task definitions.

Each task gets a folder laid out as its Hugging Face dataset repo is (a README whose `configs:` list
names parquet files per config and split, Audio columns stored with the plain `Audio()` feature as on
the hub), with the column layout mteb 2.26.24's task class reads (its `dataset_transform` or own
`load_data` included). mteb's own task class reads it once its metadata's dataset path names the
folder (`load_dataset` ignores the revision of a local folder); maeb reads it through its catalog
spec (tasks/maeb/NAME.toml) with `data.path` replaced. Both therefore read the same bytes.

Audio is WAV (16-bit and 32-bit float PCM) and FLAC, which libsndfile (maeb) and FFmpeg through
torchcodec (datasets, so mteb) decode to identical samples; MP3 is avoided because decoders differ in
their start padding. Content: tones, harmonics, chirps, pulses and noise whose recipe depends on the
label, jittered per clip, so probes, clusters and rankings are not trivial. Deterministic from SEED.

The hard cases each sit in one place (see HARD_CASES): sources at 8 kHz, 44.1 kHz and 48 kHz (and
mixed rates in one split), stereo clips, clips over 30 s and one over 240 s, an uneven
cross-validation fold, a multilingual task with several subsets, a clustering label -1, a retrieval
query whose qrels are all zero, a reranking query without candidates, a corpus of more than 1,000
documents, document texts with edge spaces and titles.
"""

from __future__ import annotations

import io
import json
import shutil
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SEED = 20260226
BUILD_VERSION = "2"


# -- audio ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Recipe:
    f0: float  # Hz
    harmonics: int
    chirp: float = 1.0  # end/start frequency ratio
    am: float = 0.0  # amplitude-modulation rate (Hz)
    noise: float = 0.05
    brightness: float = 0.8  # harmonic amplitude decay


RECIPES = [
    Recipe(180.0, 4, noise=0.02),
    Recipe(420.0, 2, am=4.0),
    Recipe(260.0, 6, chirp=2.0, brightness=0.6),
    Recipe(900.0, 1, noise=0.25),
    Recipe(130.0, 8, am=9.0, brightness=0.9),
    Recipe(640.0, 3, chirp=0.5),
    Recipe(1500.0, 1, am=2.5, noise=0.1),
    Recipe(330.0, 5, noise=0.4, brightness=0.5),
]
CAPTION_WORDS = {
    0: "a low steady hum",
    1: "a pulsing mid whistle",
    2: "a rising buzzy chirp",
    3: "a hissing high tone in noise",
    4: "a deep rattling drone",
    5: "a falling bright sweep",
    6: "a soft beeping signal",
    7: "a rough noisy growl",
}
CAPTION_WORDS_LIST = sorted({w for text in CAPTION_WORDS.values() for w in text.split()} | {"with", "and", "some", "sound"})


def synth(rng: np.random.Generator, labels, seconds: float, rate: int, channels: int = 1) -> np.ndarray:
    """One clip: the sum of the recipes of `labels` (an int or a list), jittered; (n,) or (n, channels)."""
    labels = [labels] if isinstance(labels, (int, np.integer)) else list(labels)
    n = max(1, int(round(seconds * rate)))
    t = np.arange(n, dtype=np.float64) / rate
    x = np.zeros(n)
    for label in labels:
        r = RECIPES[int(label) % len(RECIPES)]
        f0 = r.f0 * rng.uniform(0.94, 1.06)
        if r.chirp != 1.0:
            k = np.log(r.chirp) / seconds
            phase = 2 * np.pi * f0 * (np.exp(k * t) - 1) / k
        else:
            phase = 2 * np.pi * f0 * t
        top = f0 * max(r.chirp, 1.0)
        for h in range(1, r.harmonics + 1):
            if h * top >= 0.45 * rate:
                break
            x += (r.brightness ** (h - 1)) * np.sin(h * phase + rng.uniform(0, 2 * np.pi))
        if r.am:
            x *= 0.55 + 0.45 * np.sin(2 * np.pi * r.am * rng.uniform(0.9, 1.1) * t + rng.uniform(0, 2 * np.pi))
        x += r.noise * rng.standard_normal(n) * 2
    x += 0.01 * rng.standard_normal(n)
    x *= rng.uniform(0.3, 0.8) / max(np.max(np.abs(x)), 1e-9)
    if channels == 1:
        return x.astype(np.float32)
    # a second channel: the same source, delayed and quieter, with its own noise
    delay = int(rng.integers(1, 40))
    right = 0.7 * np.concatenate([np.zeros(delay), x[:-delay]]) + 0.02 * rng.standard_normal(n)
    return np.stack([x, right], axis=1).clip(-1, 1).astype(np.float32)


def encode(samples: np.ndarray, rate: int, fmt: str = "wav16") -> bytes:
    import soundfile as sf

    container, subtype = {"wav16": ("WAV", "PCM_16"), "wavf": ("WAV", "FLOAT"), "flac": ("FLAC", "PCM_16")}[fmt]
    buf = io.BytesIO()
    sf.write(buf, samples, rate, format=container, subtype=subtype)
    return buf.getvalue()


class Clips:
    """Makes encoded clips and counts them (and their seconds) for the report."""

    def __init__(self, task: str):
        self.rng = np.random.default_rng([SEED, zlib.crc32(task.encode())])
        self.count = 0
        self.seconds = 0.0

    def make(self, labels, seconds=None, rate=16000, fmt="wav16", channels=1) -> dict:
        seconds = float(self.rng.uniform(0.5, 1.5)) if seconds is None else float(seconds)
        self.count += 1
        self.seconds += seconds
        data = encode(synth(self.rng, labels, seconds, rate, channels), rate, fmt)
        suffix = "flac" if fmt == "flac" else "wav"
        return {"bytes": data, "path": f"clip{self.count:05d}.{suffix}"}


# -- hub layout -------------------------------------------------------------------------------
def write_repo(folder: Path, configs: dict[str, dict[str, dict[str, list]]], audio_columns=("audio",)) -> None:
    """configs -> splits -> columns, written as the hub stores a dataset: parquet per config/split,
    Audio columns with the plain `Audio()` feature (decodable, as on the hub; maeb.mock.write_hub_repo
    stores `Audio(decode=False)`, which mteb would read back as undecoded bytes)."""
    from datasets import Audio, Dataset

    lines = ["---", "configs:"]
    for config, splits in configs.items():
        lines += [f"- config_name: {config}", "  data_files:"]
        for split, columns in splits.items():
            ds = Dataset.from_dict(dict(columns))
            for column in audio_columns:
                if column in ds.column_names:
                    ds = ds.cast_column(column, Audio())
            path = folder / config / f"{split}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            ds.to_parquet(str(path))
            lines += [f"  - split: {split}", f"    path: {config}/{split}-*.parquet"]
    lines.append("---")
    (folder / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- tasks ------------------------------------------------------------------------------------
@dataclass
class TaskData:
    name: str  # the real MAEB task (mteb.get_task(name), tasks/maeb/{name}.toml)
    kind: str  # the task type, for the table
    needs_text: bool = False  # only for families with a text side
    hf_subsets: list[str] | None = None  # restrict mteb's task and maeb's spec to these subsets
    hard_cases: list[str] = field(default_factory=list)
    clips: int = 0
    seconds: float = 0.0
    build: object = None


def _beijing_opera(folder: Path, c: Clips) -> None:
    # 47 clips -> 5 folds of 10, 10, 9, 9, 9: an uneven cross-validation fold; 44.1 kHz, some stereo
    labels = [i % 4 for i in range(47)]
    audio = [
        c.make(y, rate=44100, channels=2 if i % 5 == 0 else 1, fmt="flac" if i % 3 else "wav16") for i, y in enumerate(labels)
    ]
    write_repo(folder, {"default": {"train": {"audio": audio, "label": labels}}})


AGES = ["teens", "twenties", "thirties", "fourties"]


def _common_language_age(folder: Path, c: Clips) -> None:
    # string labels, a separate train split, rows the task's dataset_transform drops; 8 kHz FLAC
    def split(n: int, extra: list[str]) -> dict:
        ages = [AGES[i % 4] for i in range(n)] + extra
        return {"audio": [c.make(AGES.index(a) if a in AGES else 7, rate=8000, fmt="flac") for a in ages], "age": ages}

    write_repo(folder, {"default": {"train": split(32, ["not_defined", "eighties"]), "test": split(20, ["not_defined"])}})


def _voxpopuli_gender(folder: Path, c: Clips) -> None:
    # binary labels from strings (dataset_transform maps gender -> gender_id); clips over 30 s and
    # one over 240 s (the last row, so mteb's batch of 32 holds it with one other clip)
    n = 34
    genders = ["female" if i % 2 else "male" for i in range(n)]
    seconds = [None] * n
    seconds[5], seconds[12], seconds[20], seconds[33] = 31.5, 44.0, 61.0, 241.0
    audio = [c.make(4 if g == "male" else 1, seconds=s, rate=16000, fmt="wav16") for g, s in zip(genders, seconds)]
    languages = [["en", "fr", "es", "pl", "de"][i % 5] for i in range(n)]
    write_repo(folder, {"default": {"train": {"audio": audio, "gender": genders, "language": languages}}})


SIB_SUBSETS = ["afr_Latn", "deu_Latn", "eng_Latn"]
SIB_CATEGORIES = ["science/technology", "travel", "politics"]


def _cv_balanced_labels(n: int, classes: list, seed: int = 42, n_splits: int = 5) -> list:
    """Labels for n rows such that every test fold of mteb's KFold(n_splits, shuffle, seed) holds
    every class. mteb 2.26.24 computes a binary average precision whenever a test fold holds two
    distinct labels, which raises for string labels (abstasks/classification.py:473-476), so a
    fold of a multi-class task must not hold exactly two."""
    from sklearn.model_selection import KFold

    labels = [None] * n
    for _, test in KFold(n_splits=n_splits, shuffle=True, random_state=seed).split(range(n)):
        for j, i in enumerate(sorted(test)):
            labels[i] = classes[j % len(classes)]
    return labels


def _sib_fleurs(folder: Path, c: Clips) -> None:
    # a multilingual task: one config per language, cross-validation within each; 16 kHz, one at 48 kHz
    configs = {}
    for j, subset in enumerate(SIB_SUBSETS):
        cats = _cv_balanced_labels(20 + 2 * j, SIB_CATEGORIES)
        rate = 48000 if subset == "deu_Latn" else 16000
        audio = [c.make(SIB_CATEGORIES.index(k) + 2 * j, rate=rate, fmt="flac") for k in cats]
        configs[subset] = {"train": {"audio": audio, "category": cats}}
    write_repo(folder, configs)


TAGS = ["Speech", "Music", "Dog", "Vehicle", "Rain"]


def _audioset_mini(folder: Path, c: Clips) -> None:
    # multilabel lists of strings; 48 kHz
    def split(n: int, offset: int) -> dict:
        rows = []
        for i in range(n):
            k = (i + offset) % 5
            tags = sorted({TAGS[k], TAGS[(k + 1 + i % 3) % 5]} if i % 3 else {TAGS[k]})
            rows.append(tags)
        audio = [c.make([TAGS.index(t) for t in tags], rate=48000, fmt="wav16") for tags in rows]
        return {"audio": audio, "human_labels": rows}

    write_repo(folder, {"default": {"train": split(40, 0), "test": split(20, 2)}})


def _esc50_zeroshot(folder: Path, c: Clips) -> None:
    # integer targets indexing the task's 50 candidate prompts; five classes present; 22.05 kHz
    targets = [i % 5 for i in range(25)]
    audio = [c.make(t, rate=22050, fmt="wav16") for t in targets]
    write_repo(folder, {"default": {"train": {"audio": audio, "target": targets}}})


def _esc50_clustering(folder: Path, c: Clips) -> None:
    # five clusters and three rows labelled -1 (mteb drops them); 16 kHz
    targets = [i % 5 for i in range(35)] + [-1, -1, -1]
    audio = [c.make(t if t >= 0 else 6, rate=16000, fmt="wav16") for t in targets]
    write_repo(folder, {"default": {"train": {"audio": audio, "target": targets}}})


def _cremad_pairs(folder: Path, c: Clips) -> None:
    # pairs of clips (shared between pairs, as in the real dataset); 16 kHz
    base_labels = [i % 4 for i in range(16)]
    base = [c.make(y, rate=16000, fmt="wav16") for y in base_labels]
    a1, a2, same = [], [], []
    rng = np.random.default_rng([SEED, 7])
    for _ in range(40):
        i, j = (int(v) for v in rng.choice(16, 2, replace=False))
        a1.append(base[i])
        a2.append(base[j])
        same.append(int(base_labels[i] == base_labels[j]))
    write_repo(folder, {"default": {"test": {"audio1": a1, "audio2": a2, "label": same}}}, audio_columns=("audio1", "audio2"))


def _jamalt_artist(folder: Path, c: Clips) -> None:
    # one config ("pure") whose rows carry their language; four subsets; stereo 44.1 kHz
    rows = {"audio": [], "text": [], "song_name": [], "line_indices": [], "artist": [], "song_language": []}
    for lang_i, lang in enumerate(["en", "fr", "de", "es"]):
        for artist_i in range(3):
            for song_i in range(2):
                for line in range(1 + (artist_i + song_i + lang_i) % 2):
                    artist = f"{lang}-artist{artist_i}"
                    rows["audio"].append(c.make(artist_i + 3 * (lang_i % 2), rate=44100, channels=2, fmt="flac"))
                    rows["text"].append(f"line {line} of song {song_i}")
                    rows["song_name"].append(f"{artist}-song{song_i}")
                    rows["line_indices"].append([line, line + 1])
                    rows["artist"].append(artist)
                    rows["song_language"].append(lang)
    write_repo(folder, {"pure": {"test": rows}})


def _caption(rng: np.random.Generator, label: int) -> str:
    extra = ["", " with some noise", " and a sound", " with a hum"][int(rng.integers(0, 4))]
    return CAPTION_WORDS[label % len(CAPTION_WORDS)] + extra


def _audiocaps_t2a(folder: Path, c: Clips) -> None:
    # audio corpus at mixed rates (8, 16, 44.1, 48 kHz in one split); text queries; one query whose
    # qrels are all zero; one query with two relevant clips
    rng = np.random.default_rng([SEED, 11])
    rates = [8000, 16000, 44100, 48000]
    corpus_labels = [i % 8 for i in range(32)]
    corpus = {
        "id": [f"a{i}" for i in range(32)],
        "audio": [c.make(y, rate=rates[i % 4], fmt=["wav16", "wavf", "flac"][i % 3]) for i, y in enumerate(corpus_labels)],
    }
    q_ids, q_text, qq, qc, qs = [], [], [], [], []
    for i in range(24):
        q_ids.append(f"q{i}")
        q_text.append(_caption(rng, corpus_labels[i]))
        qq.append(f"q{i}")
        qc.append(f"a{i}")
        qs.append(1)
    qq.append("q3")
    qc.append("a11")
    qs.append(1)
    q_ids.append("qzero")
    q_text.append(_caption(rng, 2))
    qq += ["qzero", "qzero"]
    qc += ["a2", "a10"]
    qs += [0, 0]
    write_repo(
        folder,
        {
            "corpus": {"test": corpus},
            "queries": {"test": {"id": q_ids, "text": q_text}},
            "default": {"test": {"query-id": qq, "corpus-id": qc, "score": qs}},
        },
    )


def _audiocaps_a2t(folder: Path, c: Clips) -> None:
    # audio queries (48 kHz); a text corpus of 1,100 captions, some with leading or trailing spaces
    # and some with a title; one query whose qrels are all zero
    rng = np.random.default_rng([SEED, 13])
    n_docs = 1100
    doc_labels = [int(rng.integers(0, 8)) for _ in range(n_docs)]
    texts, titles = [], []
    for i, y in enumerate(doc_labels):
        text = _caption(rng, y)
        if i % 7 == 1:
            text = " " + text
        if i % 11 == 2:
            text = text + "  "
        texts.append(text)
        titles.append(["", "", "", "sound", " field recording "][i % 5] if i % 13 in (0, 4) else "")
    q_labels = doc_labels[:20]
    queries = {"id": [f"q{i}" for i in range(20)], "audio": [c.make(y, rate=48000) for y in q_labels]}
    qq, qc, qs = [], [], []
    for i in range(19):
        qq.append(f"q{i}")
        qc.append(f"d{i}")
        qs.append(1)
        # a second caption of the same clip further down the corpus
        qq.append(f"q{i}")
        qc.append(f"d{i + 500}")
        qs.append(1)
    qq += ["q19", "q19"]
    qc += ["d19", "d519"]
    qs += [0, 0]
    for i in range(19):
        texts[i + 500] = _caption(rng, q_labels[i]) + " "
    write_repo(
        folder,
        {
            "corpus": {"test": {"id": [f"d{i}" for i in range(n_docs)], "title": titles, "text": texts}},
            "queries": {"test": queries},
            "default": {"test": {"query-id": qq, "corpus-id": qc, "score": qs}},
        },
    )


def _esc50_reranking(folder: Path, c: Clips) -> None:
    # audio queries, audio corpus, 13 candidates per query, one query with no candidates; 48 kHz
    rng = np.random.default_rng([SEED, 17])
    corpus_labels = [i % 5 for i in range(30)]
    corpus = {"id": [f"c{i}" for i in range(30)], "audio": [c.make(y, rate=48000) for y in corpus_labels]}
    q_labels = [0, 1, 2, 3, 4, 0, 2]
    queries = {"id": [f"q{i}" for i in range(7)], "audio": [c.make(y, rate=48000) for y in q_labels]}
    qq, qc, qs, ranked = [], [], [], []
    for i, y in enumerate(q_labels):
        same = [j for j, z in enumerate(corpus_labels) if z == y]
        other = [j for j, z in enumerate(corpus_labels) if z != y]
        pos = [int(v) for v in rng.choice(same, 3, replace=False)]
        neg = [int(v) for v in rng.choice(other, 10, replace=False)]
        cands = pos + neg
        rng.shuffle(cands)
        for j in pos:
            qq.append(f"q{i}")
            qc.append(f"c{j}")
            qs.append(1)
        ranked.append([f"c{j}" for j in cands] if i != 5 else [])
    write_repo(
        folder,
        {
            "corpus": {"test": corpus},
            "queries": {"test": queries},
            "default": {"test": {"query-id": qq, "corpus-id": qc, "score": qs}},
            "top_ranked": {"test": {"query-id": queries["id"], "corpus-ids": ranked}},
        },
    )


TASKS: dict[str, TaskData] = {
    t.name: t
    for t in [
        TaskData(
            "BeijingOpera",
            "classification (cross-validation)",
            hard_cases=["44.1 kHz", "stereo", "uneven CV fold"],
            build=_beijing_opera,
        ),
        TaskData(
            "CommonLanguageAgeDetection",
            "classification (train split)",
            hard_cases=["8 kHz", "string labels", "rows dropped by dataset_transform"],
            build=_common_language_age,
        ),
        TaskData(
            "VoxPopuliGenderID",
            "binary classification (CV)",
            hard_cases=["clips > 30 s", "one clip > 240 s"],
            build=_voxpopuli_gender,
        ),
        TaskData(
            "SIBFLEURS",
            "classification, multilingual",
            hf_subsets=SIB_SUBSETS,
            hard_cases=["several subsets", "48 kHz -> 16 kHz"],
            build=_sib_fleurs,
        ),
        TaskData("AudioSetMini", "multilabel", hard_cases=["48 kHz"], build=_audioset_mini),
        TaskData("ESC50_Zeroshot", "zero-shot", needs_text=True, build=_esc50_zeroshot),
        TaskData("ESC50Clustering", "clustering", hard_cases=["label -1"], build=_esc50_clustering),
        TaskData("CREMADPairClassification", "pair classification", build=_cremad_pairs),
        TaskData(
            "JamAltArtistA2ARetrieval", "retrieval a2a, multilingual", hard_cases=["stereo", "4 subsets"], build=_jamalt_artist
        ),
        TaskData(
            "AudioCapsT2ARetrieval",
            "retrieval t2a",
            needs_text=True,
            hard_cases=["mixed rates in a split", "all-zero qrels"],
            build=_audiocaps_t2a,
        ),
        TaskData(
            "AudioCapsA2TRetrieval",
            "retrieval a2t",
            needs_text=True,
            hard_cases=["corpus > 1000", "edge spaces", "titles", "all-zero qrels"],
            build=_audiocaps_a2t,
        ),
        TaskData("ESC50AudioReranking", "reranking", hard_cases=["query without candidates"], build=_esc50_reranking),
    ]
}


def array_key(samples: np.ndarray) -> str:
    """A key for a decoded clip (float32 mono at its own rate), the same on both sides: datasets'
    torchcodec decoding and libsndfile give identical samples for these files."""
    import hashlib

    return hashlib.blake2b(np.ascontiguousarray(samples, dtype=np.float32).tobytes(), digest_size=16).hexdigest()


def clip_keys(folder: Path) -> dict[str, str]:
    """Decoded-clip key -> maeb's embedding-cache key (blake2b of the encoded bytes) for every audio
    cell in a task folder; cached beside the data."""
    import hashlib

    import pyarrow.parquet as pq
    import soundfile as sf

    cache = Path(folder) / ".parity-clip-keys.json"
    if cache.exists():
        return json.loads(cache.read_text())
    out = {}
    for path in sorted(Path(folder).rglob("*.parquet")):
        table = pq.read_table(path)
        for name in table.column_names:
            if not str(table.schema.field(name).type).startswith("struct<bytes"):
                continue
            for cell in table.column(name).to_pylist():
                data = cell["bytes"]
                samples, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
                mono = samples[:, 0] if samples.shape[1] == 1 else samples.mean(axis=1, dtype=np.float32)
                out[array_key(mono)] = hashlib.blake2b(data, digest_size=16).hexdigest()
    cache.write_text(json.dumps(out))
    return out


def build(root: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Build (or reuse) each task's folder under root; fills TaskData.clips/seconds; name -> folder."""
    root = Path(root)
    out = {}
    for name in names or list(TASKS):
        task = TASKS[name]
        folder = root / name
        stamp = folder / ".parity-build.json"
        if stamp.exists():
            info = json.loads(stamp.read_text())
            if info.get("version") == BUILD_VERSION and info.get("seed") == SEED:
                task.clips, task.seconds = info["clips"], info["seconds"]
                out[name] = folder
                continue
        if folder.exists():
            shutil.rmtree(folder)
        tmp = root / f".{name}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        clips = Clips(name)
        task.build(tmp, clips)
        task.clips, task.seconds = clips.count, round(clips.seconds, 1)
        info = {"version": BUILD_VERSION, "seed": SEED, "clips": task.clips, "seconds": task.seconds}
        (tmp / ".parity-build.json").write_text(json.dumps(info))
        tmp.rename(folder)
        out[name] = folder
    return out
