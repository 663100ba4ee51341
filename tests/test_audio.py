"""The audio pipeline: decoding, mono, resampling, length policy, batching, background decoding."""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf

from maeb.audio.pipeline import AudioRef, LengthPolicy, decode, decoded_batches, load, plan_batches, probe_frames
from maeb.core.errors import AudioError
from maeb.mock import tone


def encoded(samples: np.ndarray, rate: int, fmt: str, subtype: str | None = None) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


@pytest.mark.parametrize("fmt", ["WAV", "FLAC", "OGG", "MP3"])
def test_decodes_every_supported_format(fmt):
    clip = tone(440.0, 0.5, 16000, noise=0.0)
    samples, rate = decode(encoded(clip, 16000, fmt), f"x.{fmt.lower()}")
    assert rate == 16000 and samples.dtype == np.float32
    assert abs(len(samples) - len(clip)) < 2000  # lossy codecs add priming samples
    spectrum = np.abs(np.fft.rfft(samples))
    assert abs(np.argmax(spectrum) * rate / len(samples) - 440.0) < 10


def test_stereo_is_mixed_to_mono():
    left = np.ones(1000, dtype=np.float32) * 0.5
    stereo = np.stack([left, -left * 0.5], axis=1)
    samples, _ = decode(encoded(stereo, 8000, "WAV", "FLOAT"), "stereo.wav")
    assert samples.ndim == 1 and np.allclose(samples, 0.125, atol=1e-6)


def test_resampling_keeps_pitch_and_duration():
    ref = AudioRef("t.wav", data=encoded(tone(1000.0, 1.0, 8000, noise=0.0), 8000, "WAV"))
    out = load(ref, LengthPolicy(sample_rate=48000))
    assert len(out) == 48000
    assert abs(np.argmax(np.abs(np.fft.rfft(out))) * 48000 / len(out) - 1000.0) < 2


def test_length_policy_truncates_and_pads():
    long_ref = AudioRef("long.wav", data=encoded(tone(300.0, 3.0, 16000), 16000, "WAV"))
    assert len(load(long_ref, LengthPolicy(16000, max_seconds=1.25))) == 20000
    short_ref = AudioRef("short.wav", data=encoded(tone(300.0, 0.01, 16000), 16000, "WAV"))
    padded = load(short_ref, LengthPolicy(16000, max_seconds=None, min_samples=400))
    assert len(padded) == 400 and np.all(padded[160:] == 0)


def test_segments_are_cut_and_hashed_apart():
    data = encoded(tone(300.0, 2.0, 16000), 16000, "WAV")
    whole, part = AudioRef("a", data=data), AudioRef("a", data=data, start=0.5, end=1.0)
    assert len(load(part, LengthPolicy(16000))) == 8000
    assert whole.key != part.key
    assert probe_frames(part, 16000) == 8000


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "empty file"),
        (b"RIFF....not audio at all", "cannot decode"),
        (encoded(np.zeros(0, dtype=np.float32), 16000, "WAV"), "zero-length"),
        (encoded(np.full(100, np.nan, dtype=np.float32), 16000, "WAV", "FLOAT"), "all samples are NaN"),
        (encoded(np.r_[np.zeros(50), np.inf].astype(np.float32), 16000, "WAV", "FLOAT"), "1 samples are NaN or infinite"),
    ],
)
def test_bad_clips_raise_errors_naming_the_clip(data, reason):
    with pytest.raises(AudioError) as err:
        load(AudioRef("bad/clip_7.wav", data=data), LengthPolicy(16000))
    assert "bad/clip_7.wav" in str(err.value) and reason in str(err.value)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(AudioError, match="nowhere.wav.*cannot read"):
        AudioRef("nowhere.wav", path=str(tmp_path / "nowhere.wav")).read()


def test_content_key_depends_on_bytes_only(tmp_path):
    data = encoded(tone(500.0, 0.2, 16000), 16000, "WAV")
    (tmp_path / "a.wav").write_bytes(data)
    assert AudioRef("a", path=str(tmp_path / "a.wav")).key == AudioRef("other name", data=data).key
    assert AudioRef("b", data=encoded(tone(501.0, 0.2, 16000), 16000, "WAV")).key != AudioRef("a", data=data).key


def test_plan_batches_modes():
    lengths = [5, 9, 5, 7, 9, 9, 1]
    padded = plan_batches(lengths, 3, "padded")
    assert [lengths[i] for b in padded for i in b] == sorted(lengths, reverse=True)
    assert all(len(b) <= 3 for b in padded) and sorted(i for b in padded for i in b) == list(range(7))
    same = plan_batches(lengths, 2, "same_length")
    assert all(len({lengths[i] for i in b}) == 1 and len(b) <= 2 for b in same)
    assert sorted(i for b in same for i in b) == list(range(7))
    assert all(len(b) == 1 for b in plan_batches(lengths, 4, "single"))
    with pytest.raises(ValueError):
        plan_batches(lengths, 2, "sometimes")


