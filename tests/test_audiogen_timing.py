"""Timestamp control: the caption grammar, the one-to-one F1 rule and the offline detectors."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import soundfile

from maeb.audiogen import timing
from maeb.audiogen.metric import GeneratedItem, Metric, MetricUnavailable
from maeb.audiogen.request import SynthesisRequest
from maeb.audiogen.speech import to_16k
from maeb.audiogen.timing import Segment, TimestampF1, clip_f1, match_count, parse_timestamped_caption
from maeb.core.errors import DataError

RATE = 16000
OFFLINE = {"speech_detector": "webrtcvad", "sound_detector": "energy"}


def spans(caption):
    return [(s.kind, s.onset, s.offset, s.label) for s in parse_timestamped_caption(caption)]


@pytest.mark.parametrize(
    "caption, expected",
    [
        (
            'A woman says "turn left here" (0.5-1.8s), then a dog barks (2.0-2.6s) over soft piano music.',
            [("speech", 0.5, 1.8, None), ("sound", 2.0, 2.6, "a dog barks")],
        ),
        ("A dog barks from 0.5s to 1.8s.", [("sound", 0.5, 1.8, "A dog barks")]),
        ("A dog barks from 0.5 to 1.8 s.", [("sound", 0.5, 1.8, "A dog barks")]),
        (
            "A car horn honks 0.5-1.8 s, and a man shouts 2-3s.",
            [("sound", 0.5, 1.8, "A car horn honks"), ("speech", 2.0, 3.0, None)],
        ),
        (
            "A bell rings [0.5-1.8s]; a boy asks a question [2.1 - 2.9s].",
            [("sound", 0.5, 1.8, "A bell rings"), ("speech", 2.1, 2.9, None)],
        ),
        ("Thunder rumbles (0.5s-1.8s).", [("sound", 0.5, 1.8, "Thunder rumbles")]),
        ("Thunder rumbles (0.5\u20131.8s).", [("sound", 0.5, 1.8, "Thunder rumbles")]),
        # a comma inside the quote does not cut the clause; the quote alone makes it speech
        ('Rain falls throughout. "Wait, come back" (1.0-2.5s).', [("speech", 1.0, 2.5, None)]),
        # a bracketed number that is no time span is text, not an error
        ("Dogs (2 of them) bark (0.5-1.0s).", [("sound", 0.5, 1.0, "Dogs (2 of them) bark")]),
        ("Birds chirp throughout the entire process, while a man is talking (0.2-1.5s).", [("speech", 0.2, 1.5, None)]),
    ],
)
def test_caption_forms(caption, expected):
    assert spans(caption) == expected


@pytest.mark.parametrize(
    "caption, message",
    [
        ("A dog barks loudly in a park.", "no time span"),
        ("A dog barks (1.8-0.5s).", "does not end after it starts"),
        ("A dog barks (0.5-s) near a road.", "malformed time span"),
        ("(0.5-1.0s) a dog barks.", "follows no clause"),
    ],
)
def test_caption_errors_name_the_caption(caption, message):
    with pytest.raises(DataError, match=message) as err:
        parse_timestamped_caption(caption, where="clip 'k1'")
    assert "clip 'k1'" in str(err.value) and caption[:10] in str(err.value)


def seg(on, off, label=None, kind="sound"):
    return Segment(kind, on, off, label)


def test_f1_rule_on_hand_made_intervals():
    ref = [seg(0.5, 1.5), seg(2.0, 3.0), seg(4.0, 4.5)]
    assert clip_f1(ref, list(ref)) == 1.0
    assert clip_f1(ref, [seg(0.8, 1.5), seg(2.3, 3.0), seg(4.3, 4.8)]) == 0.0  # every onset 0.3 s off
    assert clip_f1(ref, ref[:2]) == pytest.approx(2 * 2 / (2 * 2 + 0 + 1))  # one missing: 0.8
    assert clip_f1(ref[:2], [ref[0]]) == pytest.approx(2 / 3)
    assert clip_f1([], []) == 1.0 and clip_f1([], [seg(0, 1)]) == 0.0 and clip_f1(ref, []) == 0.0
    # onset inside the 0.2 s collar matches; just outside does not
    assert match_count([seg(1.0, 2.0)], [seg(1.19, 2.0)]) == 1
    assert match_count([seg(1.0, 2.0)], [seg(1.21, 2.0)]) == 0
    # offset tolerance is max(0.2 s, 0.2 x duration): 0.8 s on a 4 s event, 0.2 s on a 0.5 s one
    assert match_count([seg(0.0, 4.0)], [seg(0.0, 4.7)]) == 1
    assert match_count([seg(0.0, 4.0)], [seg(0.0, 4.9)]) == 0
    assert match_count([seg(0.0, 0.5)], [seg(0.0, 0.75)]) == 0
    # options move the collars
    assert match_count([seg(1.0, 2.0)], [seg(1.4, 2.0)], onset_collar=0.5) == 1


def test_matching_is_one_to_one_and_maximal():
    ref = [seg(1.0, 2.0)]
    assert match_count(ref, [seg(1.0, 2.0), seg(1.1, 2.1)]) == 1
    assert clip_f1(ref, [seg(1.0, 2.0), seg(1.1, 2.1)]) == pytest.approx(2 / 3)
    # greedy would pair p0 with r0 and leave r1 unmatched; the maximum matching finds two pairs
    refs = [seg(1.0, 2.0), seg(1.25, 2.25)]
    preds = [seg(1.1, 2.1), seg(0.85, 1.85)]
    assert match_count(refs, preds) == 2


def test_labels_match_only_when_both_sides_have_them():
    ref = [seg(1.0, 2.0, "dog barking")]
    assert match_count(ref, [seg(1.0, 2.0)]) == 1  # unlabelled detector: class-agnostic
    assert match_count(ref, [seg(1.0, 2.0, "dog barking")]) == 1
    # labels are compared as sed_eval compares them, exact strings (one rule with the segment metrics)
    assert match_count(ref, [seg(1.0, 2.0, "Dog barking")]) == 0
    assert match_count(ref, [seg(1.0, 2.0, "car horn")]) == 0


def espeak(text):
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is not installed")
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".wav") as f:
        subprocess.run(["espeak-ng", "-v", "en-us+m3", "-w", f.name, text], check=True, capture_output=True)
        audio, rate = soundfile.read(f.name, dtype="float32")
    audio = to_16k(audio, rate)
    loud = np.flatnonzero(np.abs(audio) > 0.01)  # espeak pads its output with silence
    return audio[loud[0] : loud[-1] + 1]


def burst(seconds, freq=6000.0, amp=0.3):
    t = np.arange(int(seconds * RATE)) / RATE
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def scene(speech_at, burst_at, burst_len=0.6, total=6.0):
    """A clip with an espeak utterance starting at speech_at and a tone burst at burst_at."""
    rng = np.random.default_rng(0)
    x = 1e-4 * rng.standard_normal(int(total * RATE)).astype(np.float32)
    words = espeak("turn left here please")
    start = int(speech_at * RATE)
    x[start : start + len(words)] += words
    b = burst(burst_len)
    x[int(burst_at * RATE) : int(burst_at * RATE) + len(b)] += b
    return x, (speech_at, speech_at + len(words) / RATE), (burst_at, burst_at + burst_len)


def test_webrtcvad_finds_an_utterance_within_the_collar():
    x, (on, off), _ = scene(1.3, 4.5)
    found = timing.webrtcvad_segments(x)
    assert len(found) == 1, found  # the high tone burst is not speech
    assert abs(found[0][0] - on) <= 0.2 and abs(found[0][1] - off) <= max(0.2, 0.2 * (off - on)), (found, on, off)


def test_energy_detector_finds_bursts_at_known_times():
    x = np.zeros(5 * RATE, np.float32)
    placed = [(0.5, 0.8), (2.0, 2.9), (3.6, 3.8)]
    for i, (on, off) in enumerate(placed):
        b = burst(off - on, freq=500.0 * (i + 1), amp=0.2 + 0.1 * i)
        x[round(on * RATE) : round(on * RATE) + len(b)] = b
    found = timing.energy_segments(x)
    assert len(found) == 3, found
    for (on, off), (f_on, f_off) in zip(placed, found):
        assert abs(f_on - on) <= 0.03 and abs(f_off - off) <= 0.03, found
    assert timing.energy_segments(np.zeros(RATE, np.float32)) == []  # silence has no events


def test_subtract_removes_speech_from_sound_events():
    assert timing.subtract([(0.0, 3.0)], [(1.0, 2.0)], 0.1) == [(0.0, 1.0), (2.0, 3.0)]
    assert timing.subtract([(0.95, 2.05)], [(1.0, 2.0)], 0.1) == []


def item(key, x, caption=None, structured=None):
    req = SynthesisRequest(key=key, caption="scene", duration=len(x) / RATE, timestamped_caption=caption, structured=structured)
    return GeneratedItem(req, x, RATE)


def test_timestamp_f1_is_one_on_perfectly_timed_audio():
    x, speech, sound = scene(0.5, 3.0)
    caption = (
        f'A man says "turn left here please" ({speech[0]:.2f}-{speech[1]:.2f}s), '
        f"then a high beep sounds ({sound[0]:.1f}-{sound[1]:.1f}s) in a quiet room."
    )
    metric = TimestampF1(keys=("speech_f1", "sound_f1"), options=OFFLINE)
    assert isinstance(metric, Metric)
    late = np.concatenate([np.zeros(RATE, np.float32), x])[: len(x)]  # everything 1 s late
    metric.update([item("timed", x, caption), item("late", late, caption), item("untimed", x)])
    assert metric.per_clip["timed"]["speech_f1"] == 1.0, metric.per_clip
    assert metric.per_clip["timed"]["sound_f1"] == 1.0, metric.per_clip
    assert metric.per_clip["late"]["speech_f1"] == 0.0 and metric.per_clip["late"]["sound_f1"] == 0.0
    assert metric.result() == {"speech_f1": 0.5, "sound_f1": 0.5}
    prov = metric.provenance()
    assert prov["stand_in"] is True and prov["skipped_no_timestamps"] == 1


def test_structured_segments_override_the_caption():
    x, speech, sound = scene(0.5, 3.0)
    structured = {"speech_segments": [list(speech)], "sound_segments": [[sound[0], sound[1], "beep"]]}
    metric = TimestampF1(keys=("sound_f1",), options=OFFLINE)
    metric.update([item("s", x, caption="A dog barks (5.0-5.5s).", structured=structured)])
    assert metric.per_clip["s"]["speech_f1"] == 1.0 and metric.result() == {"sound_f1": 1.0}
    with pytest.raises(DataError, match="clip 'bad'"):
        metric.update([item("bad", x, structured={"speech_segments": [[2.0, 1.0]]})])


def test_paper_detectors_are_unavailable_with_a_reason():
    with pytest.raises(MetricUnavailable, match="PE-A-Frame has no installable package"):
        TimestampF1(keys=("sound_f1",), options={"speech_detector": "webrtcvad", "sound_detector": "pe-a-frame"})
    try:
        import whisperx  # noqa: F401
    except ImportError:
        with pytest.raises(MetricUnavailable, match="pip install whisperx"):
            TimestampF1(keys=("speech_f1",), options={"speech_detector": "whisperx", "sound_detector": "energy"})
