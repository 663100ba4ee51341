from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from maeb.encoders import ModelMeta, identity
from maeb.engine.cache import EmbeddingCache
from maeb.engine.embed import Embedder
from maeb.mock import SpectralEncoder, write_tone_folder


def _shared() -> Path:
    """The workplace's shared folder: $MAEB_SHARED_DIR, else ../shared beside the checkout, else the
    workplace's usual place (CI may clone elsewhere)."""
    candidates = [os.environ.get("MAEB_SHARED_DIR"), Path(__file__).resolve().parents[2] / "shared", "/work/shared"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "data").is_dir():
            return Path(candidate)
    return Path(__file__).resolve().parents[2] / "shared"


SHARED = _shared()
SHARED_DATA = SHARED / "data"
FREQS = {"low": 220.0, "mid": 880.0, "high": 3520.0}


def mock_meta(**options) -> ModelMeta:
    return ModelMeta(name="test/spectral", family="mock-spectral", revision="1", modalities=("audio", "text"), options=options)


def make_embedder(tmp_path: Path, encoder=None, meta=None, **kwargs) -> Embedder:
    meta = meta or mock_meta()
    encoder = encoder or SpectralEncoder()
    cache = EmbeddingCache(tmp_path / "cache", identity(meta, encoder))
    kwargs.setdefault("show_progress", False)
    return Embedder(meta, encoder, cache, **kwargs)


@pytest.fixture(scope="session")
def tone_folder(tmp_path_factory) -> Path:
    return write_tone_folder(tmp_path_factory.mktemp("tones"), FREQS, per_label=12)


@pytest.fixture
def embedder(tmp_path) -> Embedder:
    return make_embedder(tmp_path)


def needs_shared():
    return pytest.mark.skipif(not (SHARED_DATA / "fsdd" / "metadata.csv").exists(), reason="../shared/data is absent")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


LITE_TOOLS = ("espeak-ng", "flite", "festival", "fluidsynth", "timidity")


@pytest.fixture(scope="session")
def lite_data(tmp_path_factory, worker_id) -> Path:
    """One MAEB-lite build (seed 0) for every test file that runs on it; tests only read it. Under
    pytest-xdist (`make test` runs -n 2) the workers share one build: the first to need it builds it
    in the run's common temporary folder under a file lock, the others wait and read it."""
    if not all(shutil.which(t) for t in LITE_TOOLS):
        pytest.skip("Debian's espeak-ng, flite, festival, fluidsynth or timidity is missing")
    from filelock import FileLock

    from maeb.benchmarks.lite.build import build

    if worker_id == "master":  # not under xdist
        folder = tmp_path_factory.mktemp("lite") / "data"
        build(folder, seed=0, log=lambda m: None)
        return folder
    shared = tmp_path_factory.getbasetemp().parent  # the folder every worker's basetemp lies in
    folder, done = shared / "lite" / "data", shared / "lite" / "built"
    with FileLock(str(shared / "lite.lock")):
        if not done.exists():
            build(folder, seed=0, log=lambda m: None)
            done.touch()
    return folder


@pytest.fixture
def allow_code(monkeypatch):
    """Specs and entries of the test may import their own modules (`module:Class`), in this process
    (maeb.core.trust) and in the maeb commands it starts (MAEB_ALLOW_CODE)."""
    from maeb.core import trust

    monkeypatch.setenv("MAEB_ALLOW_CODE", "1")
    monkeypatch.setattr(trust, "_allowed", True)


@pytest.fixture(scope="session")
def worker_id(request) -> str:
    """pytest-xdist's worker name (gw0, gw1, ...), or "master" in a run without workers (xdist's
    own fixture of that name, for when xdist is not installed)."""
    return getattr(request.config, "workerinput", {}).get("workerid", "master")


def pytest_configure(config):
    """OpenMP threads wait for work passively (OMP_WAIT_POLICY=PASSIVE) in this process, its xdist
    workers and every maeb command a test starts, unless the caller chose otherwise. libgomp's
    default spins a waiting thread, so on a busy machine (two xdist workers on 2 cores, or CI's
    neighbours) scikit-learn's MiniBatchKMeans (the clustering evaluator) ran 20 to 100 times slower
    (30 fits, load 8 on 2 cores: 40-67 s spinning, 0.5-2.3 s passive; torch's CPU wheel uses the same
    libgomp). The
    thread counts, and so every result, stay as they were. Set here, before a test module imports
    torch or scikit-learn: libgomp reads it once, when it loads."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def pytest_collection_modifyitems(config, items):
    """A heavy test is a slow one too, so `make test-fast` (-m "not slow") never runs it."""
    for item in items:
        if item.get_closest_marker("heavy") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


@contextlib.contextmanager
def one_ray_cluster(tmp_path_factory, worker_id: str):
    """A local Ray cluster (two CPUs) for the block, one at a time on this machine under pytest-xdist:
    `make test` runs the test files on two workers (--dist loadfile), and two clusters of two CPUs
    each on 2 cores would slow each other's drills; a worker waits here for the other's to shut down."""
    import ray
    from filelock import FileLock

    lock = (
        contextlib.nullcontext() if worker_id == "master" else FileLock(str(tmp_path_factory.getbasetemp().parent / "ray.lock"))
    )
    with lock:
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 1024 * 1024, _node_ip_address="127.0.0.1")
        try:
            yield ray
        finally:
            ray.shutdown()


@pytest.fixture
def forget_family():
    """Registers nothing itself: a test hands it the family names it registers, removed afterwards."""
    from maeb.encoders.family import FAMILY_REGISTRY

    names: list[str] = []
    yield names.append
    for name in names:
        FAMILY_REGISTRY.pop(name, None)
