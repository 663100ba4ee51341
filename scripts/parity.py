"""End-to-end parity of maeb with mteb 2.26.24: same data, same checkpoint, every metric.

For each (family, task) of the selection, mteb's own code (`mteb.get_task(NAME)` with its dataset
path pointed at a local hub-layout folder, `ModelMeta.load_model()` of a real model of the family
copied with `name=<checkpoint folder>`, `mteb.evaluate`) and maeb's command line
(`python -m maeb run --model <entry.toml> --tasks <spec.toml> ...` in a subprocess, maeb's own
.venv, the catalog spec tasks/maeb/NAME.toml with data.path replaced) evaluate the same tiny random
checkpoint on the same files; then every metric of every split and subset of the two result files is
compared. Which side runs first alternates by family.

    .venv-parity/bin/python scripts/parity.py                # everything (about 15 min on 2 cores)
    .venv-parity/bin/python scripts/parity.py --quick        # the quick subset (under 4 min)
    .venv-parity/bin/python scripts/parity.py --families wav2vec2-group clap --tasks BeijingOpera

    .venv-parity/bin/python scripts/parity.py --imitate generic   # both sides under another CPU's kernels

A difference is "explained" when EXPLAINED below names its family, task and metric with a cause
and a tolerance, or "explained by band" when the cell's main score differs by no more than maeb's
result's measured stability band allows (as `lite --check` judges: maeb.benchmarks.lite.check;
the band's replays move the vectors by another CPU's rounding, ties included); any other
difference above 1e-6, a crash of either side or a missing result file makes the exit status 1.
`--imitate avx2|generic|sse` reruns the script with torch's, MKL's, CTranslate2's and OpenBLAS's
instruction sets set together (maeb.run.numeric_env.IMITATE; only what this CPU can execute). The data and checkpoints are built once under .parity/ (tests/parity/).
Run inside .venv-parity (scripts/parity_env.sh builds it): mteb needs torchaudio's resampler and
torchcodec, which maeb's own .venv must not have; maeb itself runs in .venv.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.parity import checkpoints as ckpt  # noqa: E402
from tests.parity import datasets as pdata  # noqa: E402

EQUAL_TOL = 1e-6
DEFAULT_BUILD = ROOT / ".parity"
DEFAULT_PROTOCOL = "mteb-2.26"

# -- the explained cases: one place ------------------------------------------------------------
# Each entry: which families / tasks / metrics (fnmatch patterns; a metric is the score's key path
# without split and subset, list indices written [*]), the largest difference it explains (tol;
# math.inf for a key present on one side only), the cause with where it is in mteb and maeb, and
# whether the difference is accepted. accepted=True: a difference maeb keeps on purpose or cannot
# remove (the cell reads "explained" and passes). accepted=False: a diagnosed maeb divergence, to be
# fixed in maeb; the table prints the cause and the cell still fails.
# An entry with "mteb_error" instead of "metrics" explains a case mteb itself cannot run (a regex on
# its error); such a cell reads "mteb-cannot", with the cause, and does not fail the run.
EXPLAINED: list[dict] = [
    # Empty: every family x task of the suite is equal. The four divergences the suite found, and
    # maeb fixed, were: batch composition (padded layer-norm SSL models, SeamlessM4T, Qwen2-Audio:
    # maeb now batches them as mteb does, see maeb/encoders/protocols.py "batches"), cosine rounding (similarities
    # in torch as mteb computes them), top-1000 ties (mteb's topk + heap rule) and AST filterbanks
    # (maeb.audio.fbank computes the kaldi fbank of the extractor's torchaudio branch).
]

# Score keys that are not scores: mteb 2.26 writes its version into every score entry.
IGNORED_KEYS = {"mteb_version"}
# Keys maeb adds to a score entry and mteb never writes (mteb's TaskResult reads them unchanged:
# tests/parity/test_perclass_mteb.py): left out on maeb's side only, so mteb writing one would differ.
MAEB_ADDED_KEYS = {"per_class"}

# the quick selection: every task type and hard case except JamAlt (mteb's own loader decodes every row
# there, the slowest task), on four families: one clip per batch, padded ratio-pooled batches, the
# 30 s Whisper window, and a text side at 48 kHz
QUICK_FAMILIES = ["wav2vec2-group", "wavlm-layer", "whisper", "clap"]
QUICK_TASKS = [
    "BeijingOpera",
    "CommonLanguageAgeDetection",
    "VoxPopuliGenderID",
    "SIBFLEURS",
    "AudioSetMini",
    "ESC50_Zeroshot",
    "ESC50Clustering",
    "CREMADPairClassification",
    "AudioCapsT2ARetrieval",
    "AudioCapsA2TRetrieval",
    "ESC50AudioReranking",
]


# -- comparison ----------------------------------------------------------------------------------
@dataclass
class Diff:
    path: str  # split/subset/metric
    metric: str  # metric path with [*] indices
    mteb: object
    maeb: object
    size: float
    cause: str | None = None  # from EXPLAINED
    cause_name: str | None = None
    accepted: bool = False  # the cause is an accepted difference (not a maeb divergence to fix)


@dataclass
class Cell:
    family: str
    task: str
    status: str = "pending"  # equal | explained | DIFF | mteb-crash | maeb-crash | missing | mteb-cannot
    diffs: list[Diff] = field(default_factory=list)
    error: str = ""
    mteb_seconds: float | None = None
    maeb_seconds: float | None = None
    first: str = ""
    vectors: dict | None = None  # mteb's clip vectors against maeb's cache (a diagnostic, not a verdict)

    def worst(self) -> Diff | None:
        unexplained = [d for d in self.diffs if not d.accepted]
        pool = unexplained or self.diffs
        return max(pool, key=lambda d: d.size) if pool else None


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def flatten(obj, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}[{i}]"))
    elif isinstance(obj, list) and all(_is_number(v) or v is None for v in obj):
        for i, v in enumerate(obj):
            out[f"{prefix}[{i}]"] = v
        out[f"{prefix}.len"] = len(obj)
    else:
        out[prefix] = obj
    return out


def _difference(a, b) -> float:
    if _is_number(a) and _is_number(b):
        fa, fb = float(a), float(b)
        if math.isnan(fa) and math.isnan(fb):
            return 0.0
        if math.isnan(fa) or math.isnan(fb):
            return math.inf
        return abs(fa - fb)
    return 0.0 if a == b else math.inf


def compare_scores(mteb_scores: dict, maeb_scores: dict) -> list[Diff]:
    """Every metric of every split and subset; a key on one side only is a difference."""
    diffs = []
    for split in sorted(set(mteb_scores) | set(maeb_scores)):
        a_entries = {e.get("hf_subset", "default"): e for e in mteb_scores.get(split, [])}
        b_entries = {e.get("hf_subset", "default"): e for e in maeb_scores.get(split, [])}
        for subset in sorted(set(a_entries) | set(b_entries)):
            if subset not in a_entries or subset not in b_entries:
                where = "mteb" if subset in a_entries else "maeb"
                diffs.append(Diff(f"{split}/{subset}", "<subset>", where == "mteb", where == "maeb", math.inf))
                continue
            a = {k: v for k, v in flatten(a_entries[subset]).items() if k.split(".")[0] not in IGNORED_KEYS}
            b = {k: v for k, v in flatten(b_entries[subset]).items() if k.split(".")[0] not in IGNORED_KEYS | MAEB_ADDED_KEYS}
            for key in sorted(set(a) | set(b)):
                va, vb = a.get(key, "<absent>"), b.get(key, "<absent>")
                size = math.inf if key not in a or key not in b else _difference(va, vb)
                if size > EQUAL_TOL:
                    metric = re.sub(r"\[\d+\]", "[*]", key)
                    diffs.append(Diff(f"{split}/{subset}/{key}", metric, va, vb, size))
    return diffs


def explain(family: str, task: str, diffs: list[Diff]) -> None:
    for d in diffs:
        for case in EXPLAINED:
            if "metrics" not in case:
                continue
            if not (_match(family, case["families"]) and _match(task, case["tasks"]) and _match(d.metric, case["metrics"])):
                continue
            if d.size <= case["tol"]:
                d.cause, d.cause_name, d.accepted = case["cause"], case["name"], case["accepted"]
                break


def judge_by_band(diffs: list[Diff], maeb_result: dict) -> None:
    """Accept a cell's remaining differences when its main scores differ by no more than maeb's
    result's measured band allows (lite --check's allowance: 1.5 x the band, a probe's one clip)."""
    from maeb.benchmarks.lite.check import allowance

    open_ = [d for d in diffs if not d.accepted]
    mains = [d for d in diffs if d.metric == "main_score"]
    allowed, source = allowance(maeb_result)
    if not open_ or allowed <= 0 or any(d.size > allowed + EQUAL_TOL for d in mains):
        return
    if any(math.isinf(d.size) for d in open_):
        return  # a key, subset or value on one side only is a difference of shape, which no band explains
    for d in open_:
        d.cause, d.cause_name, d.accepted = f"explained by band: main score within ±{allowed:.4f} ({source})", "band", True


