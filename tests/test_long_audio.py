"""Long audio (maeb.audio.windows, maeb.audio.stream): streamed clips equal whole-clip decoding, windows tile
the clip as documented, pooled vectors are the mean / maximum of the window vectors computed
independently, and a task whose label is only audible after the encoder's cut is unsolvable with
the head cut and solved by windows."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import soundfile as sf

from maeb.audio.pipeline import AudioRef, LengthPolicy, load
from maeb.audio.stream import clip_stream, windows
from maeb.audio.windows import WindowedRef, WindowPolicy, parse
from maeb.core.errors import AudioError, MaebError, SpecError
from maeb.mock import SpectralEncoder, tone
from maeb.run.options import RunOptions
from maeb.run.runner import run
from maeb.spec.taskspec import parse_spec

from .conftest import make_embedder, mock_meta

RATE = 16000


def _wav(samples: np.ndarray, rate: int, channels: int = 1, subtype: str = "FLOAT") -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, np.stack([samples] * channels, 1) if channels > 1 else samples, rate, format="WAV", subtype=subtype)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "rate, method",
    [
        (44100, "torchaudio-sinc-hann"),
        (8000, "torchaudio-sinc-hann"),
        (24414, "torchaudio-sinc-hann"),
        (22050, "soxr-hq"),
        (16000, "soxr-hq"),
    ],
)
def test_streamed_clip_equals_the_whole_clip_decoded(tmp_path, rate, method):
    rng = np.random.default_rng(rate)
    x = (0.1 * rng.standard_normal(int(rate * 41.7))).astype(np.float32)
    path = tmp_path / "long.wav"
    path.write_bytes(_wav(x, rate, channels=2))
    policy = LengthPolicy(RATE, max_seconds=None, resampler=method)
    for ref in (AudioRef("file", path=str(path)), AudioRef("segment", data=path.read_bytes(), start=3.0, end=33.5)):
        whole = load(ref, policy)
        streamed = np.concatenate(list(clip_stream(ref, policy, block_seconds=6.1)))
        assert streamed.shape == whole.shape, ref.name
        # the same samples, up to float32 rounding where a block's resampling sums in another order
        np.testing.assert_allclose(streamed, whole, rtol=0, atol=2e-7)


def test_windows_tile_the_clip_and_end_at_its_end():
    stream = iter([np.arange(n, dtype=np.float32) + off for n, off in [(7, 0), (3, 7), (11, 10)]])  # 0..20
    got = [(start, w.tolist()) for start, w in windows(stream, 5, 3)]
    assert [s for s, _ in got] == [0, 3, 6, 9, 12, 15, 16]  # 16: the last window ends at sample 21
    assert all(w == list(range(s, s + 5)) for s, w in got)
    assert [s for s, _ in windows(iter([np.zeros(10, np.float32)]), 5, 5)] == [0, 5]  # exact tiling: no extra
    short = list(windows(iter([np.ones(4, np.float32)]), 5, 5))
    assert len(short) == 1 and short[0][1].size == 4  # a clip shorter than a window is its only window


def test_policy_grammar_and_resolution():
    assert parse(None) == WindowPolicy() and not parse("head").windowed
    policy = parse("max:window=10,hop=2.5")
    assert (policy.pooling, policy.seconds, policy.hop) == ("max", 10.0, 2.5)
    assert parse("mean").canonical() == "mean:window=native,hop=window"
    assert parse("mean").resolved(30.0).canonical() == "mean:window=30,hop=30"
    assert parse("mean").resolved(None).seconds == 30.0  # an encoder without a cap: the paper's 30 s
    for bad, words in [("avg", "pooling must be one of"), ("mean:window=0", "positive"), ("mean:size=3", "expected POOLING")]:
        with pytest.raises(SpecError, match=words):
            parse(bad)
    with pytest.raises(SpecError, match="longer than .* length cap of 30 s"):
        parse("mean:window=40").resolved(30.0, "m")
    assert parse("mean").resolved(30.0).samples(16000) == (480000, 480000)
    with pytest.raises(ValueError, match="not resolved: call resolved"):  # not a TypeError from None * rate
        parse("mean").samples(16000)


def _vector(encoder, samples):
    return encoder.embed_audio([samples])[0].astype(np.float64)


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_pooled_vector_is_the_pool_of_the_window_vectors(tmp_path, pooling):
    encoder = SpectralEncoder()
    x = np.concatenate([tone(300, 25.0, seed=1), tone(2000, 50.0, seed=2)])  # 75 s
    # bytes written once: libsndfile stamps the time into a float WAV's PEAK chunk
    clip, short = AudioRef("long", data=_wav(x, RATE)), _wav(x[: 10 * RATE], RATE)
    emb = make_embedder(tmp_path, window=parse(f"{pooling}:window=30,hop=20"), batch_size=2)
    got, ok = emb.audio([clip, AudioRef("short", data=short)])
    assert ok.all() and emb.stats.clips_embedded == 2
    starts = [0, 20, 40, 45]  # every 20 s while 30 s fit, then the window ending at 75 s
    vectors = np.stack([_vector(encoder, x[s * RATE : (s + 30) * RATE]) for s in starts])
    expected = vectors.mean(axis=0) if pooling == "mean" else vectors.max(axis=0)
    np.testing.assert_allclose(got[0], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], _vector(encoder, x[: 10 * RATE]), rtol=1e-6)  # short: the clip itself

    emb.cache.close()
    head = make_embedder(tmp_path)  # the same cache: the short clip's vector is shared, the long one is not
    vectors_head, _ = head.audio([clip, AudioRef("short", data=short)])
    assert head.stats.clips_cached == 1 and head.stats.clips_embedded == 1
    np.testing.assert_allclose(vectors_head[0], _vector(encoder, x[: 30 * RATE]), rtol=1e-6)
    head.cache.close()
    other = make_embedder(tmp_path, window=parse(f"{'max' if pooling == 'mean' else 'mean'}:window=30,hop=20"))
    other.audio([clip])
    assert other.stats.clips_embedded == 0 and other.stats.clips_cached == 1  # one pass stored both poolings


def test_a_broken_long_clip_is_one_line_naming_it(tmp_path):
    data = _wav(tone(440, 40.0), RATE, subtype="PCM_16")
    truncated = AudioRef("cut.wav", data=data[: len(data) // 2])
    emb = make_embedder(tmp_path, window=parse("mean"))
    assert isinstance(WindowedRef(AudioRef("x", data=data), emb.window), AudioRef)
    with pytest.raises(AudioError, match="cut.wav.*truncated WAV"):
        emb.audio([AudioRef("ok", data=data), truncated])
    skipping = make_embedder(tmp_path / "skip", window=parse("mean"), on_bad_audio="skip")
    nan = np.full(RATE * 40, np.nan, np.float32)
    _, ok = skipping.audio([AudioRef("ok", data=data), AudioRef("nan.wav", data=_wav(nan, RATE))])
    assert ok.tolist() == [True, False] and "NaN" in skipping.stats.skipped["nan.wav"]


def _late_label_folder(folder, per_label=6):
    """Clips of 60 s: the same 500 Hz tone for the first 33 s (past the spectral encoder's 30 s
    cut), then the label's tone: only an encoder that hears past 30 s can tell the labels apart."""
    (folder / "audio").mkdir(parents=True)
    rows = []
    for label, freq in {"low": 150.0, "high": 3000.0}.items():
        for i in range(per_label):
            seed = 100 * int(freq) + i
            x = np.concatenate([tone(500, 33.0, seed=seed), tone(freq, 27.0, seed=seed + 1)])
            sf.write(folder / f"audio/{label}{i}.flac", x, RATE)
            rows.append({"file_name": f"audio/{label}{i}.flac", "label": label})
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["file_name", "label"])
        writer.writeheader()
        writer.writerows(rows)
    return folder


