"""maeb's event and segment metrics (maeb.tasktypes.event_detection) against sed_eval 0.2.1 itself,
the scorer of HEAR's event tasks, on identical inputs: random event lists on a 50 ms grid (so many
onsets lie exactly a collar apart, where float rounding decides), clips without reference events,
labels that differ in case. scripts/parity_env.sh installs sed_eval and dcase_util into
.venv-parity; when they are missing these tests fail, naming what to run."""

from __future__ import annotations

import math
import random
import warnings

import pytest

from maeb.tasktypes import event_detection as ed

LABELS = ["dog", "cat", "Dog", "siren"]


@pytest.fixture(scope="module")
def sed():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dcase_util imports pkg_resources, which warns about itself
            import dcase_util
            import sed_eval
    except ImportError as exc:
        pytest.fail(f"the event-metric oracle is missing ({exc}): run `bash scripts/parity_env.sh`", pytrace=False)
    assert sed_eval.__version__ == "0.2.1"
    return sed_eval, dcase_util


def _container(dcase_util, events, clip):
    rows = [{"filename": clip, "event_label": label, "onset": on, "offset": off} for label, on, off in events]
    return dcase_util.containers.MetaDataContainer(rows)


def sed_scores(sed, refs, preds, collar=0.2, fraction=0.2, segment=1.0) -> dict:
    """sed_eval's overall scores of per-clip event lists, fed clip by clip as its docs say."""
    sed_eval, dcase_util = sed
    labels = sorted({e[0] for events in (*refs, *preds) for e in events}) or ["none"]
    onset = sed_eval.sound_event.EventBasedMetrics(labels, evaluate_onset=True, evaluate_offset=False, t_collar=collar)
    both = sed_eval.sound_event.EventBasedMetrics(labels, t_collar=collar, percentage_of_length=fraction)
    seg = sed_eval.sound_event.SegmentBasedMetrics(labels, time_resolution=segment)
    for i, (ref, pred) in enumerate(zip(refs, preds)):
        r, p = _container(dcase_util, ref, f"clip{i}"), _container(dcase_util, pred, f"clip{i}")
        for metric in (onset, both, seg):
            metric.evaluate(reference_event_list=r, estimated_event_list=p)
    out = {}
    for name, metric in (("onset", onset), ("onset_offset", both), ("segment", seg)):
        values = metric.results_overall_metrics()
        out[name] = {**values["f_measure"], "er": values["error_rate"]["error_rate"]}
    return out


def random_events(rng: random.Random, n_max: int, length: float = 6.0) -> list:
    events = []
    for _ in range(rng.randint(0, n_max)):
        onset = rng.randint(0, int(length / 0.05)) * 0.05  # grid-aligned: 0.05 x k, not exact in binary
        events.append((rng.choice(LABELS), onset, onset + rng.randint(1, 40) * 0.05))
    return events


def jitter(rng: random.Random, events: list) -> list:
    """Predictions near the references: onsets moved by whole 50 ms steps (up to 0.3 s), some
    labels swapped, some events dropped or added."""
    out = []
    for label, on, off in events:
        if rng.random() < 0.15:
            continue
        shift = rng.randint(-6, 6) * 0.05
        out.append((rng.choice(LABELS) if rng.random() < 0.15 else label, max(0.0, on + shift), off + rng.randint(-8, 8) * 0.05))
    out = [(lab, on, off) for lab, on, off in out if off > on]
    return out + random_events(rng, 1)


def compare(mine: dict, theirs: dict, names: dict) -> list[str]:
    """The metrics that differ (sed_eval's NaN, where maeb documents a number, is left out)."""
    differ = []
    for kind, ours in (("onset", "event_onset_200ms"), ("onset_offset", "event_onset_offset_200ms"), ("segment", "segment_1s")):
        pairs = [("f_measure", "fms" if kind != "segment" else "f1"), ("precision", "precision"), ("recall", "recall")]
        if kind == "segment":
            pairs.append(("er", "er"))
        for theirs_key, our_key in pairs:
            a, b = mine[f"{ours}_{our_key}"], theirs[kind][theirs_key]
            if isinstance(b, float) and math.isnan(b):
                continue
            if not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12):
                differ.append(f"{ours}_{our_key}: maeb {a!r}, sed_eval {b!r}")
    return differ


PARAMS = {"onset_collar": 0.2, "offset_fraction": 0.2, "segment_seconds": 1.0}


def test_random_event_lists_score_as_sed_eval(sed):
    rng = random.Random(20260425)
    failures = []
    for trial in range(150):
        refs = [random_events(rng, 4) for _ in range(rng.randint(1, 4))]
        preds = [jitter(rng, r) for r in refs]
        differ = compare(ed.score(refs, preds, PARAMS), sed_scores(sed, refs, preds), PARAMS)
        if differ:
            failures.append(f"trial {trial}: {refs} vs {preds}: " + "; ".join(differ))
    assert not failures, f"{len(failures)} of 150 differ; first: {failures[0]}"


def test_an_onset_a_float_rounding_past_the_collar_misses_as_in_sed_eval(sed):
    refs, preds = [[("dog", 0.9, 2.0)]], [[("dog", 0.7, 2.0)]]  # 0.9 - 0.7 = 0.20000000000000007
    theirs = sed_scores(sed, refs, preds)
    assert theirs["onset"]["f_measure"] == 0.0
    assert ed.score(refs, preds, PARAMS)["event_onset_200ms_fms"] == 0.0


def test_insertions_without_reference_events_have_sed_eval_error_rate(sed):
    refs = [[], []]
    preds = [[("dog", 0.0, 10.0), ("cat", 0.0, 10.0)], [("dog", 0.0, 10.0)]]
    ours = ed.segment_scores(refs, preds, 1.0)["er"]
    theirs = sed_scores(sed, refs, preds)["segment"]["er"]
    assert ours > 1e15 and math.isclose(ours, theirs, rel_tol=1e-12)
    # and a system that inserts nothing where there is nothing: 0 in both
    assert ed.segment_scores([[]], [[]], 1.0)["er"] == 0.0


def test_labels_differing_in_case_are_different_classes_in_both_metrics(sed):
    refs, preds = [[("Dog", 1.0, 2.0)]], [[("dog", 1.0, 2.0)]]
    ours = ed.score(refs, preds, PARAMS)
    theirs = sed_scores(sed, refs, preds)
    assert ours["event_onset_200ms_fms"] == theirs["onset"]["f_measure"] == 0.0
    assert ours["segment_1s_f1"] == theirs["segment"]["f_measure"] == 0.0
