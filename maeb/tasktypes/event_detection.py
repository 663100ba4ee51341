"""Sound event detection from time-resolved embeddings (HEAR's timestamp-embedding tasks, such
as DCASE 2016 task 2), main score event-based F1 with a 200 ms onset collar, scored as sed_eval
0.2.1 (HEAR's scorer) scores: collars with no float tolerance, labels as exact strings, the
segment error rate over reference cells + 2.2e-16.

Data: each clip's label cell (data.label_column) is its list of events, [label, onset, offset]
in seconds (or {"label", "onset", "offset"} objects), a JSON list or a JSON string of one (a CSV
cell); an empty list or cell is a clip without events. Frames come from the encoder's
embed_frames (maeb.engine.frames): a (T, D) matrix and each frame's centre time per clip. An event that
starts at or after its clip's end is an error naming the clip (its times belong to another clip
or another time base); events that end after their clip's end, and evaluation events after the
last frame (the length policy kept only the clip's head), are scored as annotated, and the run
says how many (the result records them). Labels of an evaluation split that the train split
lacks are scored as misses (the probe never learns them): the run names them, and the result
records the classes trained and the classes scored.

Probe: every frame of the train split (at most max_train_frames, drawn with the seed) is a
training row, standardised, with one binary target per class: whether the frame's centre time
lies inside an event of that class (onset <= t < offset). One logistic regression per class
(one-vs-rest, so classes may overlap; a class the sample never shows active gets probability 0).
Whether they converged (fewer iterations than max_iter) is recorded under the result's
maeb.evaluation (`convergence`: one fit, the largest count over the classes).
Decoding: per eval clip and class, frames with probability >= threshold are active, the activity
is median-filtered over median_filter_seconds (an odd number of frames, at least 1), and each run
of active frames becomes an event from the first frame's centre minus half a hop to the last
frame's centre plus half a hop (clipped at 0).

Scores, micro-averaged over every clip and class (counts summed), computed as sed_eval 0.2.1 (the
scorer HEAR's event tasks use; tests/parity compares them with sed_eval itself): collars and
segment edges in float64 with no tolerance added, labels compared as exact strings ('Dog' is not
'dog'; a label of the evaluation split that the train split lacks is reported and recorded):
- event_onset_{C}ms_*: a predicted event matches a reference event of the same label when the
  onsets differ by at most the onset collar C (default 200 ms, HEAR's main DCASE 2016 score);
  sed_eval's EventBasedMetrics with evaluate_offset=False, "overall" f_measure;
- event_onset_offset_{C}ms_*: and the offsets differ by at most max(C, offset_fraction x the
  reference event's duration);
  both take a maximum one-to-one matching per clip (maeb.audiogen.timing.match_count, sed_eval's
  "optimal" matching), so two predictions on one reference count one true and one false positive;
- segment_{L}s_*: clips cut into segments of L seconds (default 1), as many as the later of the
  last reference and the last predicted offset needs (ceil(offset / L)); an event is active from
  segment floor(onset / L) up to ceil(offset / L) (exclusive); precision, recall and F1 over (clip,
  segment, class) cells, and the error rate (S + D + I) / N over the reference cells N, with per
  segment S = min(FN, FP), D = max(0, FN - FP), I = max(0, FP - FN), each rate divided by
  N + eps (eps = float64 spacing at 1, 2.2e-16) as sed_eval divides: with no reference event at
  all, a system that inserts any gets an error rate of the order of 1e16 (not 0), and one that
  inserts none gets 0.
Where sed_eval gives NaN maeb gives numbers: precision (recall) is 0 when nothing is predicted (in
the reference), F1 is 1 when neither side has any event."""

from __future__ import annotations

import json
import math
import warnings
from typing import TYPE_CHECKING, cast

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType
from .probe import Convergence

if TYPE_CHECKING:
    from ..engine.embed import Embedder


def _ms(seconds: float) -> str:
    return f"{round(seconds * 1000):d}ms"


def _seg(seconds: float) -> str:
    return f"{seconds:g}s"