def _match(value: str, patterns) -> bool:
    patterns = [patterns] if isinstance(patterns, str) else patterns
    return any(fnmatch.fnmatchcase(value, p) for p in patterns)


def mteb_error_cause(family: str, task: str, error: str) -> str | None:
    for case in EXPLAINED:
        if "mteb_error" in case and _match(family, case["families"]) and _match(task, case["tasks"]):
            if re.search(case["mteb_error"], error):
                return case["cause"]
    return None


# -- the two sides -------------------------------------------------------------------------------
def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {v!r} as TOML")


def registered_entry(name: str) -> dict:
    """maeb's own registry entry (models/*.toml) of a real model, as written there."""
    for path in sorted((ROOT / "models").glob("*.toml")):
        for entry in tomllib.loads(path.read_text(encoding="utf-8")).get("model", []):
            if entry.get("name") == name:
                return entry
    raise SystemExit(f"parity: {name} is not in maeb's models/*.toml")


def write_model_entry(family: ckpt.Family, folder: Path, out: Path) -> Path:
    """The registered entry of the family's real model, renamed, with options.path = the checkpoint."""
    entry = dict(registered_entry(family.maeb_model))
    entry["name"] = f"parity/{family.key}"
    entry["options"] = {**entry.get("options", {}), "path": str(folder)}
    entry.pop("aliases", None)
    out.write_text("".join(f"{k} = {_toml_value(v)}\n" for k, v in entry.items()), encoding="utf-8")
    return out