def test_background_decoding_keeps_order_and_reports_errors():
    refs = [AudioRef(f"c{i}", data=encoded(tone(200.0 + i, 0.1 * (i + 1), 16000), 16000, "WAV")) for i in range(9)]
    refs[4] = AudioRef("broken", data=b"junk")
    batches = plan_batches([len(r.read()) for r in refs], 2)
    seen = []
    for batch, clips in decoded_batches(refs, batches, LengthPolicy(16000), workers=3, prefetch=2):
        for i, clip in zip(batch, clips):
            seen.append(i)
            if i == 4:
                assert isinstance(clip, AudioError) and clip.clip == "broken"
            else:
                assert len(clip) == int(0.1 * (i + 1) * 16000)
    assert seen == [i for b in batches for i in b]


def test_resampler_follows_the_policy_and_cut_keeps_the_whole_clips_samples():
    from maeb.audio.resample import resample

    clip = tone(700.0, 3.0, 44100, noise=0.05)
    ref = AudioRef("long.wav", data=encoded(clip, 44100, "WAV", "FLOAT"))
    sinc = load(ref, LengthPolicy(16000, max_seconds=1.0, resampler="torchaudio-sinc-hann"))
    # cutting before resampling keeps exactly the samples of resampling the whole clip
    assert np.array_equal(sinc, resample(clip, 44100, 16000)[:16000])
    soxr_out = load(ref, LengthPolicy(16000, max_seconds=1.0, resampler="soxr-hq"))
    assert soxr_out.shape == sinc.shape and not np.array_equal(soxr_out, sinc)
    with pytest.raises(ValueError, match="unknown resampler"):
        load(ref, LengthPolicy(16000, resampler="nearest"))


def test_declared_decode_rate_is_honoured_and_keys_the_clip():
    from maeb.audio.resample import resample

    clip = tone(500.0, 0.5, 44100, noise=0.0)
    data = encoded(clip, 44100, "WAV", "FLOAT")
    plain, declared = AudioRef("a", data=data), AudioRef("a", data=data, decode_rate=22050)
    policy = LengthPolicy(16000, resampler="torchaudio-sinc-hann")
    expected = resample(resample(clip, 44100, 22050), 22050, 16000)
    assert np.array_equal(load(declared, policy), expected)
    assert plain.key != declared.key


def test_truncated_wav_and_decoder_messages_are_reproducible():
    data = encoded(np.zeros(4000, dtype=np.float32), 16000, "WAV", "PCM_16")
    with pytest.raises(AudioError, match="truncated WAV: its header declares 8000 bytes"):
        decode(data[: len(data) // 2], "cut.wav")
    messages = set()
    for _ in range(2):
        with pytest.raises(AudioError) as info:
            decode(b"not audio" * 20, "junk.wav")
        messages.add(str(info.value))
    assert len(messages) == 1 and "0x" not in messages.pop()


def test_spec_decode_rate_reaches_every_clip_of_a_hub_split(tmp_path):
    """mteb casts some datasets' Audio to a rate (BirdSet: 32 kHz); a spec's data.decode_rate says so."""
    from maeb.mock import write_hub_repo
    from maeb.spec.loader import load_task
    from maeb.spec.taskspec import parse_spec

    clip = encoded(tone(300.0, 0.2, 16000), 16000, "WAV")
    repo = write_hub_repo(tmp_path / "repo", {"default": {"test": {"audio": [clip, clip], "label": [0, 1]}}})
    raw = {"name": "T", "type": "clustering", "data": {"source": "hub", "path": str(repo), "decode_rate": 32000}}
    table = load_task(parse_spec(raw, "spec", base=tmp_path))["default"]["test"]
    assert [ref.decode_rate for ref in table["audio"]] == [32000, 32000]


def test_float_wav_is_exact_and_carries_no_time():
    import soundfile as sf

    from maeb.audio.pipeline import decode, float_wav

    x = np.random.default_rng(0).standard_normal(1001).astype(np.float32)
    data = float_wav(x, 22050)
    assert b"PEAK" not in data and float_wav(x, 22050) == data  # nothing stamped: same bytes every time
    samples, rate = decode(data, "x")
    assert rate == 22050 and np.array_equal(samples, x)
    info = sf.info(io.BytesIO(data))
    assert (info.subtype, info.channels, info.frames) == ("FLOAT", 1, 1001)
