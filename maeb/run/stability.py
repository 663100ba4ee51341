"""Stability bands: how far a score moves when its vectors move by the rounding another CPU, BLAS
kernel or thread count makes.

A replay scores the task again from the same cached vectors, each multiplied elementwise by
(1 + eps * N(0, 1)). The noise is drawn from the replay's seed, the vector's bytes and the clip's
identity (its content key and name; a text's or a frame's place in its list), so a clip used twice
in a task (a training fold and a test fold) is perturbed alike, as a machine would, while clips that
share one vector (a transcript model maps every clip with the same words to one text vector) get
different noise: their tied similarities break in another order each replay, as they do from CPU
to CPU, and the band is as wide as the score's dependence on that order. The protocol's draws
(few-shot samples, folds, bootstrap draws) are the base run's: only the vectors differ.

Every embedding type is replayed (`AUTO_REPLAYS`, the default count per type; `--stability-replays
N` sets one count for all). The probes (classification, multilabel: `REFIT`) refit a quarter of the
task's experiments per replay (`SHARE`), the next quarter each time; each refit experiment's move
is a sample, and another machine's move of the task score is simulated as the mean of one sampled
move per experiment (`SIMULATIONS` machines). The other types are scored whole per replay (ranks,
average precision, argmax and k-means need no refit; event detection refits its probe): each
replay's move is one sample. The band is the largest simulated move. A band needs two samples:
with fewer the record says "not measured", never 0; a cell is "exact" only where at least
`MIN_EXACT` samples moved nothing (8 unmoved refits of mteb's unconverged probe happen about one
time in ten on a cell that 1e-7 of noise moves in 21 of 30 draws). A cell whose band exceeds one
item's share is `fragile`: boards mark it, and `lite --check` reads its moves against its band.
Every replayed record also holds `quantum`, one evaluation item's share of the score (a clip, a
query, a pair): the smallest move a flip of one item's outcome makes, which `lite --check` allows
where the replays saw less, since a finite count of replays can miss a rare flip and the
evaluator's own kernels (k-means' distances) can flip one where the vectors did not. The band is a report: it changes no score and is not part of the run
identity (another replay count is the same result with another estimate of its noise)."""

from __future__ import annotations

import hashlib
import math
import time

import numpy as np

# the relative size of the difference another CPU's kernels make in float32 vectors, per side: the
# largest move ||dv|| / ||v|| of a clip's vector between a native run (AMD EPYC, AVX2) and runs with
# every library's instruction set imitated (numeric_env.IMITATE avx2, generic, sse), over all of
# MAEB-lite's clips (scripts/compare_caches.py on the runs' caches; EPS_MEASURED); an elementwise
# eps moves a vector by about eps in norm, so eps is the largest move, rounded up. The transcript
# model's audio vectors are MiniLM text vectors; they moved by 1.8e-6, so one value covers both sides
EPS = {"audio": 3e-6, "text": 3e-6}
EPS_MEASURED = (
    "largest |dv|/|v| over MAEB-lite's 788 clips, native vs imitated avx2/generic/sse CPUs: 2.3e-6 resemblyzer, "
    "2.2e-6 whisper-tiny.en audio, 1.8e-6 transcript (MiniLM) audio, 1.3e-7 mfcc; 7e-7 MiniLM texts; "
    "speech-embedding (ONNX Runtime heeds no imitation) 5.8e-7 with its graph fusions off or basic "
    "(scripts/measure_numeric_noise.py, 80-160 clips)"
)
AUTO = "auto"
DEFAULT_REPLAYS = AUTO
# replays per type under "auto": rank-based types cost one scoring each (no fit); clustering refits
# k-means n_bootstrap times and event detection its whole probe per replay: about 1 s per replay on
# a MAEB-lite clustering cell (16 replays of whisper-tiny.en x LiteSpeakerClustering: 17 s); every
# type gets 32, so a band rests on at least 30 samples and exactness on MIN_EXACT unmoved ones
AUTO_REPLAYS = {
    "classification": 32,
    "multilabel": 32,
    "retrieval": 32,
    "reranking": 32,
    "pair_classification": 32,
    "zeroshot": 32,
    "clustering": 32,
    "event_detection": 32,
}
REFIT = ("classification", "multilabel")  # probes whose experiments are shared out between replays
SHARE = 4  # a probe replay refits experiments // SHARE of a task's experiments (at least one)
SIMULATIONS = 1000
MIN_SAMPLES = 2  # one sample cannot show a band
MIN_EXACT = 30  # unmoved samples before a cell is called exact (8 unmoved refits of a fragile probe happen one time in ten)