def write_task_spec(task: pdata.TaskData, folder: Path, out: Path) -> Path:
    """tasks/maeb/NAME.toml with data.path (and, when the selection restricts them, data.subsets)
    replaced; everything else byte for byte."""
    text = (ROOT / "tasks" / "maeb" / f"{task.name}.toml").read_text(encoding="utf-8")
    lines = text.splitlines()
    section, replaced = None, False
    for i, line in enumerate(lines):
        if line.startswith("["):
            section = line.strip()
            continue
        if section == "[data]" and line.startswith("path = "):
            lines[i] = f"path = {json.dumps(str(folder))}"
            replaced = True
        if section == "[data]" and line.startswith("subsets = ") and task.hf_subsets:
            lines[i] = f"subsets = {_toml_value(task.hf_subsets)}"
    if not replaced:
        raise SystemExit(f"parity: tasks/maeb/{task.name}.toml has no data.path line")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


class _Recording:
    """Keys of the clips mteb's AudioCollator resamples, in call order, while a list is active."""

    active: list | None = None


def _record_collated_clips() -> None:
    """Wrap AudioCollator.resample_audio (every wrapper here sends each clip through it, in batch
    order, in this process) so each encode call's clips are known; values pass through unchanged."""
    import numpy as np
    from mteb.models.modality_collators import AudioCollator

    original = AudioCollator.resample_audio
    if getattr(original, "_parity_recorder", False):
        return

    def resample_audio(audio, **kwargs):
        if _Recording.active is not None:
            # decode once (a torchcodec decoder asked twice for a FLAC stream can fail to seek) and
            # hand mteb the same samples and rate it would have read from the decoder
            clip = audio["audio"]
            samples, rate = np.asarray(clip["array"]), clip["sampling_rate"]
            _Recording.active.append(pdata.array_key(samples))
            audio = {**audio, "audio": {"array": samples, "sampling_rate": rate}}
        return original(audio, **kwargs)

    resample_audio._parity_recorder = True
    AudioCollator.resample_audio = staticmethod(resample_audio)


