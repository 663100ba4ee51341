"""The GPU path, checked on CPU: batches by duration, the out-of-memory back-off, labelled
precisions, decoding overlapped with the forward, and the model loaded once per run.

Out of memory is simulated with torch.cuda.OutOfMemoryError itself (the class exists in CPU
builds), which is what maeb.core.device.is_out_of_memory looks for."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

import maeb.audio.pipeline
from maeb.audio.pipeline import AudioRef, chunks, plan_batches
from maeb.cli.commands import main
from maeb.core.device import is_out_of_memory
from maeb.core.errors import ModelError
from maeb.encoders import ModelMeta, precision_options
from maeb.mock import SpectralEncoder, tone

from .conftest import make_embedder
from .test_cli import run_args, write_task

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")

RATE = 16000


def wav_refs(seconds: list[float], seed: int = 0) -> list[AudioRef]:
    refs = []
    for i, s in enumerate(seconds):
        buf = io.BytesIO()
        sf.write(buf, tone(200.0 + 37 * i, s, RATE, seed=seed + i), RATE, format="WAV")
        refs.append(AudioRef(f"clip{i}.wav", data=buf.getvalue()))
    return refs


class Recording(SpectralEncoder):
    """Remembers every batch size it was called with; out of memory above `fits` clips (or
    `fits_samples` padded samples)."""

    def __init__(self, batching="same_length", fits=None, fits_samples=None, order="length"):
        super().__init__()
        self.batching, self.batch_order = batching, order
        self.fits, self.fits_samples = fits, fits_samples
        self.calls: list[int] = []

    def embed_audio(self, clips):
        self.calls.append(len(clips))
        too_many = self.fits is not None and len(clips) > self.fits
        too_long = self.fits_samples is not None and len(clips) * max(map(len, clips)) > self.fits_samples
        if too_many or too_long:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return super().embed_audio(clips)


# -- batches by duration ----------------------------------------------------------------------


def test_budget_batches_short_clips_wide_and_long_ones_narrow():
    lengths = [RATE] * 40 + [10 * RATE] * 6
    batches = plan_batches(lengths, 1024, "same_length", budget=20 * RATE)
    assert [len(b) for b in batches] == [2, 2, 2, 20, 20]
    # a fixed window (Whisper's 30 s): every clip costs the window, however short
    assert {len(b) for b in plan_batches(lengths, 1024, "padded", budget=60 * RATE, floor=30 * RATE)} == {2}
    # without a budget, the plan is the old one
    assert [len(b) for b in plan_batches(lengths, 16, "padded")] == [16, 16, 14]
    assert chunks([10 * RATE, RATE, RATE], 8, budget=11 * RATE) == [slice(0, 1), slice(1, 3)]


def test_duration_batching_gives_the_vectors_of_fixed_batching_for_a_same_length_family(tmp_path):
    """hf-ssl with a group-norm front end is batched by identical length; its vectors must not
    depend on how many such clips share a batch."""
    from maeb.encoders.hf import SelfSupervisedEncoder
    from maeb.encoders.protocols import get_protocol
    from maeb.encoders.tiny import ssl

    path = ssl(tmp_path / "w2v", "wav2vec2", "group")["path"]
    meta = ModelMeta(name="tiny/w2v", family="hf-ssl", revision="1")
    encoder = SelfSupervisedEncoder(meta, path=path, protocol=get_protocol("mteb-2.26"))
    assert encoder.batching == "same_length" and getattr(encoder, "batch_order", "length") == "length"
    sizes: list[int] = []
    forward = encoder.embed_audio
    encoder.embed_audio = lambda clips: (sizes.append(len(clips)), forward(clips))[1]
    refs = wav_refs([1.0] * 12 + [2.5] * 5 + [0.5] * 9)
    fixed, _ = make_embedder(tmp_path / "a", encoder, meta, batch_size=4).audio(refs)
    fixed_sizes, sizes[:] = list(sizes), []
    timed, _ = make_embedder(tmp_path / "b", encoder, meta, batch_seconds=5.0).audio(refs)
    assert fixed_sizes != sizes and max(sizes) == 9  # other batches: 0.5 s clips ten to a batch (capped at 9 here)
    np.testing.assert_allclose(timed, fixed, rtol=0, atol=1e-6)


def test_duration_batching_leaves_call_order_batches_alone(tmp_path):
    """A family whose vectors depend on their batch-mates keeps mteb's batches of 32, in call order."""
    encoder = Recording(batching="padded", order="call")
    emb = make_embedder(tmp_path, encoder, batch_seconds=0.5)
    emb.audio(wav_refs([1.0] * 40))
    assert encoder.calls == [32, 8]


