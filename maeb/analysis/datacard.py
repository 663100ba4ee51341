"""A task's data card (`maeb datacard`): its classes and their balance, clip durations, sample rates
and channels, exact and near duplicates, train/test overlap and how many clips a length cap cuts,
from the data the run would load (maeb.spec.loader.load_task), hub or local.

Near duplicates, the rule: two clips that are not exact duplicates (different content hashes) but
have the same sample rate and the same number of frames, and whose coarse spectra (NEAR_BANDS
equal-width bands of the whole clip's power spectrum, in dB, floored NEAR_RANGE_DB below the
loudest band) differ by at most NEAR_DB in every band. Stationary noises of one colour pass it:
they are near duplicates to any embedding that summarises a clip. Only clips that share their length with another clip are decoded, so the check stays cheap."""

from __future__ import annotations

import contextlib
import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
import soundfile as sf

from .. import tasktypes
from ..audio.pipeline import AudioRef, decode_from
from ..core.context import RunContext
from ..core.errors import MaebError
from ..core.taskspec import TaskSpec
from ..data.sources import Table
from ..spec.loader import load_task

NEAR_BANDS = 32  # coarse enough to ignore noise-level differences, fine enough to tell sounds apart
NEAR_DB = 1.0  # the largest band difference two near duplicates may show
NEAR_RANGE_DB = 60.0  # bands more than this below a clip's loudest band count as that floor
CAP_SECONDS = 30.0  # the length cap of most families under the published protocol
TRAIN_SPLITS = ("train", "fewshot", "dev", "validation")


def _refs(spec: TaskSpec, table) -> list[AudioRef]:
    """The clips of one split, in order (a clip used twice, as in pairs, counted once per use)."""
    if isinstance(table, Table):
        items = [v for c in tasktypes.get(spec.type).clip_columns(spec) if c in table for v in table[c]]
    else:
        items = [v for _, v in table.corpus + table.queries]
    return [r for r in items if isinstance(r, AudioRef)]


def _labels(spec: TaskSpec, table) -> Counter | None:
    """Class counts of a plain table's label column (each label of a multilabel row, each event of an
    event list counted), None without one."""
    column = spec.data.label_column
    if not isinstance(table, Table) or column not in table:
        return None
    counts: Counter = Counter()
    for value in table[column]:
        if isinstance(value, str) and value.startswith("[["):  # an event list kept as JSON text
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        for label in value if isinstance(value, list | tuple | set) else [value]:
            counts[_class_of(label)] += 1
    return counts


def _class_of(label) -> str:
    """A label's class: itself, or an event's class ([class, onset, offset] or a dict with a label)."""
    if isinstance(label, list | tuple) and label:
        return str(label[0])
    if isinstance(label, dict):
        return str(label.get("label", label.get("event_label", label)))
    return str(label)


def _header(ref: AudioRef) -> tuple[int, int, int]:
    """(frames, sample rate, channels) from the header; (0, 0, 0) when it cannot be read."""
    try:
        with ref.open() as handle:
            info = sf.info(handle)
    except Exception:
        return 0, 0, 0
    frames = info.frames
    if ref.start is not None or ref.end is not None:  # a segment of a longer recording
        end = info.frames if ref.end is None else min(info.frames, int(ref.end * info.samplerate))
        frames = max(0, end - int((ref.start or 0) * info.samplerate))
    return frames, info.samplerate, info.channels


def _spectrum(ref: AudioRef) -> np.ndarray | None:
    """The clip's coarse power spectrum in dB (NEAR_BANDS bands); None when it cannot be decoded."""
    try:
        with ref.open() as handle:
            samples, _ = decode_from(handle, ref.name)
    except MaebError:
        return None
    power = np.abs(np.fft.rfft(samples.astype(np.float64))) ** 2
    bands = 10 * np.log10(np.array([b.mean() for b in np.array_split(power, NEAR_BANDS)]) + 1e-20)
    # bands far below the loudest are floored: faint noise there would otherwise decide
    return np.maximum(bands, bands.max() - NEAR_RANGE_DB)


def _near_groups(clips: dict[str, tuple[AudioRef, tuple[int, int, int]]]) -> list[list[str]]:
    """Groups of content keys that are near duplicates under the module's rule."""
    by_length: dict[tuple[int, int], list[str]] = defaultdict(list)
    for key, (_, (frames, rate, _)) in clips.items():
        if frames:
            by_length[(frames, rate)].append(key)
    groups = []
    for keys in by_length.values():
        if len(keys) < 2:
            continue
        spectra = {k: s for k in keys if (s := _spectrum(clips[k][0])) is not None}
        left = sorted(spectra)
        while left:  # greedy: each clip joins the first group whose founder it is close to
            founder, *rest = left
            group = [founder] + [k for k in rest if np.max(np.abs(spectra[k] - spectra[founder])) <= NEAR_DB]
            left = [k for k in rest if k not in group]
            if len(group) > 1:
                groups.append(group)
    return groups


def _split_card(spec: TaskSpec, table, refs: list[AudioRef], headers: dict[str, tuple], cap: float) -> dict:
    keys = list(dict.fromkeys(r.key for r in refs))
    seconds = [headers[k][0] / headers[k][1] if headers[k][1] else 0.0 for k in keys]
    card: dict = {"clips": len(keys), "hours": round(sum(seconds) / 3600, 4)}
    if seconds:
        card["seconds"] = {
            "min": round(min(seconds), 3),
            "median": round(statistics.median(seconds), 3),
            "max": round(max(seconds), 3),
        }
    card["sample_rates"] = dict(sorted(Counter(headers[k][1] for k in keys).items()))
    card["channels"] = dict(sorted(Counter(headers[k][2] for k in keys).items()))
    card["over_cap"] = sum(s > cap for s in seconds)
    if not isinstance(table, Table):
        card["queries"], card["documents"] = len(table.queries), len(table.corpus)
    labels = _labels(spec, table)
    if labels:
        total = sum(labels.values())
        card["classes"] = dict(sorted(labels.items()))
        card["majority_share"] = round(max(labels.values()) / total, 4)
        card["imbalance"] = round(max(labels.values()) / min(labels.values()), 2)  # largest class over smallest
    return card