def metric_names(p: dict) -> dict[str, str]:
    """The metric name prefixes for the protocol's onset collar and segment length (e.g. event_onset_200ms)."""
    onset, seg = _ms(p["onset_collar"]), _seg(p["segment_seconds"])
    return {
        "onset": f"event_onset_{onset}",
        "onset_offset": f"event_onset_offset_{onset}",
        "segment": f"segment_{seg}",
    }


# ---------------------------------------------------------------- events


def parse_events(value, where: str) -> list[tuple[str, float, float]]:
    """A label cell as (label, onset, offset) events, sorted by onset."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: events {value[:60]!r} are not JSON ({exc.msg})") from exc
    if not isinstance(value, (list, tuple)):
        raise DataError(f"{where}: events must be a list of [label, onset, offset], got {value!r}")
    out = []
    for item in value:
        try:
            if isinstance(item, dict):
                label, onset, offset = item["label"], item["onset"], item["offset"]
            else:
                label, onset, offset = item
            onset, offset = float(onset), float(offset)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where}: event {item!r} is not [label, onset, offset] ({exc})") from exc
        if not (math.isfinite(onset) and math.isfinite(offset)) or onset < 0 or offset <= onset:
            raise DataError(f"{where}: event {item!r} must start at 0 s or later and end after it starts")
        out.append((str(label), onset, offset))
    return sorted(out, key=lambda e: (e[1], e[2], e[0]))


def frame_targets(times: np.ndarray, events, classes: list[str]) -> np.ndarray:
    """(T, classes) 0/1: the frame's centre lies in [onset, offset) of an event of the class."""
    y = np.zeros((len(times), len(classes)), dtype=np.int8)
    column = {c: j for j, c in enumerate(classes)}
    for label, onset, offset in events:
        if label in column:
            y[(times >= onset) & (times < offset), column[label]] = 1
    return y


def decode(probs: np.ndarray, times: np.ndarray, classes: list[str], threshold: float, median_seconds: float):
    """Events from one clip's (T, classes) frame probabilities (rules in the module docstring)."""
    from scipy.signal import medfilt

    if len(times) == 0:
        return []
    hop = float(np.median(np.diff(times))) if len(times) > 1 else 0.02
    width = max(1, int(round(median_seconds / hop)) if hop > 0 else 1)
    width += 1 - width % 2  # odd
    events = []
    for j, label in enumerate(classes):
        active = (probs[:, j] >= threshold).astype(np.float64)
        if width > 1 and len(active) > 1:
            active = medfilt(active, width)
        edges = np.diff(np.concatenate([[0], (active > 0.5).astype(np.int8), [0]]))
        for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            onset = max(0.0, float(times[start]) - hop / 2)
            events.append((label, onset, float(times[stop - 1]) + hop / 2))
    return sorted(events, key=lambda e: (e[1], e[2], e[0]))


# ---------------------------------------------------------------- scores


def _ratio(a: float, b: float) -> float:
    return float(a / b) if b else 0.0


def _prf(tp: int, n_ref: int, n_pred: int) -> tuple[float, float, float]:
    f1 = 2 * tp / (n_ref + n_pred) if n_ref + n_pred else 1.0
    return _ratio(tp, n_pred), _ratio(tp, n_ref), float(f1)


def event_scores(references: list, predictions: list, onset_collar=0.2, offset_collar=0.2, offset_fraction=0.2) -> dict:
    """Event-based precision, recall and F1 (micro over clips and classes) of per-clip lists of
    (label, onset, offset); offset_collar=inf scores onsets only."""
    from ..audiogen.timing import Segment, match_count

    tp = n_ref = n_pred = 0
    for ref, pred in zip(references, predictions):
        r = [Segment("sound", on, off, label) for label, on, off in ref]
        p = [Segment("sound", on, off, label) for label, on, off in pred]
        tp += match_count(r, p, onset_collar=onset_collar, offset_collar=offset_collar, offset_fraction=offset_fraction)
        n_ref, n_pred = n_ref + len(r), n_pred + len(p)
    precision, recall, f1 = _prf(tp, n_ref, n_pred)
    return {"fms": f1, "precision": precision, "recall": recall, "tp": tp, "n_ref": n_ref, "n_pred": n_pred}