def test_late_label_needs_windows_and_results_are_labelled(tmp_path):
    folder = _late_label_folder(tmp_path / "late")
    spec = parse_spec(
        {
            "name": "LateLabel",
            "type": "clustering",
            "data": {"source": "audiofolder", "path": str(folder), "label_column": "label", "eval_splits": ["all"]},
            "protocol": {"n_bootstrap": 3},
        },
        "test spec",
    )
    meta = mock_meta()

    def go(long_audio=None):
        cfg = RunOptions(
            output_dir=tmp_path / "results", cache_dir=tmp_path / "cache", show_progress=False, long_audio=long_audio
        )
        return run(meta, [spec], cfg, log=lambda m: None).results[0]

    head, mean, peak = go(), go("mean"), go("max:window=30,hop=15")
    assert head.main_score < 0.5, head.main_score  # the labels are past the cut: chance clusters
    assert mean.main_score == 1.0 and peak.main_score == 1.0
    assert head.info["window"] == {"pooling": "head", "seconds": 30.0, "hop": None}
    assert mean.info["window"]["pooling"] == "mean" and mean.info["window"]["seconds"] == 30.0
    assert mean.info["identity"]["window"] == "mean:window=native,hop=window" and "window" not in head.info["identity"]
    assert "experiments" in mean.path.parts and "experiments" not in head.path.parts and mean.path != peak.path
    meta_file = json.loads((mean.path.parent / "model_meta.json").read_text())
    assert "mean:window=native" in json.dumps(meta_file)