# -- out-of-memory back-off ---------------------------------------------------------------------


def test_out_of_memory_is_recognised_and_other_errors_are_not():
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory"))
    assert is_out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"))
    try:
        try:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        except RuntimeError as inner:
            raise ValueError("wrapper failed") from inner
    except ValueError as outer:
        assert is_out_of_memory(outer)
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
    assert not is_out_of_memory(MemoryError())


def test_back_off_halves_retries_and_keeps_the_smaller_size(tmp_path, caplog):
    refs = wav_refs([1.0] * 20)
    reference, _ = make_embedder(tmp_path / "ref", Recording(), batch_size=16).audio(refs)
    encoder = Recording(fits=5)
    emb = make_embedder(tmp_path / "oom", encoder, batch_size=16)
    with caplog.at_level("INFO", logger="maeb"):
        vectors, ok = emb.audio(refs)
    assert ok.all()
    np.testing.assert_array_equal(vectors, reference)
    # 16 fails, 8 fails, then batches of 4; the second planned batch (4 clips) is not retried
    assert encoder.calls == [16, 8, 4, 4, 4, 4, 4]
    assert emb.max_clips == 4 and emb.stats.oom_backoffs == 2
    lines = [r.getMessage() for r in caplog.records if "out of memory" in r.getMessage()]
    assert len(lines) == 2 and "batches of at most 8 clips" in lines[0] and "rest of the run" in lines[0]
    # the next call plans with the smaller size at once
    encoder.calls.clear()
    emb.audio(wav_refs([1.0] * 9, seed=100))
    assert encoder.calls == [4, 4, 1]


def test_back_off_under_batch_seconds_halves_the_seconds(tmp_path):
    encoder = Recording(fits_samples=3 * RATE)
    emb = make_embedder(tmp_path, encoder, batch_seconds=8.0)
    vectors, ok = emb.audio(wav_refs([1.0] * 8))
    assert ok.all() and encoder.calls == [8, 4, 2, 2, 2, 2]
    assert emb.max_samples == 2 * RATE and emb.max_clips is None


def test_back_off_gives_up_at_batch_size_one_with_one_clear_error(tmp_path):
    emb = make_embedder(tmp_path, Recording(fits=0), batch_size=4)
    with pytest.raises(ModelError) as err:
        emb.audio(wav_refs([2.0] * 4))
    message = str(err.value)
    assert "\n" not in message and "clip0.wav alone" in message and "batch size 1 does not fit" in message


def test_call_order_family_is_not_split_on_out_of_memory(tmp_path):
    encoder = Recording(batching="padded", order="call", fits=10)
    with pytest.raises(ModelError, match="--call-batch-size 16") as err:
        make_embedder(tmp_path, encoder).audio(wav_refs([1.0] * 40))
    assert encoder.calls == [32] and "\n" not in str(err.value)
    # the labelled smaller size batches in call order, 8 at a time
    encoder = Recording(batching="padded", order="call", fits=10)
    make_embedder(tmp_path / "b", encoder, call_batch_size=8).audio(wav_refs([1.0] * 20))
    assert encoder.calls == [8, 8, 4]


# -- precision ------------------------------------------------------------------------------------

TYPED = """
import numpy as np
from maeb.mock import SpectralEncoder


class Typed(SpectralEncoder):
    loads = 0

    def __init__(self, meta=None, device="cpu", dtype="float32"):
        super().__init__(meta, device)
        Typed.loads += 1
        self.dtype = dtype

    def config(self):
        return {"bands": 16, "dtype": self.dtype}

    def embed_audio(self, clips):
        out = super().embed_audio(clips)
        return out.astype(np.float16).astype(np.float32) if self.dtype != "float32" else out
"""