def replays_for(kind_name: str, setting: int | str | None) -> int:
    """The replay count of a task type: `setting` when a number, else the type's default (0 for a
    type that is not replayed)."""
    if isinstance(setting, int) and not isinstance(setting, bool):
        return setting if kind_name in AUTO_REPLAYS else 0
    return AUTO_REPLAYS.get(kind_name, 0)


def noise(x: np.ndarray, eps: float, seed: int, ids: list[bytes] | None = None) -> np.ndarray:
    """x times (1 + eps * N(0, 1)), elementwise, float32; each row's noise drawn from the seed, the
    row's bytes and its identity in `ids` (a clip's content key and name: the same clip gets the
    same noise wherever it appears in one replay, two clips sharing a vector get different noise)."""
    x = np.asarray(x)
    if eps == 0 or x.size == 0:
        return x
    rows = x.reshape(len(x), -1)
    out = np.empty(rows.shape, dtype=np.float32)
    for i, row in enumerate(rows):
        h = hashlib.blake2b(np.ascontiguousarray(row).tobytes(), digest_size=8)
        if ids is not None:
            h.update(ids[i])
        rng = np.random.default_rng([seed, int.from_bytes(h.digest(), "little")])
        out[i] = row * (1 + eps * rng.standard_normal(row.shape))
    return out.reshape(x.shape)


def clip_id(ref) -> bytes:
    """A clip's identity for the noise: its content key (an unreadable clip has none) and name."""
    try:
        key = str(ref.key)
    except Exception:  # a clip the base run reported as unusable: its name alone
        key = ""
    return f"{key}\0{getattr(ref, 'name', '')}".encode()


def places(n: int, tag: str = "") -> list[bytes]:
    """Identities by place in a list (texts, frames): equal texts or frames at two places differ."""
    return [f"{tag}#{i}".encode() for i in range(n)]


