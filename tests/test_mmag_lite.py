"""MMAG-lite: the build's layout, determinism and timings, the captions' intervals, and the three
offline systems (oracle = reference, resynth = same timing other timbre, noise = no structure).
Skipped without Debian's espeak-ng, flite and fluidsynth."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil

import numpy as np
import pytest
import soundfile as sf

from maeb.audiogen.request import SynthesisRequest
from maeb.audiogen.systems import NoiseSystem, OracleSystem, ResynthSystem
from maeb.benchmarks.mmag_lite.build import COLUMNS, EXTRA, build
from maeb.core.errors import ModelError
from maeb.synth import scenes

TOOLS = all(shutil.which(t) for t in ("espeak-ng", "flite", "fluidsynth"))
pytestmark = pytest.mark.skipif(not TOOLS, reason="Debian's espeak-ng, flite or fluidsynth is missing")

SIZES = {"main": 3, "voice_cloning": 2, "timestamp": 3}
RATE = 16000
SPEECH_VERBS = ("says", "speaks", "asks", "answers", "announces", "whispers", "shouts", "talks")


def _clear_caches():
    scenes._utterance.cache_clear()
    scenes._arpeggio.cache_clear()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("mmag") / "lite"
    _clear_caches()
    return root, build(root, seed=0, sizes=SIZES)


def _rows(root, subset):
    with open(root / subset / "metadata.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


def _all_rows(root):
    return [(subset, row) for subset in SIZES for row in _rows(root, subset)[1]]


def _read(path):
    audio, rate = sf.read(path, dtype="float32", always_2d=True)
    return audio, rate


def _rms(x):
    return float(np.sqrt(np.mean(np.asarray(x, dtype=np.float64) ** 2)))


def _quiet_rms(audio, structured):
    """RMS where neither speech nor an event is (the music bed), with 50 ms of margin."""
    mask = np.ones(len(audio), bool)
    for seg in structured["speech_segments"] + structured["sound_segments"]:
        mask[max(0, int((seg[0] - 0.05) * RATE)) : int((seg[1] + 0.05) * RATE)] = False
    return _rms(audio[mask])


def _inside(audio, on, off):
    return audio[int(on * RATE) : int(off * RATE)]


def _request(row):
    return SynthesisRequest(
        key=row["key"], caption=row["caption"], duration=float(row["duration"]), structured=json.loads(row["structured"])
    )


def test_layout_columns_counts_and_audio(built):
    root, manifest = built
    assert manifest["clips"] == SIZES
    for subset, count in SIZES.items():
        columns, rows = _rows(root, subset)
        assert columns == COLUMNS + EXTRA[subset]
        assert len(rows) == count
        assert len({r["key"] for r in rows}) == count
        for row in rows:
            audio, rate = _read(root / subset / row["file_name"])
            assert rate == RATE and audio.shape == (int(float(row["duration"]) * RATE), 1)
            assert float(row["duration"]) == 6.0
            structured = json.loads(row["structured"])
            assert set(structured) >= {"script", "speech_segments", "sound_segments"}
            assert f'"{row["transcript"]}"' in row["caption"]
            assert scenes.INSTRUMENTS[structured["script"]["music"]["program"]] in row["caption"]
            assert 1 <= len(structured["sound_segments"]) <= 2
            if subset == "voice_cloning":
                prompt, rate = _read(root / subset / row["voice_prompt"])
                assert rate == RATE and prompt.shape[1] == 1 and 2.0 <= len(prompt) / RATE <= 4.0


def test_build_is_deterministic_and_reused(built, tmp_path):
    root, manifest = built
    _clear_caches()  # the second build synthesises everything again
    again = build(tmp_path / "again", seed=0, sizes=SIZES)
    assert again["files"] == manifest["files"]
    name = _rows(root, "main")[1][0]["file_name"]
    assert (tmp_path / "again" / "main" / name).read_bytes() == (root / "main" / name).read_bytes()
    other = build(tmp_path / "other", seed=1, sizes=SIZES)
    assert other["files"]["main"][name] != manifest["files"]["main"][name]
    said = []
    build(root, seed=0, sizes=SIZES, log=said.append)
    assert said and "reusing" in said[0]


def test_speech_segment_lies_in_its_window_and_carries_the_energy(built):
    root, _ = built
    for subset, row in _all_rows(root):
        audio = _read(root / subset / row["file_name"])[0][:, 0]
        structured = json.loads(row["structured"])
        script = structured["script"]
        [(on, off)] = structured["speech_segments"]
        assert abs(on - script["speech"]["onset"]) <= 1 / RATE
        later = [e["onset"] for e in script["events"] if e["onset"] > on]
        assert off <= min(later, default=script["duration"])
        for a, b, _label in structured["sound_segments"]:
            assert b <= on or a >= off  # the events fall where no one speaks
        assert _rms(_inside(audio, on, off)) > 2.5 * _quiet_rms(audio, structured)


def test_sound_events_start_at_their_onsets(built):
    root, _ = built
    for subset, row in _all_rows(root):
        audio = _read(root / subset / row["file_name"])[0][:, 0]
        structured = json.loads(row["structured"])
        events = structured["script"]["events"]
        for event, (on, off, label) in zip(events, structured["sound_segments"]):
            assert label == event["label"] and abs(on - event["onset"]) <= 1 / RATE
            assert off - on <= event["seconds"] + 1e-9
            onset_burst = _inside(audio, on, on + 0.02)
            assert np.abs(onset_burst).max() > 4 * _quiet_rms(audio, structured)


def test_timestamped_caption_intervals_equal_the_timings(built):
    root, _ = built
    for row in _rows(root, "timestamp")[1]:
        structured = json.loads(row["structured"])
        text = row["timestamped_caption"]
        assert text.endswith(" music.")
        clauses = text.split(", then ")
        truth = sorted([(*s, "speech") for s in structured["speech_segments"]] + [tuple(s) for s in structured["sound_segments"]])
        assert len(clauses) == len(truth)
        for clause, (on, off, what) in zip(clauses, truth):
            match = re.search(r"\((\d+\.\d)-(\d+\.\d)s\)", clause)
            assert match, clause
            assert abs(float(match.group(1)) - on) <= 0.05 + 1e-6 and abs(float(match.group(2)) - off) <= 0.05 + 1e-6
            words = re.findall(r"[a-z]+", clause.lower())
            if what == "speech":
                assert f'"{row["transcript"]}"' in clause and "says" in words
            else:
                assert '"' not in clause and not set(SPEECH_VERBS) & set(words)


def test_oracle_reproduces_the_reference(built):
    root, _ = built
    rows = _rows(root, "main")[1] + _rows(root, "timestamp")[1][:1]
    system = OracleSystem(None)
    outputs = system.synthesize([_request(r) for r in rows])
    for row, out, subset in zip(rows, outputs, ["main"] * 3 + ["timestamp"]):
        reference = _read(root / subset / row["file_name"])[0][:, 0]
        assert out.dtype == np.float32 and out.shape == reference.shape
        assert np.abs(out - reference).max() < 1e-4  # PCM16 rounding
        buf = io.BytesIO()
        sf.write(buf, out, RATE, format="WAV", subtype="PCM_16")
        assert buf.getvalue() == (root / subset / row["file_name"]).read_bytes()


def test_resynth_changes_the_timbre_and_keeps_the_speech_interval(built):
    root, _ = built
    rows = _rows(root, "main")[1]
    outputs = ResynthSystem(None).synthesize([_request(r) for r in rows])
    for row, out in zip(rows, outputs):
        reference = _read(root / "main" / row["file_name"])[0][:, 0]
        structured = json.loads(row["structured"])
        voice = structured["script"]["speech"]["voice"]
        assert scenes.SPEAKERS[scenes.OTHER_GENDER[voice]].gender != scenes.SPEAKERS[voice].gender
        assert out.shape == reference.shape
        assert np.abs(out - reference).max() > 0.1
        [(on, off)] = structured["speech_segments"]
        assert abs(np.corrcoef(_inside(out, on, off), _inside(reference, on, off))[0, 1]) < 0.3  # another voice
        assert _rms(_inside(out, on, off)) > 2.5 * _quiet_rms(out, structured)
        _, timings = scenes.render(structured["script"], scenes.OTHER_GENDER, scenes.OTHER_INSTRUMENT)
        [(r_on, r_off)] = timings["speech_segments"]
        # same onset; the other voice's audible end within the F1 collar of the original's
        assert r_on == on and abs(r_off - off) < 0.2 and r_off - r_on > 0.8 * (off - on)


def _flatness(audio):
    frames = audio[: len(audio) // 512 * 512].reshape(-1, 512).astype(np.float64)
    power = np.abs(np.fft.rfft(frames * np.hanning(512), axis=1)) ** 2 + 1e-12
    return float(np.mean(np.exp(np.mean(np.log(power), axis=1)) / np.mean(power, axis=1)))


def _frame_rms_spread(audio):
    frames = audio[: len(audio) // 800 * 800].reshape(-1, 800).astype(np.float64)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    return float(rms.std() / rms.mean())


def test_noise_has_no_structure(built):
    root, _ = built
    row = _rows(root, "main")[1][0]
    reference = _read(root / "main" / row["file_name"])[0][:, 0]
    system = NoiseSystem(None)
    assert system.capabilities.accepts == ("caption",)
    request = _request(row)
    [noise] = system.synthesize([request])
    assert noise.dtype == np.float32 and noise.shape == reference.shape
    assert _flatness(noise) > 3 * _flatness(reference)
    assert _frame_rms_spread(noise) < 0.25 < _frame_rms_spread(reference)
    [same] = system.synthesize([request])
    [other] = system.synthesize([SynthesisRequest(key=row["key"], caption=row["caption"], duration=6.0, seed=1)])
    assert np.array_equal(noise, same) and not np.allclose(noise, other)


def test_voice_prompt_is_the_clip_voice_saying_other_words(built):
    root, _ = built
    for row in _rows(root, "voice_cloning")[1]:
        structured = json.loads(row["structured"])
        prompt = structured["voice_prompt"]
        assert prompt["voice"] == structured["script"]["speech"]["voice"]
        assert prompt["text"] != row["transcript"]
        buf = io.BytesIO()
        sf.write(buf, np.clip(scenes.voice_prompt(prompt["voice"], prompt["text"]), -1, 1), RATE, format="WAV", subtype="PCM_16")
        assert buf.getvalue() == (root / "voice_cloning" / row["voice_prompt"]).read_bytes()


@pytest.mark.parametrize("system", [OracleSystem, ResynthSystem])
def test_a_request_without_a_script_is_refused_by_key(system):
    with pytest.raises(ModelError, match="clip-without-script"):
        system(None).synthesize([SynthesisRequest(key="clip-without-script", caption="a dog barks", duration=6.0)])


def test_catalog_entries_load_the_systems():
    from maeb.encoders import load_encoder
    from maeb.spec.catalog import find_model

    for alias, cls in [("mmag-oracle", OracleSystem), ("mmag-resynth", ResynthSystem), ("mmag-noise", NoiseSystem)]:
        system = load_encoder(find_model(alias))
        assert isinstance(system, cls) and system.sample_rate == RATE
    assert load_encoder(find_model("mmag-resynth")).config() != load_encoder(find_model("mmag-oracle")).config()