@pytest.fixture
def typed(tmp_path, monkeypatch):
    (tmp_path / "typedfamily.py").write_text(TYPED)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("typedfamily", None)
    model = tmp_path / "typed.toml"
    model.write_text('[[model]]\nname = "test/typed"\nfamily = "typedfamily:Typed"\nrevision = "r1"\nmodalities = ["audio"]\n')
    return model


@pytest.mark.slow
def test_precision_keys_the_cache_and_lands_in_the_experiments_folder(tmp_path, tone_folder, typed, capsys):
    task = write_task(tmp_path, tone_folder, "Tones")
    base = run_args(tmp_path, typed, task)
    assert main(base) == 0
    assert main(base + ["--precision", "bf16"]) == 0
    err = capsys.readouterr().err
    assert err.count("9 clips embedded, 0 from cache") == 2  # no vector of the default run is reused
    files = {str(p.relative_to(tmp_path / "res")): json.loads(p.read_text()) for p in (tmp_path / "res").rglob("Tones.json")}
    default = next(v["maeb"] for k, v in files.items() if "experiments" not in k)
    labelled = next(v["maeb"] for k, v in files.items() if "/experiments/dtype_bfloat16/" in k)
    assert labelled["precision"] == "bf16" and "precision" not in default
    assert labelled["encoder"]["config"]["dtype"] == "bfloat16" and default["encoder"]["config"]["dtype"] == "float32"
    assert labelled["encoder"]["cache"] != default["encoder"]["cache"]
    assert labelled["identity"]["hash"] != default["identity"]["hash"]
    assert labelled["fingerprints"]["vectors"] != default["fingerprints"]["vectors"]
    # --option dtype=bfloat16 is the same setting: the same identity, so the result is found
    assert main(base + ["--option", "dtype=bfloat16"]) == 0
    assert "Tones: already done" in capsys.readouterr().err