def _activity(events, classes: list[str], n_segments: int, length: float) -> np.ndarray:
    """(segments, classes): sed_eval's event roll (onset floored, offset ceiled, in segments)."""
    grid = np.zeros((n_segments, len(classes)), dtype=bool)
    column = {c: j for j, c in enumerate(classes)}
    for label, onset, offset in events:
        grid[int(math.floor(onset / length)) : int(math.ceil(offset / length)), column[label]] = True
    return grid


EPS = float(np.spacing(1))  # sed_eval's denominator guard: rates are counts / (N + EPS)


def segment_scores(references: list, predictions: list, length: float = 1.0) -> dict:
    """Segment-based precision, recall, F1 and error rate (rules in the module docstring)."""
    classes = sorted({e[0] for events in (*references, *predictions) for e in events})
    tp = fp = fn = subs = dels = ins = n_ref = 0
    for ref, pred in zip(references, predictions):
        end = max([e[2] for e in (*ref, *pred)], default=0.0)
        n = int(math.ceil(end / length))
        r, p = _activity(ref, classes, n, length), _activity(pred, classes, n, length)
        seg_fn, seg_fp = (r & ~p).sum(axis=1), (~r & p).sum(axis=1)
        tp += int((r & p).sum())
        fp, fn, n_ref = fp + int(seg_fp.sum()), fn + int(seg_fn.sum()), n_ref + int(r.sum())
        subs += int(np.minimum(seg_fn, seg_fp).sum())
        dels += int(np.maximum(0, seg_fn - seg_fp).sum())
        ins += int(np.maximum(0, seg_fp - seg_fn).sum())
    precision, recall, f1 = _prf(tp, tp + fn, tp + fp)
    er = subs / (n_ref + EPS) + dels / (n_ref + EPS) + ins / (n_ref + EPS)
    return {"f1": f1, "precision": precision, "recall": recall, "er": float(er)}


def score(references: list, predictions: list, p: dict) -> dict:
    """Event-based (onset, onset-offset) and segment-based scores of predicted against reference events, per clip lists of (label,
    onset, offset)."""
    names = metric_names(p)
    out = {}
    onset = event_scores(references, predictions, p["onset_collar"], math.inf, 0.0)
    both = event_scores(references, predictions, p["onset_collar"], p["onset_collar"], p["offset_fraction"])
    for key, values in (("onset", onset), ("onset_offset", both)):
        out.update({f"{names[key]}_{m}": values[m] for m in ("fms", "precision", "recall")})
    seg = segment_scores(references, predictions, p["segment_seconds"])
    out.update({f"{names['segment']}_{m}": v for m, v in seg.items()})
    return out


# ---------------------------------------------------------------- the probe


def _fit(x: np.ndarray, y: np.ndarray, p: dict):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    xs = scaler.transform(x)
    models = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for j in range(y.shape[1]):
            if y[:, j].min() == y[:, j].max():
                models.append(float(y[0, j]))  # never (or always) active in the sample: a constant
            else:
                models.append(LogisticRegression(max_iter=p["max_iter"], C=p["C"], random_state=p["seed"]).fit(xs, y[:, j]))
    return scaler, models


def _predict(probe, x: np.ndarray) -> np.ndarray:
    scaler, models = probe
    if len(x) == 0:
        return np.zeros((0, len(models)))
    xs = scaler.transform(x)
    columns = [np.full(len(x), m) if isinstance(m, float) else m.predict_proba(xs)[:, 1] for m in models]
    return np.stack(columns, axis=1)


def _events_column(table, spec) -> list[list]:
    label = spec.data.label_column
    table.require([label], "events (data.label_column)")
    return [parse_events(v, f"{spec.name}: {table.where_is(i)} column {label!r}") for i, v in enumerate(table[label])]


def _frames(emb, spec, table):
    from ..engine.frames import frame_embeddings

    audio = spec.data.audio_column
    table.require([audio], "audio")
    frames = frame_embeddings(emb, table[audio], spec.name)
    perturb = getattr(emb, "perturb_frames", None)  # a stability replay's noise (maeb.run.stability)
    return perturb(frames) if perturb else frames