def test_long_audio_refuses_what_it_cannot_do_in_one_line(tmp_path):
    from maeb.audio.windows import check_combination

    with pytest.raises(MaebError, match="--long-audio and --perturb do not combine"):
        check_combination(parse("mean"), ("noise:snr=5",))
    with pytest.raises(MaebError, match="does not run on Ray"):
        check_combination(parse("max"), (), ray=True)
    check_combination(parse("head"), ("noise:snr=5",), ray=True)


# -- score by clip duration (maeb.analysis.durations) -----------------------------------------------------
def _restricted(folder, out, keep):
    """A copy of a tone folder's metadata whose test split holds only the clips `keep` accepts."""
    import shutil

    shutil.copytree(folder, out)
    with open(folder / "metadata.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if row["split"] == "test" and not keep(sf.info(folder / row["file_name"]).duration):
            row["split"] = "unused"
    with open(out / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out


def test_duration_buckets_equal_the_task_scored_on_those_clips_alone(tone_folder, tmp_path):
    from maeb.analysis.durations import collect, parse_edges, to_text

    def spec(folder, name="Tones"):
        data = {"source": "audiofolder", "path": str(folder), "label_column": "label", "eval_splits": ["test"]}
        data["split_by"] = {"column": "split"}
        return parse_spec({"name": name, "type": "classification", "data": data, "protocol": {"samples_per_label": 3}}, "t")

    def go(specs, buckets=None):
        cfg = RunOptions(output_dir=tmp_path / "res", cache_dir=tmp_path / "cache", show_progress=False, duration_buckets=buckets)
        return run(mock_meta(), specs, cfg, log=lambda m: None).results

    edge = 0.9
    full = go([spec(tone_folder)], parse_edges(f"{edge}"))[0]
    rows = full.info["evaluation"]["test"]["default"]["duration_buckets"]["rows"]
    assert [r["bucket"] for r in rows] == [f"<{edge:g} s", f">={edge:g} s"]
    assert sum(r["items"] for r in rows) == 9  # the test split's clips
    short = go([spec(_restricted(tone_folder, tmp_path / "short", lambda s: s < edge), "Short")])[0]
    long = go([spec(_restricted(tone_folder, tmp_path / "long", lambda s: s >= edge), "Long")])[0]
    assert rows[0]["score"] == pytest.approx(short.main_score, abs=1e-9) and rows[0]["items"] == 9 - rows[1]["items"]
    assert rows[1]["score"] == pytest.approx(long.main_score, abs=1e-9)
    weighted = sum(r["score"] * r["items"] for r in rows) / 9
    assert weighted == pytest.approx(full.main_score, abs=1e-9)
    table = to_text(collect(tmp_path / "res"))
    assert "## Tones" in table and "(n=" in table and "## Short" not in table


def test_retrieval_buckets_are_per_query_means(tone_folder, tmp_path):
    from maeb.analysis.durations import parse_edges

    data = {"source": "audiofolder", "path": str(tone_folder), "eval_splits": ["test"], "split_by": {"column": "split"}}
    derive = {"kind": "text_to_audio", "label_column": "freq", "relevance": "self"}
    spec = parse_spec({"name": "ToneT2A", "type": "retrieval", "category": "t2a", "data": data, "derive": derive}, "t")
    cfg = RunOptions(output_dir=None, cache_dir=tmp_path / "cache", show_progress=False, duration_buckets=parse_edges("0.9"))
    result = run(mock_meta(), [spec], cfg, log=lambda m: None).results[0]
    table = result.info["evaluation"]["test"]["default"]["duration_buckets"]
    assert table["metric"] == "hit_rate_at_5"
    n = sum(r["items"] for r in table["rows"])
    assert n == 9 and sum(r["score"] * r["items"] for r in table["rows"]) / n == pytest.approx(result.main_score, abs=1e-5)


def test_duration_edges_grammar():
    from maeb.analysis.durations import DEFAULT_EDGES, buckets, parse_edges

    assert parse_edges(None) == DEFAULT_EDGES and parse_edges("5,20") == (5.0, 20.0)
    for bad in ("20,5", "x", "0,3"):
        with pytest.raises(SpecError):
            parse_edges(bad)
    rows = buckets([1, 5, 6, 100], [1, 0, 1, 1], (5.0, 30.0))
    assert [(r["bucket"], r["items"], r["score"]) for r in rows] == [("<5 s", 1, 1.0), ("5-30 s", 2, 0.5), (">=30 s", 1, 1.0)]


def test_streaming_a_ten_minute_clip_holds_a_few_windows_not_the_clip(tmp_path):
    import tracemalloc

    path = tmp_path / "ten_minutes.wav"
    with sf.SoundFile(path, "w", samplerate=44100, channels=1, subtype="PCM_16") as out:
        for minute in range(10):
            out.write(tone(200.0 + 50 * minute, 60.0, rate=44100, seed=minute))
    whole_bytes = 600 * RATE * 4  # the clip at 16 kHz as float32: 38 MB
    policy = LengthPolicy(RATE, max_seconds=None, resampler="torchaudio-sinc-hann")
    ref = AudioRef("ten", path=str(path))
    load(AudioRef("warm", data=_wav(tone(440, 1.0, rate=44100), 44100)), policy)  # imports and the kernel, once

    def peak_of(work) -> int:
        tracemalloc.start()
        try:
            work()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    count = []
    streamed = peak_of(lambda: count.extend(w.size for _, w in windows(clip_stream(ref, policy), 30 * RATE, 30 * RATE)))
    whole = peak_of(lambda: load(ref, policy))
    assert count == [30 * RATE] * 20
    assert streamed < whole_bytes, f"peak {streamed / 2**20:.1f} MB while streaming"
    assert streamed * 4 < whole, (streamed, whole)  # the whole-clip path holds bytes, samples and the resampled copy


@pytest.mark.parametrize("fmt, subtype", [("WAV", "PCM_16"), ("FLAC", "PCM_16"), ("OGG", "VORBIS"), ("MP3", "MPEG_LAYER_III")])
def test_head_cut_decodes_only_the_head_and_keeps_the_same_samples(fmt, subtype):
    from maeb.audio.pipeline import decode, resample

    rate = 44100
    x = np.concatenate([tone(300, 8.0, rate=rate, seed=3), tone(1200, 4.0, rate=rate, seed=4)])
    buffer = io.BytesIO()
    sf.write(buffer, x, rate, format=fmt, subtype=subtype)
    data = buffer.getvalue()
    for ref in (
        AudioRef("plain", data=data),
        AudioRef("segment", data=data, start=1.5),
        AudioRef("hub", data=data, decode_rate=22050),
    ):
        policy = LengthPolicy(RATE, max_seconds=5.0, resampler="torchaudio-sinc-hann")
        samples, native = decode(data, "whole")  # the whole clip, then the documented steps
        if ref.decode_rate:
            samples, native = resample(samples, native, ref.decode_rate, policy.resampler), ref.decode_rate
        samples = samples[int((ref.start or 0.0) * native) :]
        expected = resample(samples, native, RATE, policy.resampler)[: policy.max_samples]
        np.testing.assert_array_equal(load(ref, policy), expected, err_msg=f"{fmt} {ref.name}")


def test_long_clip_frames_come_from_its_windows_on_the_clip_time_axis(tmp_path):
    from maeb.engine.frames import frame_embeddings

    encoder = SpectralEncoder()
    x = np.concatenate([tone(300, 40.0, seed=5), tone(2500, 35.0, seed=6)])  # 75 s
    ref = AudioRef("long", data=_wav(x, RATE))
    head = frame_embeddings(make_embedder(tmp_path / "head"), [ref])[0]
    assert head[1][-1] == pytest.approx(30.0)  # the head cut: frames of the first 30 s only
    frames, times = frame_embeddings(make_embedder(tmp_path / "win", window=parse("mean")), [ref])[0]
    whole_frames, whole_times = encoder.embed_frames([x])[0]  # the mock has no cap of its own
    # windows at 0, 30 and 45 s (the last ends at 75 s); between the last two the boundary is the
    # middle of their overlap, 52.5 s: every frame time of the whole clip appears once, in order
    np.testing.assert_allclose(times, whole_times, atol=1e-9)
    edges = np.array([0.0, 30.0, 45.0, 60.0, 75.0])
    interior = np.abs(whole_times[:, None] - edges[None, :]).min(axis=1) > 0.0125  # away from a window's padding
    np.testing.assert_allclose(frames[interior], whole_frames[interior], rtol=1e-5, atol=1e-5)
    assert interior.mean() > 0.99
    peak = make_embedder(tmp_path / "win", window=parse("max"))  # the pooling does not change frames
    again = frame_embeddings(peak, [ref])[0]
    assert peak.stats.clips_embedded == 0 and np.array_equal(again[0], frames)
