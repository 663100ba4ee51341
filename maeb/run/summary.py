"""What a run hands back: one TaskResult per task (its scores in mteb's shape and the maeb section),
the RunSummary of the whole run, and the two steps every path of the run shares to fill it: a
failed task recorded (fail_task) and a part's embedding statistics added (add_stats). The plain
runner, the layer sweep and the Ray driver all report through here."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import tasktypes
from ..core.errors import MaebError
from ..core.identity import redact
from ..engine.taskrecord import EmbedStats


@dataclass
class TaskResult:
    """One task's result: its scores in mteb's shape (split -> one entry per subset), the time it
    took, and the maeb section (protocol, identity, fingerprints, ...); `payload` is the file."""

    task: str
    model: str
    payload: dict
    path: Path | None = None
    files: dict[str, str] = field(default_factory=dict)  # side files: relative name -> text

    @property
    def scores(self) -> dict[str, list[dict]]:
        """The scores in mteb's shape: split -> one entry per subset."""
        return self.payload["scores"]

    @property
    def info(self) -> dict:
        """The result's maeb section (protocol, identity, task, data, encoder, timings)."""
        return self.payload.get("maeb", {})

    @property
    def parameters(self) -> dict:
        """The task type's parameters as the run used them, under today's names (a result written
        before clustering's n_clusters became n_bootstrap reads the same)."""
        raw = self.info.get("parameters") or {}
        return shown_parameters((self.info.get("task") or {}).get("type") or self.info.get("task_type") or "", raw)

    @property
    def warnings(self) -> list[str]:
        """What the run warned about this task's data (clips shared by the training and evaluation
        splits, classes too small for the probe, ...), as the log said it; [] when nothing."""
        return list((self.info.get("data") or {}).get("warnings") or [])

    @property
    def evaluation_time(self) -> float:
        """Seconds the task took, as written in the result."""
        return float(self.payload.get("evaluation_time") or 0.0)

    @property
    def main_score(self) -> float:
        """The mean main score over every evaluation split and subset (one entry each), the number
        mteb's leaderboard and its TaskResult.get_score() give a task, and so maeb's board too."""
        splits = [s for s in (self.info.get("task") or {}).get("eval_splits") or () if s in self.scores]
        entries = [e for split in splits or list(self.scores) for e in self.scores[split]]
        return sum(e["main_score"] for e in entries) / len(entries)

    @classmethod
    def from_file(cls, path: Path, model: str) -> TaskResult:
        """A TaskResult read from a result file (the task named by its task_name, else the file's stem)."""
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(payload.get("task_name", Path(path).stem), model, payload, Path(path))


@dataclass
class RunSummary:
    """What a run did: the tasks done, already done, skipped for a missing side or failed (with
    their reasons), the results in task order, the embedding statistics and the wall time."""

    done: list[str] = field(default_factory=list)
    skipped_existing: list[str] = field(default_factory=list)
    skipped_modality: list[str] = field(default_factory=list)
    results: list[TaskResult] = field(default_factory=list)  # done and already-done tasks, in task order
    failed: dict[str, str] = field(default_factory=dict)  # task -> its one-line reason (cfg.raise_error False)
    stats: EmbedStats = field(default_factory=EmbedStats)
    wall_seconds: float = 0.0

    def outside_forward_share(self) -> float | None:
        """The share of embedding time spent outside the encoder's forward pass (decoding,
        resampling, batching); None when nothing was embedded."""
        wall = self.stats.embed_wall_seconds
        return None if wall <= 0 else max(0.0, 1.0 - self.stats.forward_seconds / wall)


def fail_task(summary: RunSummary, name: str, exc: BaseException | str, raise_error: bool, log) -> None:
    """A task that cannot load or evaluate: raised (stopping the run) or recorded in summary.failed
    with its one-line reason while the other tasks run (a benchmark's default, mteb's
    raise_error=False). Nothing is written for it. The plain and the Ray path both come here."""
    message = redact(str(exc))  # summary.failed reaches the caller's results and the log
    if not re.search(rf"(?<![\w/]){re.escape(name)}(?![\w/])", message):  # (a repository named like the task is not it)
        message = f"task {name}: {message}"
    if raise_error:
        if isinstance(exc, MaebError):
            exc.args = (message,)
            raise exc
        raise MaebError(message)
    summary.failed[name] = message
    log(f"{name}: failed: {message.removeprefix(f'task {name}: ')}")


def add_stats(total: EmbedStats, part: EmbedStats) -> None:
    """Add one part's embedding statistics (a task, a layer, a Ray shard) to the run's totals."""
    for key, value in part.__dict__.items():
        if key == "skipped":
            total.skipped.update(value)
        else:
            setattr(total, key, getattr(total, key) + value)


def shown_parameters(kind: str, protocol: dict) -> dict:
    """A task's parameters under the names the docs give them (clustering's n_bootstrap, which the
    parsed protocol and the run identity keep under mteb's n_clusters, so old identities hold).
    A type's ALIASES map old names to today's; maeb or mteb type names are accepted."""
    try:
        module = tasktypes.get(tasktypes.from_mteb(kind))
    except (MaebError, KeyError):
        return dict(protocol)
    aliases = getattr(module, "ALIASES", {})
    return {aliases.get(k, k): v for k, v in protocol.items()}