class ReplayEmbedder:
    """An embedder seen through one replay: the same cached vectors (the real embedder serves them;
    nothing is embedded again), perturbed; no progress display and no outcome records (the run's
    record keeps the base run's). Where an evaluator walks its experiments (`progress` over the
    few-shot draws or folds), the replay hands it only the block it refits and notes which."""

    controls: tuple[str, ...] = ()  # a replay measures the score's band; the controls are the base run's

    def __init__(self, emb, eps: dict[str, float], seed: int, block: int | None = None):
        from ..engine.taskrecord import TaskRecord

        self._emb, self._eps, self._seed, self._block = emb, eps, seed, block
        self.record = TaskRecord(emb.context)
        self.picked: list[int] | None = None  # the experiments the last evaluation refit (None: all)
        self.experiments: int | None = None

    def __getattr__(self, name):
        return getattr(self._emb, name)

    def log(self, message: str) -> None:
        """Silent: the base evaluation already said what the data holds; a replay repeats it."""

    def audio(self, refs):
        """The cached audio vectors with the replay's noise added, and the mask of usable clips."""
        x, ok = self._emb.audio(refs)
        return noise(x, self._eps["audio"], self._seed, [clip_id(r) for r in refs]), ok

    def text(self, texts):
        """The cached text vectors with the replay's noise added (by each text's place)."""
        return noise(self._emb.text(texts), self._eps["text"], self._seed, places(len(texts)))

    def perturb_frames(self, frames: list) -> list:
        """Time-resolved frames (event detection) through the replay's noise (by clip and frame place)."""
        eps = self._eps["audio"]
        return [
            None if f is None else (noise(f[0], eps, self._seed, places(len(f[0]), str(i))), f[1]) for i, f in enumerate(frames)
        ]

    def warn(self, message: str) -> None:
        """Nothing: the base run warned about the same data once (a replay repeated each warning)."""

    def label(self, context: str) -> None:
        """Set what messages name as the context."""
        self.record.context = context

    @property
    def context(self) -> str:
        """The task, split and subset being replayed (for messages)."""
        return self.record.context

    def progress(self, items, what: str):
        """The experiments to refit in this replay: all of them, or the replay's block when `block` is set (the picked indices are
        kept)."""
        items = list(items)
        self.experiments = len(items)
        if self._block is None or not items:
            self.picked = list(range(len(items)))
        else:
            k = max(1, len(items) // SHARE)
            self.picked = [(self._block * k + j) % len(items) for j in range(min(k, len(items)))]
        return [items[i] for i in self.picked]

    def progress_iter(self, iterator, total: int, what: str):
        """The iterator unchanged: a replay shows no progress."""
        return iterator


def replay(spec, data, emb, eps: dict[str, float] | float, seed: int, block: int | None = None) -> tuple[dict, dict]:
    """One replay of a task from its loaded data and cached vectors: its scores (split -> entries,
    mteb's shape) and, per (split, entry), the experiments it refit (None: the whole evaluation
    is one fit). block None refits every experiment. The splits and subsets run in the runner's
    order from a fresh TaskState of the task's seed, so the draws are the base run's."""
    from .. import tasktypes

    kind = tasktypes.get(spec.type)
    if not isinstance(eps, dict):
        eps = {"audio": float(eps), "text": float(eps)}
    view = ReplayEmbedder(emb, eps, seed, block)
    state = tasktypes.TaskState(seed=spec.protocol.get("seed", 42))
    scores: dict[str, list] = {}
    picked: dict[tuple[str, int], object] = {}
    for split in spec.data.eval_splits:
        entries = []
        for i, (subset, tables) in enumerate(data.items()):
            view.label(f"{spec.name} replay {seed} [{split}]")
            view.picked = None
            state.subset = subset
            metrics = dict(tasktypes.as_evaluation(kind.evaluate(tables, split, view, spec, state), spec.type).metrics)
            metrics["main_score"] = metrics[spec.main_score]
            entries.append(metrics)
            picked[(split, i)] = view.picked
        scores[split] = entries
    return scores, picked


def per_experiment(entry: dict) -> list[dict]:
    """An entry's experiments (mteb's scores_per_experiment), or the entry itself as the one."""
    rows = entry.get("scores_per_experiment")
    return rows if isinstance(rows, list) and rows else [entry]


def _numbers(row: dict) -> dict[str, float]:
    return {k: float(v) for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def moves(base: dict, replayed: dict, picked: dict, main: str) -> dict[tuple[str, int], list[dict]]:
    """Per (split, entry): one dict of metric moves per refit experiment (replayed minus base),
    the main metric's also under "main_score"."""
    out = {}
    for split, entries in replayed.items():
        for i, entry in enumerate(entries):
            base_rows = per_experiment(base[split][i])
            rows = per_experiment(entry)
            index = picked.get((split, i))
            if index is None or len(base_rows) == 1:
                index, base_rows, rows = [0], [base[split][i]], [entry]  # one fit: the entry is the experiment
            found = []
            for j, row in zip(index, rows):
                a, b = _numbers(base_rows[j]), _numbers(row)
                for values in (a, b):
                    if main in values:
                        values["main_score"] = values[main]
                found.append({k: b[k] - a[k] for k in a.keys() & b.keys() if math.isfinite(a[k]) and math.isfinite(b[k])})
            out[(split, i)] = found
    return out


def simulate(samples: list[float], experiments: int, rng: np.random.Generator, machines: int = SIMULATIONS) -> np.ndarray:
    """Moves of a mean over `experiments` experiments when a machine moves each by a value drawn
    from the samples or their negatives (with replacement): another machine's last bits are as
    likely to move an experiment up as down from the reference's."""
    if not samples:
        return np.zeros(machines)
    values = np.concatenate([samples, np.negative(samples)]).astype(float)
    return values[rng.integers(0, len(values), size=(machines, experiments))].mean(axis=1)


def quantum(spec, data) -> float:
    """One evaluation item's share of the board's score: the largest move a flip of one item's
    outcome (a clip, a query, a pair) makes in a score averaged over items, about one clip's
    reassignment in a clustering's v-measure. Over subsets of the first split, the smallest holds
    the largest share; under cross-validation an item counts in its fold's score, and KFold's
    smallest fold is n // k items (one clip of 156 in 5 folds moves the mean by 1/155, not 1/156).
    Rounded up at the files' 6 places. A band from a finite count of replays can be 0 where a rarer
    flip still happens on another machine, or the evaluator's own kernels flip one; `lite --check`
    allows this."""
    split = spec.data.eval_splits[0]
    sizes = [len(tables[split]) for tables in data.values() if hasattr(tables.get(split), "__len__")]
    if not sizes or min(sizes) <= 0:
        return 0.0
    protocol = spec.protocol or {}
    folds = int(protocol.get("n_splits", 5)) if protocol.get("cross_validation") else 1
    smallest = min(sizes)
    share = 1.0 / (len(sizes) * folds * max(1, smallest // folds))
    return math.ceil(share * 1e6) / 1e6


def measure(
    spec, data, emb, base: dict, replays: int | str | None, eps: dict | None = None, evaluation_seconds: float = 0.0
) -> dict:
    """The stability record of one task's result (`maeb.run.stability`): its replays, the spread of
    its main score, its band, and the band of every entry-level metric by lite --check's path."""
    if spec.type not in AUTO_REPLAYS:
        return exact(spec.type)
    count = replays_for(spec.type, replays)
    if not count:
        return disabled()
    eps = eps or dict(EPS)
    refit = spec.type in REFIT
    started = time.perf_counter()
    samples: dict[tuple[str, int], list[dict]] = {}
    sizes: dict[tuple[str, int], int] = {}
    for r in range(count):
        scores, picked = replay(spec, data, emb, eps, seed=r, block=r if refit else None)
        for key, found in moves(base, scores, picked, spec.main_score).items():
            samples.setdefault(key, []).extend(found)
            sizes[key] = len(per_experiment(base[key[0]][key[1]]))
    first = next(iter(base))
    fewest = min(len([m for m in samples.get((first, i), []) if "main_score" in m]) for i in range(len(base[first])))
    common = {
        "replays": count,
        "refits": sum(len(v) for v in samples.values()),
        "eps": {side: f"{value:g}" for side, value in sorted(eps.items())},  # strings: files round numbers to 6 places
        "eps_measured": EPS_MEASURED,
        "perturbation": "every vector times (1 + eps * N(0, 1)) elementwise, drawn per replay and clip "
        "(content key and name; texts and frames by place)",
    }
    if fewest < MIN_SAMPLES:
        return {"method": "not measured", **common, "why": f"{fewest} replay sample(s) of the main score: one cannot show a band"}
    rng = np.random.default_rng(0)
    main_moves = np.mean(
        [
            simulate([m["main_score"] for m in samples[(first, i)] if "main_score" in m], sizes[(first, i)], rng)
            for i in range(len(base[first]))
        ],
        axis=0,
    )
    bands = {}
    for (split, i), found in samples.items():
        for metric in sorted({k for m in found for k in m}):
            sim = simulate([m[metric] for m in found if metric in m], sizes[(split, i)], rng)
            bands[f"{split}[{i}].{metric}"] = _round(float(np.abs(sim).max()))
    value = board_main(base)
    moved = sum(1 for v in samples.values() for m in v if m.get("main_score", 0.0) != 0.0)
    record = {
        "method": "replay",
        **common,
        "moved": moved,
        # no move in MIN_EXACT samples or more; fewer unmoved samples say nothing of exactness
        "exact": moved == 0 and fewest >= MIN_EXACT,
        "main_score": {
            "value": _round(value),
            "min": _round(value + float(main_moves.min())),
            "max": _round(value + float(main_moves.max())),
            "std": _round(float(main_moves.std())),
        },
        "band": (band := _round(float(np.abs(main_moves).max()))),
        "metrics": bands,
        "seconds": round(time.perf_counter() - started, 3),
        "evaluation_seconds": round(evaluation_seconds, 3),
    }
    if moved == 0 and fewest < MIN_EXACT:
        record["why"] = f"{fewest} unmoved replay sample(s): too few to call the score exact (MIN_EXACT {MIN_EXACT})"
    # replays can miss a rarer flip of one item (and the evaluator's own kernels can flip one):
    # lite --check allows one item's share
    share = record["quantum"] = quantum(spec, data)
    # fragile: rounding-level noise moves the score by more than one item's share (an unconverged
    # probe, near-tied ranks); its score is to be read with its band, never to the last digit
    record["fragile"] = band > share + 1e-12
    return record


def exact(kind_name: str) -> dict:
    """The stability record of a type that is not replayed (its score does not come from vectors)."""
    return {"method": "exact", "replays": 0, "band": 0.0, "why": "not an embedding task type: no vectors to perturb"}


def disabled() -> dict:
    """The stability record of a run with --stability-replays 0."""
    return {"method": "not measured", "replays": 0, "why": "--stability-replays 0"}


def board_main(scores: dict) -> float:
    """The score a board shows: the mean main score over the subsets of the first split."""
    entries = next(iter(scores.values()))
    return float(np.mean([e["main_score"] for e in entries]))


def _round(value: float) -> float:
    return value if not math.isfinite(value) else round(float(value), 6)
