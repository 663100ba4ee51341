"""The evaluator stage of `lite --check`: the reference's vectors scored on this machine.

Nothing is embedded: each task's clips and texts are looked up by content key in a vectors file
(maeb.benchmarks.lite.vectors) and scored by the task type exactly as a run scores them (the same
draws, folds and seeds: maeb.run.stability.replay without noise, under the run's evaluator BLAS
threads). On the machine that wrote the reference this gives the reference's scores to the last
digit; elsewhere the only difference is the evaluator's own arithmetic (BLAS kernels inside a
logistic regression or k-means), which the reference measures under every OpenBLAS kernel its CPU
can run (`python -m maeb.benchmarks.lite.evaluators`, run by scripts/lite_reference.py under each
OPENBLAS_CORETYPE)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

import numpy as np

from ...core.context import RunContext
from ...core.errors import MaebError
from ...encoders.protocols import DEFAULT_PROTOCOL, get_protocol
from ...engine.cache import text_key
from ...engine.taskrecord import TaskRecord
from . import vectors as vectors_file


class VectorsEmbedder:
    """What a task type calls for vectors, served from a vectors file by content key: a clip or
    text the file lacks is one error naming it (the reference was made from other clips)."""

    controls: tuple[str, ...] = ()

    def __init__(self, model: str, vectors: vectors_file.Vectors, similarity: str = "cosine", protocol: str | None = None):
        self.model = model
        self._vectors = vectors.by_key()
        self._names = dict(zip(vectors.keys, vectors.names))
        self.similarity = similarity
        self.protocol = get_protocol(protocol or DEFAULT_PROTOCOL)
        self.record = TaskRecord("")
        self.judge = None

    @property
    def context(self) -> str:
        """The task being scored (for messages)."""
        return self.record.context

    def label(self, context: str) -> None:
        """Set what messages name as the context."""
        self.record.context = context

    def _rows(self, keys: list[str], names: list[str]) -> np.ndarray:
        missing = [n for k, n in zip(keys, names) if k not in self._vectors]
        if missing:
            raise MaebError(
                f"{self.context}: the vectors file of {self.model} has no vector for {missing[0]}"
                + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                + " (it was made from other clips: rebuild MAEB-lite or regenerate the reference)"
            )
        return np.stack([self._vectors[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def audio(self, refs):
        """The clips' vectors and the mask of usable rows (all usable)."""
        x = self._rows([r.key for r in refs], [r.name for r in refs])
        return x, np.ones(len(refs), dtype=bool)

    def text(self, texts):
        """The texts' vectors."""
        return self._rows([text_key(t) for t in texts], [repr(t) for t in texts])

    @contextlib.contextmanager
    def on_split(self, split: str):
        """Nothing to relabel: no progress is shown."""
        yield

    def progress(self, items, what: str):
        """The items, without a progress display."""
        return list(items)

    def progress_iter(self, iterator, total: int, what: str):
        """The iterator unchanged."""
        return iterator

    def log(self, message: str) -> None:
        """Silent: the run already said what the data holds."""

    def warn(self, message: str) -> None:
        """Silent: the run already warned about the same data."""


def main_score(scores: dict) -> float:
    """The board's score of a scores table: the mean main score over the first split's subsets."""
    entries = next(iter(scores.values()))
    return float(np.mean([e["main_score"] for e in entries]))


def score(root: Path, lite_dir: Path, models: list[str] | None = None, tasks: list[str] | None = None, protocol=None) -> dict:
    """{(model, task): scores table} of every model with a vectors file under `root`, on the
    MAEB-lite tasks (or `tasks`), scored from those vectors on this machine."""
    from ... import tasktypes
    from ...run.numeric_env import evaluator_threads
    from ...run.stability import replay
    from ...spec import catalog
    from ...spec.loader import load_task
    from .specs import lite_specs

    specs = lite_specs(tasks)
    files = sorted(Path(root, vectors_file.FOLDER).glob("*.npz"))
    ctx = RunContext(cache_dir=Path(lite_dir).parent, lite_dir=Path(lite_dir))
    data = {}
    out: dict[tuple[str, str], dict] = {}
    for path in files:
        v = vectors_file.read(path)
        model = v.meta.get("model") or path.stem.replace("__", "/", 1)
        if models is not None and model not in models:
            continue
        meta = catalog.find_model(model)
        emb = VectorsEmbedder(model, v, meta.similarity, protocol or v.meta.get("protocol"))
        has_text = bool(v.meta.get("texts")) or any(k.startswith("t:") for k in v.keys)
        for spec in specs:
            if "text" in tasktypes.get(spec.type).needs(spec) and not has_text:
                continue  # the model has no text side: the run skipped this task too
            if spec.name not in data:
                data[spec.name] = load_task(spec, ctx)
            with evaluator_threads():
                scores, _ = replay(spec, data[spec.name], emb, 0.0, seed=0)
            out[(model, spec.name)] = scores
    return out


def main(argv: list[str] | None = None) -> None:
    """Score a folder's vectors files and print {model: {task: board score}} as JSON (what the
    reference generation runs under each OpenBLAS kernel to measure the evaluator alone)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a MAEB-lite results folder with vectors/*.npz")
    parser.add_argument("--dir", type=Path, required=True, help="the MAEB-lite data folder")
    parser.add_argument("--models", nargs="+")
    parser.add_argument("--tasks", nargs="+")
    args = parser.parse_args(argv)
    found = score(args.root, args.dir, args.models, args.tasks)
    table: dict[str, dict[str, float]] = {}
    for (model, task), scores in sorted(found.items()):
        table.setdefault(model, {})[task] = round(main_score(scores), 6)
    json.dump(table, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
