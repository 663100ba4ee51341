"""Hub-layout datasets of real MAEB task definitions, filled with real recordings (../shared/data).

Each task folder has the column layout mteb 2.26.24's task class reads (written by the parity
suite's `write_repo`, so mteb reads it through `mteb.get_task(NAME)` with its dataset path pointed
here and maeb through tasks/maeb/NAME.toml with `data.path` replaced, both from the same bytes).
The recordings are FSDD (8 kHz WAV, resampled to 16 kHz by both sides) and Speech Commands
(16 kHz FLAC). Folders are built under a git-ignored build folder, never inside the shared data;
two sizes: "quick" (tens of clips, for --quick) and "full" (hundreds to thousands).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the parity builders live in tests/parity
    sys.path.insert(0, str(ROOT))

from tests.parity import datasets as pdata  # noqa: E402

BUILD_VERSION = "2"
SEED = 13
DEFAULT_SHARED = ROOT.parent / "shared" / "data"


def _rows(shared: Path, name: str) -> list[dict]:
    with open(shared / name / "metadata.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["path"] = shared / name / r["file_name"]
    return rows


def _cell(row: dict) -> dict:
    # the Audio feature's storage: the file's bytes and its name (the extension tells the decoder)
    return {"bytes": Path(row["path"]).read_bytes(), "path": Path(row["file_name"]).name}


def _per_label(rows: list[dict], label: str, n: int, rng: np.random.Generator) -> list[dict]:
    """n rows of each label (fewer where a label has fewer), in a seeded order."""
    out = []
    for value in sorted({r[label] for r in rows}):
        pool = [r for r in rows if r[label] == value]
        out += [pool[i] for i in sorted(rng.choice(len(pool), min(n, len(pool)), replace=False))]
    return out


def _fsdd(folder: Path, shared: Path, size: str, rng) -> None:
    # the usual FSDD split: takes 0-4 test, the rest train (quick: 2 speakers' take 0 / 4 speakers' take 1)
    rows = _rows(shared, "fsdd")
    if size == "quick":
        speakers = sorted({r["speaker"] for r in rows})
        test = [r for r in rows if r["take"] == "0" and r["speaker"] in speakers[:2]]
        train = [r for r in rows if r["take"] == "1" and r["speaker"] in speakers[2:6]]
    else:
        test = [r for r in rows if int(r["take"]) < 5]
        train = [r for r in rows if int(r["take"]) >= 5]
    split = lambda rs: {"audio": [_cell(r) for r in rs], "label": [int(r["digit"]) for r in rs]}  # noqa: E731
    pdata.write_repo(folder, {"default": {"train": split(train), "test": split(test)}})


def _speech_commands(folder: Path, shared: Path, size: str, rng) -> None:
    # the 12-class labels; test and train drawn per label from the test set's clips, disjoint
    rows = _rows(shared, "speech_commands_test")
    labels = sorted({r["label"] for r in rows})
    picked = _per_label(rows, "label", 4 if size == "quick" else 70, rng)
    test = [r for i, r in enumerate(picked) if i % 2 == 0]
    train = [r for i, r in enumerate(picked) if i % 2 == 1]
    split = lambda rs: {"audio": [_cell(r) for r in rs], "label": [labels.index(r["label"]) for r in rs]}  # noqa: E731
    pdata.write_repo(folder, {"default": {"train": split(train), "test": split(test)}})


def _clustering(folder: Path, shared: Path, size: str, rng) -> None:
    # ESC50Clustering's layout (audio, target) with FSDD digits as the clusters
    rows = _rows(shared, "fsdd")
    picked = _per_label(rows, "digit", 3 if size == "quick" else 30, rng)
    write = {"audio": [_cell(r) for r in picked], "target": [int(r["digit"]) for r in picked]}
    pdata.write_repo(folder, {"default": {"train": write}})


def _pairs(folder: Path, shared: Path, size: str, rng) -> None:
    # CREMADPairClassification's layout: pairs of Speech Commands clips (same label or not), each
    # clip in several pairs as in the real dataset, so clips embedded > unique clips
    rows = _rows(shared, "speech_commands_test")
    base = _per_label(rows, "label", 2 if size == "quick" else 25, rng)
    n_pairs = len(base) if size == "quick" else 2 * len(base)
    a1, a2, same = [], [], []
    for _ in range(n_pairs):
        i = int(rng.integers(len(base)))
        # half the pairs share a label
        pool = [j for j, r in enumerate(base) if j != i and (r["label"] == base[i]["label"]) == (len(same) % 2 == 0)]
        j = int(pool[int(rng.integers(len(pool)))])
        a1.append(_cell(base[i]))
        a2.append(_cell(base[j]))
        same.append(int(base[i]["label"] == base[j]["label"]))
    columns = {"audio1": a1, "audio2": a2, "label": same}
    pdata.write_repo(folder, {"default": {"test": columns}}, audio_columns=("audio1", "audio2"))


def _reranking(folder: Path, shared: Path, size: str, rng) -> None:
    # ESC50AudioReranking's layout: Speech Commands queries, each with 3 same-label and 7 other
    # candidates from a corpus of other clips
    rows = _rows(shared, "speech_commands_test")
    picked = _per_label(rows, "label", 6 if size == "quick" else 24, rng)
    queries = picked[::6]
    corpus = [r for i, r in enumerate(picked) if i % 6]
    q_ids = [f"q{i}" for i in range(len(queries))]
    c_ids = [f"c{i}" for i in range(len(corpus))]
    qq, qc, qs, ranked = [], [], [], []
    for qi, q in enumerate(queries):
        same = [j for j, r in enumerate(corpus) if r["label"] == q["label"]]
        other = [j for j, r in enumerate(corpus) if r["label"] != q["label"]]
        pos = [int(v) for v in rng.choice(same, min(3, len(same)), replace=False)]
        cands = pos + [int(v) for v in rng.choice(other, 7, replace=False)]
        rng.shuffle(cands)
        for j in pos:
            qq.append(q_ids[qi])
            qc.append(c_ids[j])
            qs.append(1)
        ranked.append([c_ids[j] for j in cands])
    pdata.write_repo(
        folder,
        {
            "corpus": {"test": {"id": c_ids, "audio": [_cell(r) for r in corpus]}},
            "queries": {"test": {"id": q_ids, "audio": [_cell(r) for r in queries]}},
            "default": {"test": {"query-id": qq, "corpus-id": qc, "score": qs}},
            "top_ranked": {"test": {"query-id": q_ids, "corpus-ids": ranked}},
        },
    )


# real MAEB task name -> (what fills it, builder)
TASKS: dict[str, tuple[str, Callable]] = {
    "FSDD": ("FSDD digits, classification", _fsdd),
    "SpeechCommands": ("Speech Commands, 12 labels, classification", _speech_commands),
    "ESC50Clustering": ("FSDD digits as clusters", _clustering),
    "CREMADPairClassification": ("Speech Commands pairs (same label)", _pairs),
    "ESC50AudioReranking": ("Speech Commands queries and candidates", _reranking),
}


def build(root: Path, names: list[str], size: str, shared: Path = DEFAULT_SHARED) -> dict[str, Path]:
    """Build (or reuse) root/size/NAME for each task; name -> folder."""
    if not (shared / "fsdd" / "metadata.csv").exists():
        raise SystemExit(f"bench: no FSDD under {shared}; pass --shared-data")
    out = {}
    for name in names:
        folder = Path(root) / size / name
        stamp = folder / ".bench-build.json"
        want = {"version": BUILD_VERSION, "seed": SEED, "size": size}
        if not (stamp.exists() and json.loads(stamp.read_text()) == want):
            shutil.rmtree(folder, ignore_errors=True)
            tmp = folder.parent / f".{name}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            TASKS[name][1](tmp, shared, size, np.random.default_rng([SEED, len(name)]))
            (tmp / ".bench-build.json").write_text(json.dumps(want))
            tmp.rename(folder)
        out[name] = folder
    return out


PREPARE = (
    "import sys; from pathlib import Path; from maeb.core.context import RunContext; from maeb.spec.loader import load_task; "
    "from maeb.spec.taskspec import load_spec; load_task(load_spec(sys.argv[1]), RunContext(cache_dir=Path(sys.argv[2])))"
)


def prepare_maeb(python: str, spec_file: Path, cache_dir: Path) -> None:
    """Read the task once through maeb's loader, so its cache holds the converted dataset (as after
    a download); the runs that are timed then start with that and no embeddings."""
    subprocess.run([python, "-c", PREPARE, str(spec_file), str(cache_dir)], cwd=ROOT, check=True, capture_output=True)


def fresh_embeddings(cache_dir: Path) -> None:
    """A maeb cache with its converted datasets kept and every embedding removed."""
    shutil.rmtree(Path(cache_dir) / "embeddings", ignore_errors=True)


def task_data(name: str):
    """The parity suite's task record (what scripts/parity.py's helpers take)."""
    return pdata.TaskData(name, TASKS[name][0])