def test_a_precision_that_cannot_apply_is_one_clear_error(tmp_path, tone_folder, capsys):
    task = write_task(tmp_path, tone_folder, "Tones")
    model = tmp_path / "mfcc.toml"
    model.write_text('[[model]]\nname = "test/spectral"\nfamily = "mock-spectral"\nrevision = "1"\nmodalities = ["audio"]\n')
    assert main(run_args(tmp_path, model, task) + ["--precision", "fp16"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--precision fp16 does not apply to family 'mock-spectral'" in err[0]
    assert not (tmp_path / "res").exists()


def test_precision_is_refused_where_the_device_cannot_compute_in_it(monkeypatch, typed):
    from maeb.encoders import precision

    meta = ModelMeta(name="test/typed", family="typedfamily:Typed", revision="r1")
    assert precision_options(meta, "fp16", "cpu", {}) == {"dtype": "float16"}  # torch 2.x CPU has half kernels
    assert precision_options(meta, None, "cpu", {}) == {}
    with pytest.raises(ModelError, match="contradicts dtype='float32'"):
        precision_options(meta, "bf16", "cpu", {"dtype": "float32"})

    def no_half(*args, **kwargs):
        raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Half'")

    monkeypatch.setattr(torch.nn.functional, "conv1d", no_half)
    with pytest.raises(ModelError, match="cannot run on cpu: torch .* has no float16 CPU kernels") as err:
        precision_options(meta, "fp16", "cpu", {})
    assert "\n" not in str(err.value)
    monkeypatch.setattr(precision, "_cpu_half_problem", lambda dtype: None)
    if not torch.cuda.is_available():
        with pytest.raises(ModelError, match="no CUDA device is available"):
            precision_options(meta, "bf16", "cuda", {})


def test_bf16_runs_a_transformers_family_close_to_fp32(tmp_path):
    from maeb.encoders.hf import WhisperEncoder
    from maeb.encoders.protocols import get_protocol
    from maeb.encoders.tiny import whisper

    path = whisper(tmp_path / "whisper")["path"]
    meta = ModelMeta(name="tiny/whisper", family="hf-whisper", revision="1")
    clips = [tone(440.0, 1.0), tone(880.0, 2.0)]
    full = WhisperEncoder(meta, path=path, protocol=get_protocol("mteb-2.26"))
    half = WhisperEncoder(meta, path=path, dtype="bfloat16", protocol=get_protocol("mteb-2.26"))
    assert half.config()["dtype"] == "bfloat16" and full.config()["dtype"] == "float32"
    a, b = full.embed_audio(clips), half.embed_audio(clips)
    assert b.dtype == np.float32 and not np.array_equal(a, b)
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cosine.min() > 0.99


# -- overlap and residency ------------------------------------------------------------------------


def test_decoding_overlaps_the_forward(tmp_path, monkeypatch):
    """A background thread decodes the next batches while the encoder works: with 40 ms of
    decoding per batch (one thread) and 40 ms of forward per batch, the wall time is near the
    larger, not the sum."""
    load = maeb.audio.pipeline.load

    def slow_load(ref, policy, *rest):
        time.sleep(0.01)
        return load(ref, policy, *rest)

    class Slow(SpectralEncoder):
        batching = "padded"

        def embed_audio(self, clips):
            time.sleep(0.04)  # a device forward: the thread waits with the GIL released
            return super().embed_audio(clips)

    monkeypatch.setattr(maeb.audio.pipeline, "load", slow_load)
    emb = make_embedder(tmp_path, Slow(), batch_size=4, workers=1)
    refs = wav_refs([0.2] * 48)
    started = time.perf_counter()
    emb.audio(refs)
    wall = time.perf_counter() - started
    serial = 12 * 0.04 + 48 * 0.01  # forward plus decoding, one after the other
    assert wall < 0.8 * serial, (wall, serial)
    assert emb.stats.forward_seconds / emb.stats.embed_wall_seconds > 0.6


@pytest.mark.slow
def test_the_model_is_loaded_once_per_run(tmp_path, tone_folder, typed):
    tasks = [write_task(tmp_path, tone_folder, "Tones"), write_task(tmp_path, tone_folder, "TonesCls", "classification")]
    assert main(run_args(tmp_path, typed, *tasks)) == 0
    assert sys.modules["typedfamily"].Typed.loads == 1
    assert len(list((tmp_path / "res").rglob("Tones*.json"))) == 2


def test_call_batch_size_is_labelled_and_refused_where_it_does_not_apply(tmp_path, tone_folder, typed, capsys):
    task = write_task(tmp_path, tone_folder, "Tones")
    assert main(run_args(tmp_path, typed, task) + ["--call-batch-size", "8"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--call-batch-size applies only to families batched as mteb batches" in err[0]
    from maeb.core.identity import declared_identity, experiment_settings

    meta = ModelMeta(name="x/y", family="hf-ssl", revision="1")
    assert experiment_settings(meta, {}, "mteb-2.26", "mteb-2.26", None, 8) == {"call_batch_size": 8}
    assert declared_identity(meta, {}, "mteb-2.26", None, 8)["call_batch_size"] == 8
    assert "call_batch_size" not in declared_identity(meta, {}, "mteb-2.26")


def test_batch_seconds_flag_reaches_the_embedder_and_the_result(tmp_path, tone_folder, typed):
    task = write_task(tmp_path, tone_folder, "Tones")
    assert main(run_args(tmp_path, typed, task) + ["--batch-seconds", "3"]) == 0
    result = json.loads(next((tmp_path / "res").rglob("Tones.json")).read_text())
    assert result["maeb"]["batching"] == {"order": "length", "batch_size": 16, "batch_seconds": 3.0}
    assert "experiments" not in str(next((tmp_path / "res").rglob("Tones.json")))  # free: same identity
    with pytest.raises(SystemExit):  # argparse: a usage error
        main(run_args(tmp_path, typed, task) + ["--batch-seconds", "0"])


def test_bench_gpu_runs_on_cpu(tmp_path):
    """scripts/bench_gpu.py, the device check, kept runnable here (tiny configs, a few clips)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_gpu", Path(__file__).resolve().parents[1] / "scripts" / "bench_gpu.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "bench.json"
    args = ["--device", "cpu", "--small", "--clips", "6", "--models", "wav2vec2", "--w2v-norm", "group", "--out", str(out)]
    assert bench.main(args) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["precision"], r["batching"]) for r in rows] == [(p, b) for p in ("fp32", "bf16") for b in bench.SMALL_BATCHINGS]
    assert all(r["clips"] == 6 and r["clips_per_s"] > 0 and 0 <= r["outside_forward_share"] <= 1 for r in rows)
    assert rows[0]["cosine_min_vs_first_precision"] == 1.0 and rows[2]["cosine_min_vs_first_precision"] > 0.9
