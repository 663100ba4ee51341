"""The same vectors in every execution mode (issue 31 item 5): a `--ray` run of local tasks on
compressed audio (MP3 at 44.1 and 48 kHz, resampled to the model's rate) gives the plain run's
`fingerprints.vectors` and scores bit for bit, for the MFCC baseline (whose last bits move with the
BLAS/torch thread count, and Ray starts its workers with OMP_NUM_THREADS=1) and for Whisper tiny.en
through CTranslate2 (whose vectors move with their batch-mates, so the driver forms its batches).
The fast tests check the parts without a cluster; the slow ones run a local Ray instance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maeb.core.errors import ModelError
from maeb.encoders import runnable_problems
from maeb.encoders.offline import CT2WhisperEncoder, TranscriptEncoder
from maeb.mock import SpectralEncoder, write_tone_folder
from maeb.run.distributed import batches_of, driver_batches
from maeb.run.numeric_env import apply_thread_counts, thread_counts
from maeb.run.options import RunOptions
from maeb.run.rayworker import MaebWorker
from maeb.run.runner import run
from maeb.spec import catalog
from maeb.spec.taskspec import load_spec

from .conftest import one_ray_cluster

RATES = (44100, 48000)
FREQS = {"low": 300.0, "mid": 1200.0, "high": 4000.0}
MFCC, WHISPER = "maeb/mfcc-stats", "openai/whisper-tiny.en-clipwindow"


@pytest.fixture(scope="module")
def mp3(tmp_path_factory) -> dict[int, Path]:
    """A folder of noisy tones per rate, encoded as MP3 (libsndfile's LAME) at that rate."""
    root = tmp_path_factory.mktemp("mp3")
    return {
        rate: write_tone_folder(root / f"tones{rate}", FREQS, per_label=10, rate=rate, seed=rate, fmt="MP3") for rate in RATES
    }


# -- fast: no cluster ------------------------------------------------------------------------

VECTORS = textwrap.dedent(
    """
    import hashlib, json, sys
    from maeb.audio.pipeline import AudioRef, LengthPolicy, load
    from maeb.encoders import load_encoder
    from maeb.run.numeric_env import apply_thread_counts, thread_counts
    from maeb.spec.catalog import find_model
    args = json.loads(sys.argv[1])
    if args["threads"]:
        wrong = apply_thread_counts(args["threads"])
        assert not wrong, wrong
    encoder = load_encoder(find_model("maeb/mfcc-stats"))
    policy = LengthPolicy(sample_rate=16000, resampler="torchaudio-sinc-hann")
    clips = [load(AudioRef(p, path=p), policy) for p in args["paths"]]
    vectors = encoder.embed_audio(clips)
    print(json.dumps({"threads": thread_counts(), "vectors": hashlib.sha256(vectors.tobytes()).hexdigest()}))
    """
)


def _vectors_in_a_process(paths: list[str], threads: dict | None, omp: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp  # as Ray starts a worker that holds one CPU
    args = json.dumps({"paths": paths, "threads": threads})
    done = subprocess.run([sys.executable, "-c", VECTORS, args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_process_started_with_one_thread_computes_the_plain_vectors_once_it_takes_the_drivers_threads(mp3):
    paths = [str(p) for rate in RATES for p in sorted((mp3[rate] / "audio").glob("*.mp3"))[:8]]
    plain = _vectors_in_a_process(paths, None, None)
    as_worker = _vectors_in_a_process(paths, plain["threads"], "1")
    assert as_worker["threads"] == plain["threads"]
    assert as_worker["vectors"] == plain["vectors"]


def test_a_library_that_refuses_the_drivers_thread_count_stops_the_worker_in_one_line():
    before = thread_counts()
    blas = next(key for key in before["libraries"] if key.startswith("blas:"))
    worker = object.__new__(MaebWorker)  # its checks only, without loading a model
    worker.where, worker.threads = "worker 1 (node:123)", {"libraries": {blas: 100000}, "torch": None}
    try:
        with pytest.raises(ModelError) as caught:
            worker._same_threads()
    finally:
        assert apply_thread_counts(before) == ""
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("worker 1 (node:123): thread counts differ from the driver's")
    assert f"{blas} " in message and "100000 on the driver" in message
    assert thread_counts() == before


def test_encoders_whose_vectors_depend_on_their_batch_mates_are_batched_by_the_driver():
    assert CT2WhisperEncoder.batch_dependent and TranscriptEncoder.batch_dependent
    assert driver_batches(CT2WhisperEncoder) and driver_batches(TranscriptEncoder)
    assert not driver_batches(SpectralEncoder())
    assert batches_of(CT2WhisperEncoder, 256).startswith("formed by the driver as in the plain run")
    assert batches_of(SpectralEncoder(), 64) == "shards of up to 64 clips, batched by length on the workers"


# -- slow: a local Ray instance ---------------------------------------------------------------


def _specs(mp3: dict[int, Path], folder: Path) -> list:
    """Three local tasks: hold-out classification at each rate and clustering at 48 kHz, all on
    the crossed label (`speaker`, unrelated to the tone), whose near-chance scores move with the
    last bits of the vectors."""
    split = '[data.split_by]\ncolumn = "split"\n[protocol]\nsamples_per_label = 4\n'  # the train split has 6-7 clips a class
    rows = [
        ("Hold44100", "classification", mp3[44100], '["test"]', split),
        ("Hold48000", "classification", mp3[48000], '["test"]', split),
        ("Clus48000", "clustering", mp3[48000], '["all"]', ""),
    ]
    specs = []
    for name, kind, data, splits, extra in rows:
        path = folder / f"{name}.toml"
        path.write_text(
            f'name = "{name}"\ntype = "{kind}"\nlanguages = ["zxx-Zxxx"]\n[data]\nsource = "audiofolder"\n'
            f'path = "{data}"\nlabel_column = "speaker"\neval_splits = {splits}\n{extra}'
        )
        specs.append(load_spec(path))
    return specs


def _results(root: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((root / "results").rglob("*.json")) if p.name != "model_meta.json"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, worker_id):
    pytest.importorskip("ray")
    with one_ray_cluster(tmp_path_factory, worker_id) as ray:
        yield ray


@pytest.mark.slow  # a local Ray instance (about 15 s to start) and two runs of three tasks per model
@pytest.mark.parametrize("model", [MFCC, pytest.param(WHISPER, marks=pytest.mark.heavy)])  # Whisper: about 60 s more
def test_a_ray_run_of_mp3_tasks_has_the_plain_runs_vectors_and_scores(model, mp3, cluster, tmp_path):
    from maeb.run.distributed import run_on_ray

    meta = catalog.find_model(model)
    if runnable_problems(meta):
        pytest.skip(f"{model}: {'; '.join(runnable_problems(meta))}")
    specs = _specs(mp3, tmp_path)

    def options(name: str) -> RunOptions:
        return RunOptions(output_dir=tmp_path / name / "results", cache_dir=tmp_path / name / "cache", show_progress=False)

    plain = run(meta, specs, options("plain"), log=lambda m: None)
    # shards of 8 clips: unlike the plain run's batches of 16, so batch-mates differ unless the driver batches
    on_ray = run_on_ray(meta, specs, options("ray"), log=lambda m: None, workers=1, shard_clips=8)
    assert plain.failed == {} and on_ray.failed == {}
    a, b = _results(tmp_path / "plain"), _results(tmp_path / "ray")
    assert sorted(a) == sorted(b) == ["Clus48000", "Hold44100", "Hold48000"]
    for task in a:
        assert b[task]["maeb"]["fingerprints"]["vectors"] == a[task]["maeb"]["fingerprints"]["vectors"], task
        assert json.dumps(b[task]["scores"], sort_keys=True) == json.dumps(a[task]["scores"], sort_keys=True), task
    assert [r.main_score for r in on_ray.results] == [r.main_score for r in plain.results]
    record = b["Hold44100"]["maeb"]["ray"]
    assert record["threads"] == thread_counts()  # the driver's, which the workers took
    driver = model == WHISPER
    assert record["batches"].startswith("formed by the driver" if driver else "shards of up to 8 clips")
    # the driver's batches went to the worker as calls; shards carried the rest
    calls = sum(w.calls for w in on_ray.workers)
    assert (calls > 0 and on_ray.shards == 0) if driver else on_ray.shards > 0
