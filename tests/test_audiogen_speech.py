"""WER with MMAG's caption-leak diagnostics, speaker similarity and their model loading."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
import soundfile

from maeb.audiogen import speech
from maeb.audiogen.metric import GeneratedItem, Metric, MetricUnavailable
from maeb.audiogen.request import SynthesisRequest
from maeb.audiogen.speech import SpeakerSimilarity, WERScore, leaks, sample_wer, wer_summary

FOX = "the quick brown fox jumps over the lazy dog"


def synth(tmp_path, text: str, tool: str = "espeak-ng", voice: str = "en-us+m3") -> tuple[np.ndarray, int]:
    if not shutil.which(tool):
        pytest.skip(f"{tool} is not installed")
    path = tmp_path / f"{tool}-{abs(hash((text, voice)))}.wav"
    if tool == "espeak-ng":
        subprocess.run([tool, "-v", voice, "-w", str(path), text], check=True, capture_output=True)
    else:
        subprocess.run([tool, "-voice", voice, "-t", text, "-o", str(path)], check=True, capture_output=True)
    audio, rate = soundfile.read(path, dtype="float32")
    return audio, rate


def test_normalisation_makes_spelling_variants_equal():
    assert sample_wer("Mr. Smith went home.", "mister smith went home") == 0.0
    assert sample_wer("Mr. Smith", "Mister Smith!") == 0.0
    assert sample_wer("Hello, World.", "hello world") == 0.0
    assert sample_wer("hello world", "hello there world") == 0.5  # one insertion over two words


def test_long_wrong_hypothesis_is_capped_and_empty_reference_skipped():
    long_wrong = " ".join(["banana"] * 40)
    assert sample_wer("one two three", long_wrong) == 1.0
    assert sample_wer("one two three", long_wrong, cap=2.0) > 1.0  # the cap, not jiwer, bounds it
    assert sample_wer("one two three", "") == 1.0
    assert sample_wer("(laughs) uh um", "anything") is None  # fillers and asides normalise away


def test_leak_needs_a_caption_run_that_is_not_transcript():
    caption = 'A man with a deep voice says "open the door" while rain falls on a tin roof.'
    transcript = "open the door"
    assert not leaks("open the door", [caption], transcript)
    # "rain falls on" is a 3-word run of the caption and not of the transcript
    assert leaks("open the door rain falls on a tin roof", [caption], transcript)
    # two caption words in a row are not enough at n = 3, but are at n = 2
    assert not leaks("open the door tin roof", [caption], transcript)
    assert leaks("open the door tin roof", [caption], transcript, n=2)
    # the words are caption words, but the run is also a transcript run: not a leak
    assert not leaks("the door", [caption, None], transcript, n=2)
    # timestamped captions count as caption text; the bracketed spans are normalised away
    assert leaks("a dog barks loudly", ['Someone says "hi" (0.1-0.5s), a dog barks loudly (1-2s).'], "hi")


def test_leak_diagnostics_by_hand():
    # WERs 0.2, 0.6 (leak), 0.0, 1.0 (leak): mean 0.45, hit 2/4, wer_caps 0.8, proportion 1.6/1.8
    summary = wer_summary([(0.2, False), (0.6, True), (0.0, False), (1.0, True)])
    assert summary["wer"] == pytest.approx(0.45)
    assert summary["hit_rate"] == pytest.approx(0.5)
    assert summary["wer_caps"] == pytest.approx(0.8)
    assert summary["proportion"] == pytest.approx(1.6 / 1.8)
    none = wer_summary([(0.3, False), (0.1, False)])
    assert none["hit_rate"] == none["wer_caps"] == none["proportion"] == 0.0
    assert none["wer"] == pytest.approx(0.2)
    assert wer_summary([(0.0, True)])["proportion"] == 0.0  # no error at all to account for


class _FakeASR:
    """Transcripts chosen by the test, so the metric's bookkeeping is checked without a model."""

    model, revision, package = "fake", "1", "jiwer"

    def __init__(self, texts):
        self.texts = texts

    def transcribe(self, clips):
        return [self.texts.pop(0) for _ in clips]


def _item(key, transcript, caption="A scene.", audio=None, rate=16000):
    req = SynthesisRequest(key=key, caption=caption, duration=1.0, transcript=transcript)
    return GeneratedItem(req, np.zeros(1600, np.float32) if audio is None else audio, rate)


