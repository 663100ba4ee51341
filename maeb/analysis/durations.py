"""Score against clip duration: which clips a protocol loses as they grow longer.

Task types whose main score is a mean over evaluation items report each item's value with
`emb.record.outcome(metric, refs, values)`: a classification clip's correctness (averaged over
the experiments), a retrieval query's own metric (for a text query, the duration of its
relevant recording). Under `--duration-buckets` the runner groups the items by duration (read
from each clip's header) and writes, per split and subset, one row per bucket: the items in it
and their mean, which is the task's metric restricted to those items (maeb.evaluation.<split>.
<subset>.duration_buckets). Clustering, pair classification and multilabel scores are not means
over clips and report nothing.

    python -m maeb durations --results results [--tasks BirdCLEF SoundDescsA2TRetrieval]

prints, per task, the buckets against every result found (the head cut and each --long-audio
experiment side by side)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from ..core.errors import SpecError

DEFAULT_EDGES = (10.0, 30.0, 60.0, 300.0, 1800.0)
# the tasks the MAEB paper's 30 s cut shortens most (clips up to 8 min - 2 h)
LONG_CLIP_TASKS = (
    "BirdCLEF",
    "SoundDescsA2TRetrieval",
    "SoundDescsT2ARetrieval",
    "VoxPopuliAccentID",
    "VoxPopuliGenderID",
    "VoxPopuliLanguageID",
    "SIBFLEURS",
    "FleursA2TRetrieval",
    "FleursT2ARetrieval",
    "GigaSpeechA2TRetrieval",
    "GigaSpeechT2ARetrieval",
)


def parse_edges(text: str | None) -> tuple[float, ...]:
    """'10,30,60' (seconds, increasing) or None / 'default' for DEFAULT_EDGES."""
    if text is None or text == "default":
        return DEFAULT_EDGES
    try:
        edges = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise SpecError(f"--duration-buckets {text!r}: expected increasing seconds such as 10,30,60") from None
    import numpy as np  # (lazy: the command line's parser imports this module)

    if not edges or any(not (b > a) for a, b in zip((0.0, *edges), edges)) or not np.isfinite(edges).all():
        raise SpecError(f"--duration-buckets {text!r}: edges must be positive, finite and increasing (seconds, e.g. 10,30,60)")
    return edges


def label(i: int, edges: Sequence[float]) -> str:
    """The name of bucket i of the edges: <10 s, 10-30 s, ..., >=1800 s."""
    lo = 0.0 if i == 0 else edges[i - 1]
    return f"<{edges[0]:g} s" if i == 0 else (f">={lo:g} s" if i == len(edges) else f"{lo:g}-{edges[i]:g} s")


def buckets(seconds: Sequence[float], values: Sequence[float], edges: Sequence[float]) -> list[dict]:
    """One row per non-empty bucket: its label, the items in it, their mean value and the
    longest clip in it."""
    import numpy as np

    secs, vals = np.asarray(seconds, float), np.asarray(values, float)
    index = np.searchsorted(np.asarray(edges, float), secs, side="right")
    rows = []
    for i in range(len(edges) + 1):
        inside = index == i
        if inside.any():
            rows.append(
                {
                    "bucket": label(i, edges),
                    "items": int(inside.sum()),
                    "score": float(vals[inside].mean()),
                    "max_seconds": round(float(secs[inside].max()), 2),
                }
            )
    return rows


def report(outcome: tuple[str, list, list] | None, edges: Sequence[float]) -> dict | None:
    """The duration_buckets entry of one split and subset, from what the task type reported."""
    if outcome is None:
        return None
    metric, refs, values = outcome
    from ..audio.pipeline import clip_seconds

    seconds = [clip_seconds(r) for r in refs]
    return {"metric": metric, "edges": list(edges), "rows": buckets(seconds, values, edges)}


# -- the report over result files ---------------------------------------------------------------
def collect(results: Path, tasks: Sequence[str] | None = None) -> dict[str, dict[str, list[dict]]]:
    """task -> (model, experiment, split/subset) label -> rows, from every result file under
    `results` that holds duration buckets."""
    out: dict[str, dict[str, list[dict]]] = {}
    for path in sorted(Path(results).rglob("*.json")):
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(payload, dict) or "maeb" not in payload:
            continue
        task = payload.get("task_name", path.stem)
        if tasks and task not in tasks:
            continue
        info = payload["maeb"]
        window = info.get("identity", {}).get("window", "head")
        model = info.get("identity", {}).get("encoder", {}).get("name") or path.parent.parent.name
        for split, subsets in (info.get("evaluation") or {}).items():
            for subset, entry in subsets.items():
                table = entry.get("duration_buckets") if isinstance(entry, dict) else None
                if table:
                    where = "" if subset == "default" else f" {subset}"
                    out.setdefault(task, {})[f"{model} [{window}] {split}{where} ({table['metric']})"] = table["rows"]
    return out


def to_text(collected: dict[str, dict[str, list[dict]]]) -> str:
    """The collected buckets as one markdown table per task (a row per run, a column per bucket)."""
    lines = []
    for task, runs in sorted(collected.items()):
        lines.append(f"## {task}")
        names = list(dict.fromkeys(row["bucket"] for rows in runs.values() for row in rows))
        lines.append("| run | " + " | ".join(names) + " |")
        lines.append("|---|" + "---|" * len(names))
        for run, rows in runs.items():
            by = {r["bucket"]: r for r in rows}
            cells = [f"{by[n]['score']:.3f} (n={by[n]['items']})" if n in by else "" for n in names]
            lines.append(f"| {run} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) if lines else "no result holds duration buckets (run with --duration-buckets)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `python -m maeb durations` (and of the old `python -m maeb.analysis.durations`)."""
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--tasks", nargs="*", help="tasks to show (default: every task with buckets)")


def command(args: argparse.Namespace) -> int:
    """Print the duration buckets of every result under args.results; 1 when none holds any."""
    collected = collect(args.results, args.tasks)
    print(to_text(collected))
    return 0 if collected else 1


if __name__ == "__main__":
    # `python -m maeb.analysis.durations` ran this view through maeb 0.3.x; since 0.4.0 the command line has it
    import sys

    print(
        "maeb.analysis.durations is not a command since maeb 0.4.0: run `python -m maeb durations` (same flags)", file=sys.stderr
    )
    raise SystemExit(2)