def datacard(spec: TaskSpec, ctx: RunContext, cap: float = CAP_SECONDS, log: Callable[[str], None] = lambda m: None) -> dict:
    """The data card of one task as a JSON-able dict (see the module's docstring for the near-duplicate rule)."""
    data = load_task(spec, ctx)
    card: dict = {"task": spec.name, "type": spec.mteb_type, "cap_seconds": cap, "splits": {}}
    clips: dict[str, tuple[AudioRef, tuple]] = {}
    names: dict[str, set[str]] = defaultdict(set)  # content key -> clip names
    where: dict[str, set[str]] = defaultdict(set)  # content key -> the splits it is in
    split_refs = {}
    for subset, tables in data.items():
        for split, table in tables.items():
            label = split if subset == "default" else f"{subset}/{split}"
            refs = _refs(spec, table)
            for ref in refs:
                with contextlib.suppress(MaebError):  # an unreadable clip fails in the run, named there
                    if ref.key not in clips:
                        clips[ref.key] = (ref, _header(ref))
                    names[ref.key].add(ref.name)
                    where[ref.key].add(label)
            split_refs[label] = (table, [r for r in refs if r._key is not None])
    log(f"{spec.name}: {len(clips)} distinct clips read")
    headers = {k: h for k, (_, h) in clips.items()}
    for label, (table, refs) in split_refs.items():
        card["splits"][label] = _split_card(spec, table, refs, headers, cap)
    card["clips"] = len(clips)
    card["over_cap"] = sum(1 for f, r, _ in headers.values() if r and f / r > cap)
    card["unreadable_headers"] = sum(1 for _, r, _ in headers.values() if not r)
    exact = [sorted(n) for n in names.values() if len(n) > 1]
    card["exact_duplicates"] = {"groups": len(exact), "clips": sum(len(g) for g in exact), "examples": sorted(exact)[:5]}
    near = _near_groups(clips)
    near_names = [sorted(min(names[k]) for k in g) for g in near]
    card["near_duplicates"] = {
        "rule": f"same rate and frame count, {NEAR_BANDS}-band power spectra within {NEAR_DB:g} dB in every band "
        f"(floored {NEAR_RANGE_DB:g} dB below the loudest)",
        "groups": len(near),
        "clips": sum(len(g) for g in near),
        "examples": sorted(near_names)[:5],
    }
    card["train_test_overlap"] = _overlap(card["splits"], where, near)
    return card


def _overlap(splits: dict, where: dict[str, set[str]], near: list[list[str]]) -> dict | None:
    """Clips of a training split that are also (exactly, or nearly) in an evaluation split; None when the task has no training split."""
    train = {s for s in splits if s.rsplit("/", 1)[-1] in TRAIN_SPLITS}
    if not train or train == set(splits):
        return None
    exact = sum(1 for s in where.values() if s & train and s - train)
    nearly = 0
    for group in near:
        seen = set().union(*(where[k] for k in group))
        nearly += bool(seen & train and seen - train)
    return {"exact": exact, "near_groups": nearly}


def render(card: dict) -> list[str]:
    """The card as text lines."""
    lines = [f"{card['task']} ({card['type']}): {card['clips']} distinct clips"]
    for split, s in card["splits"].items():
        sec = s.get("seconds", {})
        lines.append(
            f"  {split}: {s['clips']} clips, {s['hours']:.3f} h, seconds min/median/max "
            f"{sec.get('min', 0):g}/{sec.get('median', 0):g}/{sec.get('max', 0):g}; "
            f"rates {_counts(s['sample_rates'])}; channels {_counts(s['channels'])}"
            + (f"; {s['queries']} queries, {s['documents']} documents" if "queries" in s else "")
        )
        if "classes" in s:
            lines.append(
                f"    {len(s['classes'])} classes (majority {s['majority_share']:.1%}, largest/smallest {s['imbalance']:g}): "
                + _counts(s["classes"], 12)
            )
    lines.append(f"  over the {card['cap_seconds']:g} s cap: {card['over_cap']} clips (cut there by a head cut)")
    ex, near = card["exact_duplicates"], card["near_duplicates"]
    lines.append(f"  exact duplicates (content hash): {ex['groups']} groups, {ex['clips']} clips" + _examples(ex))
    lines.append(f"  near duplicates ({near['rule']}): {near['groups']} groups, {near['clips']} clips" + _examples(near))
    ov = card["train_test_overlap"]
    lines.append(
        "  train/test overlap: "
        + ("no training split" if ov is None else f"{ov['exact']} clips exactly, {ov['near_groups']} near-duplicate groups")
    )
    if card["unreadable_headers"]:
        lines.append(f"  unreadable headers: {card['unreadable_headers']} clips")
    return lines


def _counts(counts: dict, most: int = 6) -> str:
    items = list(counts.items())
    shown = ", ".join(f"{k}: {v}" for k, v in items[:most])
    return shown + (f", ... ({len(items) - most} more)" if len(items) > most else "")


def _examples(part: dict) -> str:
    return f" (e.g. {' = '.join(part['examples'][0][:3])})" if part["examples"] else ""