def test_wer_metric_means_over_clips_and_counts_skips(monkeypatch):
    monkeypatch.setitem(speech.ASR, "fake", lambda options, device: _FakeASR(["hello world", "a b c d rain on roof"]))
    metric = WERScore(keys=("wer", "hit_rate", "wer_caps", "proportion"), options={"asr": "fake"})
    assert isinstance(metric, Metric)
    metric.update([_item("k1", "hello world"), _item("k2", None), _item("k3", "--")])
    metric.update([_item("k4", "a b c d", caption="Rain on roof, a man says a b c d.")])
    result = metric.result()
    # k1 exact (0), k4: 3 insertions over 4 words (0.75) and a leak
    assert result["wer"] == pytest.approx(0.375)
    assert result["hit_rate"] == pytest.approx(0.5)
    assert result["wer_caps"] == pytest.approx(0.75)
    assert result["proportion"] == pytest.approx(1.0)
    assert metric.per_clip["k4"] == {"wer": 0.75, "hypothesis": "a b c d rain on roof", "leak": True}
    prov = metric.provenance()
    assert (prov["skipped_no_transcript"], prov["skipped_empty_reference"], prov["scored"]) == (1, 1, 2)


def test_no_transcript_at_all_is_unavailable_not_zero(monkeypatch):
    monkeypatch.setitem(speech.ASR, "fake", lambda options, device: _FakeASR([]))
    metric = WERScore(keys=("wer",), options={"asr": "fake"})
    metric.update([_item("k1", None)])
    with pytest.raises(MetricUnavailable, match="no generated clip had a transcript"):
        metric.result()


def test_bad_options_and_unloadable_models_say_so(tmp_path):
    with pytest.raises(Exception, match="unknown field 'leak_gram'"):
        WERScore(keys=("wer",), options={"asr": "whisper-tiny.en", "leak_gram": 3})
    with pytest.raises(MetricUnavailable, match="cannot be loaded"):
        WERScore(keys=("wer",), options={"asr": "whisper-large-v3", "path": str(tmp_path / "missing")})
    try:
        import wespeakerruntime  # noqa: F401
    except ImportError:
        with pytest.raises(MetricUnavailable, match="pip install wespeakerruntime"):
            SpeakerSimilarity(keys=("spk_sim",), options={"model": "wespeaker-resnet34"})
    try:
        import utmosv2  # noqa: F401
    except ImportError:
        with pytest.raises(MetricUnavailable, match="utmosv2"):
            speech.UTMOSScore(keys=("utmos",), options={})


def test_window_split_joins_long_clips():
    x = np.zeros(speech.WINDOW * 2 + 100, np.float32)
    assert [len(w) for w in speech._windows(x)] == [speech.WINDOW, speech.WINDOW, 100]
    assert speech._joined(["a", " ", "b"], [0, 0, 1], 2) == ["a", "b"]


def test_whisper_tiny_scores_real_speech(tmp_path):
    audio, rate = synth(tmp_path, FOX)
    metric = WERScore(keys=("wer",), options={"asr": "whisper-tiny.en"})
    unrelated = "seventeen purple elephants borrowed my umbrella yesterday evening"
    metric.update([_item("right", FOX, audio=audio, rate=rate), _item("wrong", unrelated, audio=audio, rate=rate)])
    assert metric.per_clip["right"]["wer"] < 0.5, metric.per_clip["right"]
    assert metric.per_clip["wrong"]["wer"] > 0.8, metric.per_clip["wrong"]
    assert metric.provenance()["stand_in"] is True


def test_resemblyzer_same_voice_beats_other_voice(tmp_path):
    prompt, prompt_rate = synth(tmp_path, "this is the voice that should be cloned today", voice="en-us+m3")
    same, same_rate = synth(tmp_path, FOX, voice="en-us+m3")
    other, other_rate = synth(tmp_path, FOX, tool="flite", voice="slt")
    metric = SpeakerSimilarity(keys=("spk_sim",), options={"model": "resemblyzer"})

    def item(key, audio, rate, with_prompt=True):
        req = SynthesisRequest(
            key=key,
            caption="speech",
            duration=3.0,
            voice_prompt=prompt if with_prompt else None,
            voice_prompt_rate=prompt_rate if with_prompt else None,
        )
        return GeneratedItem(req, audio, rate)

    metric.update([item("same", same, same_rate), item("other", other, other_rate), item("none", same, same_rate, False)])
    assert metric.per_clip["same"]["spk_sim"] > metric.per_clip["other"]["spk_sim"] + 0.05, metric.per_clip
    assert metric.provenance()["skipped_no_voice_prompt"] == 1
    assert metric.result()["spk_sim"] == pytest.approx(np.mean([v["spk_sim"] for v in metric.per_clip.values()]))