def _hop(items) -> float | None:
    """The median frame step of the first clip with two frames or more (what the info records)."""
    for item in items:
        if item is not None and len(item[1]) > 1:
            return round(float(np.median(np.diff(item[1]))), 6)
    return None


def _clip_seconds(ref) -> float | None:
    """The clip's duration from its header (its segment when it has one), None when unknown."""
    from ..audio.pipeline import clip_seconds

    whole = clip_seconds(ref)
    if whole <= 0:
        return None
    end = whole if ref.end is None else min(whole, ref.end)
    return end - (ref.start or 0.0)


def check_event_times(refs, events: list, where: str) -> int:
    """Events against their clips' durations: one that starts at or after the end is an error;
    the number of those that end after it is returned."""
    late = 0
    for ref, clip_events in zip(refs, events):
        if not clip_events:
            continue
        seconds = _clip_seconds(ref)
        if seconds is None:
            continue
        for label, onset, offset in clip_events:
            if onset >= seconds:
                raise DataError(
                    f"{where}: clip {ref.name!r} is {seconds:.3f} s long, but its event [{label!r}, {onset:g}, {offset:g}] "
                    "starts at or after its end; event times are seconds from the clip's start"
                )
            late += offset > seconds
    return late


def _label_notes(classes: list[str], test_events: list, split: str, train_split: str) -> tuple[dict, str]:
    """The evaluation labels the train split lacks (label -> events) and a line naming them."""
    unseen: dict[str, int] = {}
    for events in test_events:
        for label, _, _ in events:
            if label not in classes:
                unseen[label] = unseen.get(label, 0) + 1
    if not unseen:
        return {}, ""
    folded = {c.strip().casefold(): c for c in classes}
    shown = []
    for label, n in sorted(unseen.items()):
        near = folded.get(label.strip().casefold())
        shown.append(f"{label!r} ({n} events" + (f"; the {train_split} split has {near!r}" if near else "") + ")")
    line = (
        f"labels of the {split} split that the {train_split} split lacks count as misses (the probe never learns them): "
        + ", ".join(shown)
    )
    return dict(sorted(unseen.items())), line