class MtebSide:
    """mteb in this process: imported once, each model loaded once per family. Besides the result
    file, each run returns mteb's vector of every clip it embedded (keyed by the decoded clip), so
    that the vectors can be compared with maeb's embedding cache."""

    def __init__(self):
        import datasets
        import mteb
        import transformers

        warnings.filterwarnings("ignore")  # sklearn's ill-defined-metric warnings on tiny random models
        datasets.disable_progress_bars()
        transformers.logging.set_verbosity_error()
        import logging

        for name in ("mteb", "datasets", "transformers"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self.mteb = mteb
        self.version = mteb.__version__
        _record_collated_clips()

    def load(self, family: ckpt.Family, folder: Path):
        meta = self.mteb.get_model_meta(family.mteb_model)
        return meta.model_copy(update={"name": str(folder)}).load_model()

    def task(self, task: pdata.TaskData, folder: Path):
        t = self.mteb.get_task(task.name, hf_subsets=task.hf_subsets) if task.hf_subsets else self.mteb.get_task(task.name)
        dataset = {**t.metadata.dataset, "path": str(folder)}
        t.metadata = t.metadata.model_copy(update={"dataset": dataset})
        return t

    def run(self, model, task: pdata.TaskData, folder: Path, out: Path) -> tuple[float, dict]:
        import numpy as np

        t = self.task(task, folder)
        vectors: dict[str, list[np.ndarray]] = {}
        original = model.encode

        def encode(*args, **kwargs):
            keys, before = [], _Recording.active
            _Recording.active = keys
            try:
                output = original(*args, **kwargs)
            finally:
                _Recording.active = before
            rows = np.asarray(output, dtype=np.float32)
            if keys and len(keys) == len(rows):
                for key, row in zip(keys, rows):  # a clip embedded twice (pair columns) keeps both vectors
                    vectors.setdefault(key, []).append(row)
            return output

        model.encode = encode
        start = time.perf_counter()
        try:
            result = self.mteb.evaluate(
                model,
                t,
                cache=None,
                overwrite_strategy="always",
                encode_kwargs={"batch_size": 32, "show_progress_bar": False},
                show_progress_bar=False,
                co2_tracker=False,
                raise_error=True,
            )
        finally:
            del model.encode
        seconds = time.perf_counter() - start
        out.parent.mkdir(parents=True, exist_ok=True)
        result.task_results[0].to_disk(out)
        return seconds, vectors


def maeb_vectors(cache_dir: Path) -> dict:
    """Every vector in maeb's embedding caches under cache_dir, by maeb's clip key; a family batched
    as mteb batches caches one vector per clip and batch ("key|batch:tag"), so a key maps to a list."""
    import sqlite3

    import numpy as np

    out: dict[str, list] = {}
    for db in Path(cache_dir).rglob("*.sqlite"):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            for key, blob in con.execute("SELECT key, vec FROM emb"):
                out.setdefault(key.split("|batch:")[0], []).append(np.frombuffer(blob, dtype=np.float32))
        except sqlite3.Error:
            pass
        finally:
            con.close()
    return out


def compare_vectors(mteb_vectors: dict, maeb_cache: dict, keys: dict) -> dict | None:
    """mteb's vector of each clip against maeb's cached one: largest |difference|, how many clips
    differ by more than 1e-5, and how many clips could not be paired."""
    import numpy as np

    if not mteb_vectors:
        return None
    worst, over, paired, unpaired = 0.0, 0, 0, 0
    for array_key, vecs in mteb_vectors.items():
        mine = maeb_cache.get(keys.get(array_key, ""))
        if not mine or any(v.shape != m.shape for v in vecs for m in mine):
            unpaired += 1
            continue
        paired += 1
        # each of mteb's vectors of the clip against the nearest of maeb's (one per batch it was in)
        d = max(min(float(np.max(np.abs(m.astype(np.float64) - v))) if v.size else 0.0 for m in mine) for v in vecs)
        worst = max(worst, d)
        over += d > 1e-5
    return {"clips": paired, "max_abs": worst, "over_1e-5": over, "unpaired": unpaired}


def offline_env(work: Path) -> dict[str, str]:
    """The environment both sides run in: offline switches, and a datasets cache of this
    invocation (datasets keys a local folder's cache by its relative file names, so a folder
    rebuilt in place would be served the old table)."""
    env = dict(os.environ)
    env.update(
        HF_DATASETS_CACHE=str(work / "hf-datasets"),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def maeb_protocol_flag(python: str, wanted: str | None) -> list[str]:
    """`--protocol NAME` when maeb's CLI knows that protocol; nothing when it has no such flag."""
    if not wanted:
        return []
    out = subprocess.run([python, "-m", "maeb", "run", "--help"], cwd=ROOT, capture_output=True, text=True)
    if "--protocol" not in out.stdout:
        return []
    if wanted not in out.stdout:
        raise SystemExit(f"parity: maeb's --protocol does not list {wanted!r}:\n{out.stdout}")
    return ["--protocol", wanted]


def run_maeb(python, entry, specs: dict[str, Path], outdir, cachedir, env, protocol, log) -> tuple[dict[str, str], float]:
    """One subprocess for all tasks of a family; a task that makes it fail is recorded and the
    tasks after it run in a fresh process. Returns (task -> error for crashed ones, wall seconds)."""
    errors: dict[str, str] = {}
    pending = list(specs)
    start = time.perf_counter()
    while pending:
        cmd = [python, "-m", "maeb", "run", "--model", str(entry), "--tasks", *[str(specs[t]) for t in pending]]
        cmd += ["--output-dir", str(outdir), "--cache-dir", str(cachedir), "--quiet", *protocol]
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("$ " + " ".join(cmd) + "\n")
            fh.flush()
            rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
        done = {p.stem for p in Path(outdir).rglob("*.json") if p.name != "model_meta.json"}
        if rc == 0:
            for t in pending:
                if t not in done:
                    errors[t] = "maeb exited 0 without writing a result file"
            break
        missing = [t for t in pending if t not in done]
        if not missing:
            errors.setdefault("<family>", f"maeb exited {rc} after writing every result")
            break
        tail = Path(log).read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        errors[missing[0]] = f"exit {rc}: " + " | ".join(tail)
        pending = missing[1:]
    return errors, time.perf_counter() - start


def find_result(outdir: Path, task: str) -> Path | None:
    hits = [p for p in Path(outdir).rglob(f"{task}.json")]
    return hits[0] if hits else None


# -- main ----------------------------------------------------------------------------------------
def select(args) -> tuple[list[str], list[str]]:
    families = args.families or (QUICK_FAMILIES if args.quick else list(ckpt.FAMILIES))
    tasks = args.tasks or (QUICK_TASKS if args.quick else list(pdata.TASKS))
    for f in families:
        if f not in ckpt.FAMILIES:
            raise SystemExit(f"parity: unknown family {f!r}; known: {', '.join(ckpt.FAMILIES)}")
    for t in tasks:
        if t not in pdata.TASKS:
            raise SystemExit(f"parity: unknown task {t!r}; known: {', '.join(pdata.TASKS)}")
    return families, tasks


def applicable(family: ckpt.Family, task: pdata.TaskData) -> bool:
    return "text" in family.modalities or not task.needs_text


def check_oracle() -> None:
    """mteb's audio path needs torchaudio's resampler and torchcodec; stop early when this Python lacks them."""
    missing = []
    for name in ("mteb", "torchaudio.transforms", "torchcodec.decoders"):
        try:
            __import__(name)
        except Exception as exc:  # noqa: BLE001  (ImportError, or OSError from a half-installed build)
            missing.append(f"{name} ({type(exc).__name__}: {exc})")
    if missing:
        raise SystemExit(
            "parity: this Python cannot run mteb's audio path: " + "; ".join(missing) + ". Build the oracle environment with "
            "`bash scripts/parity_env.sh` and run `.venv-parity/bin/python scripts/parity.py`"
        )


def run(args) -> dict:
    check_oracle()
    families, task_names = select(args)
    build = Path(args.build_dir).resolve()
    build.mkdir(parents=True, exist_ok=True)  # a fresh clone has no .parity/ yet
    work = Path(args.work_dir).resolve() if args.work_dir else Path(tempfile.mkdtemp(prefix="run-", dir=build))
    work.mkdir(parents=True, exist_ok=True)
    env = offline_env(work)
    # mteb runs here: the same caches and offline switches, and no progress bars
    os.environ.update({k: env[k] for k in ("HF_DATASETS_CACHE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")})
    os.environ["TQDM_DISABLE"] = "1"
    maeb_python = args.maeb_python or str(ROOT / ".venv" / "bin" / "python")
    protocol = maeb_protocol_flag(maeb_python, args.protocol)

    t0 = time.perf_counter()
    data = pdata.build(build / "data", task_names)
    models = ckpt.build(build / "checkpoints", families)
    build_seconds = time.perf_counter() - t0
    side = MtebSide()
    import torch

    cells: list[Cell] = []
    family_walls = {}
    for fi, key in enumerate(families):
        family = ckpt.FAMILIES[key][0]
        tasks = [pdata.TASKS[t] for t in task_names if applicable(family, pdata.TASKS[t])]
        if not tasks:
            continue
        fam_dir = work / key
        (fam_dir / "specs").mkdir(parents=True, exist_ok=True)
        entry = write_model_entry(family, models[key], fam_dir / "entry.toml")
        specs = {t.name: write_task_spec(t, data[t.name], fam_dir / "specs" / f"{t.name}.toml") for t in tasks}
        by_task = {t.name: Cell(key, t.name) for t in tasks}
        order = ["mteb", "maeb"] if fi % 2 == 0 else ["maeb", "mteb"]
        walls = {}
        mteb_vectors: dict[str, dict] = {}
        for which in order:
            if which == "mteb":
                start = time.perf_counter()
                try:
                    model = side.load(family, models[key])
                except Exception as exc:  # noqa: BLE001  (a crash is a result here)
                    for c in by_task.values():
                        c.error = f"mteb could not load the model: {type(exc).__name__}: {exc}"
                        c.status = "mteb-crash"
                    model = None
                for t in tasks if model is not None else []:
                    cell = by_task[t.name]
                    try:
                        cell.mteb_seconds, mteb_vectors[t.name] = side.run(
                            model, t, data[t.name], fam_dir / "mteb" / f"{t.name}.json"
                        )
                    except Exception as exc:  # noqa: BLE001
                        text = f"{type(exc).__name__}: {exc}"
                        cell.error = text.strip().splitlines()[0][:400] if text.strip() else type(exc).__name__
                        cell.status = "mteb-crash"
                        with open(fam_dir / "mteb.log", "a", encoding="utf-8") as fh:
                            fh.write(f"== {t.name}\n{traceback.format_exc()}\n")
                del model
                walls["mteb"] = time.perf_counter() - start
            else:
                errors, wall = run_maeb(
                    maeb_python, entry, specs, fam_dir / "maeb", fam_dir / "maeb-cache", env, protocol, fam_dir / "maeb.log"
                )
                walls["maeb"] = wall
                for name, err in errors.items():
                    if name in by_task and by_task[name].status == "pending":
                        by_task[name].status, by_task[name].error = "maeb-crash", err
        family_walls[key] = walls
        cached = maeb_vectors(fam_dir / "maeb-cache")
        for t in tasks:
            cell = by_task[t.name]
            cell.first = order[0]
            if t.name in mteb_vectors:
                cell.vectors = compare_vectors(mteb_vectors[t.name], cached, pdata.clip_keys(data[t.name]))
            mres = fam_dir / "mteb" / f"{t.name}.json"
            bres = find_result(fam_dir / "maeb", t.name)
            if bres is not None:
                cell.maeb_seconds = json.loads(bres.read_text()).get("evaluation_time")
            if cell.status == "mteb-crash":
                cause = mteb_error_cause(key, t.name, cell.error)
                if cause:
                    cell.status, cell.error = "mteb-cannot", f"{cell.error} [{cause}]"
            if cell.status != "pending":
                cells.append(cell)
                continue
            if not mres.exists() or bres is None:
                cell.status = "missing"
                cell.error = "no result file from " + " and ".join(
                    s for s, p in (("mteb", mres.exists()), ("maeb", bres)) if not p
                )
                cells.append(cell)
                continue
            a, b = json.loads(mres.read_text()), json.loads(bres.read_text())
            cell.diffs = compare_scores(a["scores"], b["scores"])
            explain(key, t.name, cell.diffs)
            judge_by_band(cell.diffs, b)
            if not cell.diffs:
                cell.status = "equal"
            elif all(d.accepted for d in cell.diffs):
                cell.status = "explained"
            else:
                cell.status = "DIFF"
            cells.append(cell)
        print(f"[parity] {key}: " + ", ".join(f"{c.task} {c.status}" for c in cells if c.family == key), flush=True)

    protocols = sorted(
        {
            str(((json.loads(p.read_text()).get("maeb") or {}).get("protocol") or {}).get("name", "?"))
            for p in work.rglob("maeb/**/*.json")
            if p.name != "model_meta.json"
        }
    )
    report = {
        "mteb_version": side.version,
        "maeb_protocol": protocols,
        "maeb_protocol_flag": protocol,
        "maeb_python": maeb_python,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "imitated": {k: os.environ[k] for k in IMITATED_VARIABLES if k in os.environ},
        "families": families,
        "tasks": task_names,
        "build_seconds": round(build_seconds, 1),
        "total_seconds": round(time.perf_counter() - t0, 1),
        "family_walls": {k: {s: round(v, 1) for s, v in w.items()} for k, w in family_walls.items()},
        "not_built": ckpt.NOT_BUILT,
        "task_clips": {t: {"clips": pdata.TASKS[t].clips, "seconds": pdata.TASKS[t].seconds} for t in task_names},
        "cells": [_cell_json(c) for c in cells],
        "work_dir": str(work),
    }
    if not args.keep and not args.work_dir:
        shutil.rmtree(work, ignore_errors=True)
        report["work_dir"] = None
    return report


def _cell_json(c: Cell) -> dict:
    worst = c.worst()
    return {
        "family": c.family,
        "task": c.task,
        "status": c.status,
        "error": c.error,
        "first": c.first,
        "mteb_seconds": None if c.mteb_seconds is None else round(c.mteb_seconds, 2),
        "maeb_seconds": None if c.maeb_seconds is None else round(c.maeb_seconds, 2),
        "max_diff": None if worst is None else (worst.size if math.isfinite(worst.size) else "inf"),
        "metric": None if worst is None else worst.path,
        "mteb_value": None if worst is None else _plain(worst.mteb),
        "maeb_value": None if worst is None else _plain(worst.maeb),
        "cause": None if worst is None else worst.cause,
        "cause_name": None if worst is None else worst.cause_name,
        "vectors": c.vectors,
        "n_diffs": len(c.diffs),
        "n_unexplained": sum(1 for d in c.diffs if not d.accepted),
        "accepted": None if worst is None else worst.accepted,
        "diffs": [
            {
                "path": d.path,
                "mteb": _plain(d.mteb),
                "maeb": _plain(d.maeb),
                "size": d.size if math.isfinite(d.size) else "inf",
                "cause": d.cause,
                "accepted": d.accepted,
            }
            for d in c.diffs[:200]
        ],
    }


def _plain(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


FAILING = {"DIFF", "mteb-crash", "maeb-crash", "missing"}


def failures(report: dict) -> list[dict]:
    return [c for c in report["cells"] if c["status"] in FAILING]


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _vectors_text(v: dict | None) -> str:
    if not v or not v["clips"]:
        return ""
    text = f"{v['max_abs']:.0e}" if v["max_abs"] > 0 else "0"
    if v["over_1e-5"]:
        text += f" ({v['over_1e-5']}/{v['clips']})"
    return text


def print_report(report: dict, out=sys.stdout) -> None:
    w = out.write
    w(f"\nmaeb vs mteb {report['mteb_version']} end to end (maeb protocol: {', '.join(report['maeb_protocol']) or '?'}; ")
    imitated = " ".join(f"{k}={v}" for k, v in (report.get("imitated") or {}).items())
    w(f"flag {' '.join(report['maeb_protocol_flag']) or '(default)'}; torch {report['torch']}; {report['cpus']} CPUs")
    w(f"; imitated {imitated})\n" if imitated else ")\n")
    families = [f for f in report["families"] if any(c["family"] == f for c in report["cells"])]
    tasks = report["tasks"]
    code = {
        "equal": "=",
        "explained": "~",
        "DIFF": "X",
        "mteb-crash": "C!",
        "maeb-crash": "C",
        "missing": "M",
        "mteb-cannot": "n/a",
    }
    by = {(c["family"], c["task"]): c for c in report["cells"]}
    width = max([len(f) for f in families] + [6])
    w("\n" + " " * width + "  " + "  ".join(f"{i + 1:>3}" for i in range(len(tasks))) + "\n")
    for f in families:
        row = [code.get(by[(f, t)]["status"], "?") if (f, t) in by else "-" for t in tasks]
        w(f"{f:<{width}}  " + "  ".join(f"{r:>3}" for r in row) + "\n")
    w("tasks: " + "; ".join(f"{i + 1} {t}" for i, t in enumerate(tasks)) + "\n")
    w("= equal (every metric within 1e-6)  ~ accepted difference  X difference (with its cause when known)  ")
    w("C maeb crashed  C! mteb crashed  M result file missing  n/a mteb cannot run it  - not run (no text side)\n\n")

    causes: dict[str, str] = {}
    w(
        f"{'family':<{width}}  {'task':<28} {'result':<10} {'max |diff|':>10} {'vectors':>12}  largest difference (mteb -> maeb) [cause]\n"
    )
    for c in report["cells"]:
        if c["status"] == "equal":
            detail = ""
        elif c["status"] in ("DIFF", "explained"):
            detail = f"{c['metric']} ({_fmt(c['mteb_value'])} -> {_fmt(c['maeb_value'])})"
            if c["cause_name"]:
                causes[c["cause_name"]] = c["cause"]
                detail += f" [{c['cause_name']}{'' if c['accepted'] else ', maeb divergence'}]"
            else:
                detail += " [no known cause]"
            if c["n_diffs"] > 1:
                detail += f" {c['n_diffs']} keys differ"
        else:
            detail = c["error"]
        size = "" if c["max_diff"] is None else _fmt(c["max_diff"])
        vec = _vectors_text(c.get("vectors"))
        w(f"{c['family']:<{width}}  {c['task']:<28} {c['status']:<10} {size:>10} {vec:>12}  {detail}\n")
    w("vectors: largest |mteb - maeb| over the task's clips (mteb's encode output against maeb's embedding cache), ")
    w("and how many clips differ by more than 1e-5\n")
    if causes:
        w("\ncauses:\n")
        for name, text in causes.items():
            w(f"  [{name}] {text}\n")
    if report.get("not_built"):
        w("\nnot covered: " + "; ".join(f"{k}: {v}" for k, v in report["not_built"].items()) + "\n")

    w("\nper task: clips (audio seconds), seconds summed over families (mteb: its evaluate; maeb: its evaluation_time)\n")
    for t in tasks:
        cs = [c for c in report["cells"] if c["task"] == t]
        m = sum(c["mteb_seconds"] or 0 for c in cs)
        b = sum(c["maeb_seconds"] or 0 for c in cs)
        info = report["task_clips"][t]
        w(
            f"  {t:<28} {info['clips']:>5} clips ({info['seconds']:>6.1f} s)  mteb {m:7.1f} s  maeb {b:7.1f} s  ({len(cs)} families)\n"
        )
    w("per family, wall seconds (mteb: model load and all tasks; maeb: its subprocess), first side first: ")
    w("; ".join(f"{k} " + "/".join(f"{s} {v:.0f}" for s, v in walls.items()) for k, walls in report["family_walls"].items()))
    w(f"\nbuild {report['build_seconds']} s, total {report['total_seconds']} s\n")
    counts = ", ".join(
        f"{s} {sum(1 for c in report['cells'] if c['status'] == s)}"
        for s in code
        if any(c["status"] == s for c in report["cells"])
    )
    w(f"\n{len(report['cells'])} cells: {counts}; {'FAIL' if failures(report) else 'OK'}\n")


IMITATED_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "CT2_FORCE_CPU_ISA", "OPENBLAS_CORETYPE")


def imitate(name: str, argv: list[str]) -> None:
    """Run this script again with the set-up's variables (torch, MKL and CTranslate2 read theirs
    when they load, so setting them in this process would be too late); never returns."""
    from maeb.run.numeric_env import IMITATE, imitable

    setup, left = imitable(IMITATE[name])
    for item in left:
        print(f"parity --imitate {name}: left out {item}", flush=True)
    env = {**os.environ, **setup, "MAEB_PARITY_IMITATED": name}
    print(f"parity --imitate {name}: {' '.join(f'{k}={v}' for k, v in setup.items())}", flush=True)
    os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *argv], env)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--families", nargs="+", metavar="F", help=f"families (default all): {', '.join(ckpt.FAMILIES)}")
    p.add_argument("--tasks", nargs="+", metavar="T", help=f"tasks (default all): {', '.join(pdata.TASKS)}")
    p.add_argument("--quick", action="store_true", help="the quick selection (under ~4 minutes on 2 cores)")
    p.add_argument("--keep", action="store_true", help="keep the work folder (result files, logs, specs)")
    p.add_argument("--json", metavar="OUT", help="write the table as JSON")
    p.add_argument("--build-dir", default=str(DEFAULT_BUILD), help="where data and checkpoints are built and reused (.parity)")
    p.add_argument("--work-dir", help="work folder (default: a fresh one under the build folder, removed unless --keep)")
    p.add_argument("--maeb-python", help="the python that runs maeb (default: .venv/bin/python, maeb's own environment)")
    p.add_argument(
        "--protocol", default=DEFAULT_PROTOCOL, help=f"maeb's --protocol (default {DEFAULT_PROTOCOL}; '' for maeb's default)"
    )
    p.add_argument("--imitate", choices=["avx2", "generic", "sse"], help="run both sides under another CPU's kernels (see above)")
    args = p.parse_args(argv)
    if args.imitate and os.environ.get("MAEB_PARITY_IMITATED") != args.imitate:
        imitate(args.imitate, argv if argv is not None else sys.argv[1:])
    report = run(args)
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    if report["work_dir"]:
        print(f"work folder kept: {report['work_dir']}")
    return 1 if failures(report) else 0


if __name__ == "__main__":
    sys.exit(main())