class EventDetection(TaskType):
    """The event detection task type (the module's docstring says what it scores and how)."""

    NAME = "event_detection"
    MAIN_SCORE = "event_onset_200ms_fms"
    PARAMS = {
        "threshold": Param(0.5, "frame probability at or above which a class is active", min=0.0, max=1.0),
        "median_filter_seconds": Param(0.25, "width of the median filter over frame activity (0: none)", min=0.0),
        "onset_collar": Param(0.2, "seconds an onset may be off and still match (names the event metrics)", min=0.0),
        "offset_fraction": Param(
            0.2, "offset collar as a share of the reference event's duration (at least the onset collar)", min=0.0
        ),
        "segment_seconds": Param(1.0, "segment length of the segment-based scores (names them)", min=0.01),
        "max_train_frames": Param(200000, "training frames at most (a seeded draw when the train split has more)", min=1),
        "max_iter": Param(200, "LogisticRegression iterations", min=1),
        "C": Param(1.0, "LogisticRegression inverse regularisation", min=1e-6),
        "seed": Param(42, "seed of the frame draw and the classifiers", min=0, max=2**32 - 1),
    }

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names an event detection result holds for this spec's collar and segment length."""
        names = metric_names(spec.protocol)
        event = [f"{names[k]}_{m}" for k in ("onset", "onset_offset") for m in ("fms", "precision", "recall")]
        return (*event, *(f"{names['segment']}_{m}" for m in ("f1", "precision", "recall", "er")))

    def splits(self, spec: TaskSpec) -> list[str]:
        """The splits to load: the eval splits and the train split the probe is fit on."""
        return list(dict.fromkeys(spec.data.eval_splits + [spec.data.train_split]))

    def needs(self, spec: TaskSpec) -> set[str]:
        """The sides of the model the type uses: audio and time-resolved frames."""
        return {"audio", "frames"}  # frames: time-resolved embeddings (embed_frames)

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: fit the frame probe on the train split's frames and events, decode the test clips' frames into events,
        and score them as sed_eval does."""
        from ..engine.frames import fingerprint, require_frames

        p = spec.protocol
        engine = cast(
            "Embedder", emb
        )  # the engine's own functions run the embedder's loop: they take it whole, beyond Embeddings
        require_frames(engine, spec.name)  # before anything is decoded
        train, test = data[spec.data.train_split], data[split]
        train_events, test_events = _events_column(train, spec), _events_column(test, spec)
        audio = spec.data.audio_column
        late = {
            name: check_event_times(table[audio], events, f"{spec.name}: {name} split")
            for name, table, events in ((spec.data.train_split, train, train_events), (split, test, test_events))
            if audio in table
        }
        classes = sorted({e[0] for events in train_events for e in events})
        if not classes:
            raise DataError(f"{spec.name}: the {spec.data.train_split} split has no events to train a frame probe on")
        unseen, line = _label_notes(classes, test_events, split, spec.data.train_split)
        if line:
            emb.log(f"warning: {spec.name}: {line}; the result records them")
        if any(late.values()):
            where = ", ".join(f"{n} in {name}" for name, n in late.items() if n)
            emb.log(f"warning: {spec.name}: events end after their clip ends ({where}); they are scored as annotated")
        with emb.on_split(spec.data.train_split):
            train_frames = _frames(emb, spec, train)
        rows = [(f, frame_targets(f[1], ev, classes)) for f, ev in zip(train_frames, train_events) if f is not None]
        if not rows or not sum(len(f[0]) for f, _ in rows):
            raise DataError(f"{spec.name}: the {spec.data.train_split} split gave no frames to train on")
        x = np.concatenate([f[0] for f, _ in rows])
        y = np.concatenate([t for _, t in rows])
        if len(x) > p["max_train_frames"]:
            keep = np.sort(np.random.default_rng(p["seed"]).choice(len(x), p["max_train_frames"], replace=False))
            x, y = x[keep], y[keep]
        probe = _fit(x, y, p)
        fits = Convergence()  # one fit: the largest count over the classes' LogisticRegressions
        fits.add(probe[1])

        test_frames = _frames(emb, spec, test)
        names = test[spec.data.audio_column]
        references, predictions, shown = [], [], []
        unframed = 0
        for ref, frames, events in zip(names, test_frames, test_events):
            if frames is None:  # skipped as unusable (--on-bad-audio skip): not scored
                continue
            if len(frames[1]):
                covered = float(frames[1][-1]) + (_hop([frames]) or 0.0) / 2
                unframed += sum(onset >= covered for _, onset, _ in events)
            predicted = decode(_predict(probe, frames[0]), frames[1], classes, p["threshold"], p["median_filter_seconds"])
            references.append(events)
            predictions.append(predicted)
            shown.append({"clip": ref.name, "events": [[label, round(on, 3), round(off, 3)] for label, on, off in predicted]})
        if not references:
            raise DataError(f"{spec.name}: every clip of {split} was skipped; nothing is left to score")
        if unframed:
            emb.log(
                f"warning: {spec.name}: {unframed} {split} events start after their clip's last frame (the length policy "
                "keeps only the head of longer clips); they count as misses"
            )
        values = score(references, predictions, p)
        info = {
            "scorer": "sed_eval 0.2.1 rules (HEAR's): no collar tolerance, exact labels, error rate over N + 2.2e-16",
            "classes": classes,
            "classes_scored": sorted(set(classes) | set(unseen)),
            **({"eval_only_classes": unseen} if unseen else {}),
            **({"events_ending_after_clip": {k: v for k, v in late.items() if v}} if any(late.values()) else {}),
            **({"eval_events_after_last_frame": unframed} if unframed else {}),
            "train_frames": int(len(x)),
            "train_frames_active": {c: int(y[:, j].sum()) for j, c in enumerate(classes)},
            "eval_clips": len(references),
            "frame_hop_seconds": _hop(test_frames),
            "frame_fingerprints": {"train": fingerprint(train_frames), split: fingerprint(test_frames)},
            "convergence": fits.record(),
        }
        lines = "".join(json.dumps(row) + "\n" for row in shown)
        files = {"predicted_events.jsonl": lines}  # not .json: result folders are read for .json results
        return Evaluation(metrics=values, info=info, files=files)
