"""The real download path, end to end: `python -m maeb run` with HF_ENDPOINT pointing at a local
hub (tests/hub/server.py) that serves catalog repositories in their cards' layouts
(tests/hub/fixtures.py) and tiny model repositories under their real names (tests/hub/models.py).
The quick subset here covers every MAEB task type and both retrieval layouts mteb's loader falls
back on (MACS_t2a's card: corpus under split `corpus`; the corpus-split variant on another
repository); `make hub-check` runs the whole benchmarks (tests/hub/check.py)."""

from __future__ import annotations

import hashlib
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from maeb.spec import catalog

from .hub.check import (
    build_site,
    maeb_env,
    maeb_run,
    main_scores,
    repeated_downloads,
    results_of,
    unpinned_requests,
)
from .hub.server import HubServer

QUICK_TASKS = (
    "MACST2ARetrieval",  # t2a retrieval in MACS_t2a's card layout (corpus under split `corpus`)
    "UrbanSound8KT2ARetrieval",  # the same fallback on a repository without a card (variant corpus-split)
    "BeijingOpera",  # classification
    "VehicleSoundClustering",  # clustering
    "CREMADPairClassification",  # pair classification
    "GTZANAudioReranking",  # reranking (top_ranked)
    "RavdessZeroshot",  # zero-shot (text side)
    "FSD2019Kaggle",  # multilabel
)
VARIANTS = {"mteb/Urbansound8K_t2a": "corpus-split"}
HUB_MODEL = "facebook/wav2vec2-base"  # a model repository the hub serves (the fastest tiny family)
MOCK_MODEL = """[[model]]
name = "test/spectral"
family = "mock-spectral"
revision = "r1"
embed_dim = 16
modalities = ["audio", "text"]
"""


def slow(test):
    """Minutes, not seconds: `make hub-check` runs it (pytest -m slow); the default suite skips it."""
    skip = pytest.mark.skipif("'slow' not in config.getoption('markexpr')", reason="make hub-check runs it (pytest -m slow)")
    return pytest.mark.slow(skip(test))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    specs = [catalog.find_task(t) for t in QUICK_TASKS]
    return build_site(tmp_path_factory.mktemp("hub"), specs, [], VARIANTS)


@pytest.fixture
def mock_model(tmp_path) -> str:
    """A fast encoder with both sides (no download), so the quick subset times the data path."""
    path = tmp_path / "spectral.toml"
    path.write_text(MOCK_MODEL)
    return str(path)


def pinned(task: str) -> tuple[str, str]:
    spec = catalog.find_task(task)
    return spec.data.path, spec.data.revision


@pytest.mark.heavy
def test_quick_subset_downloads_each_repository_once_and_reruns_offline(site, tmp_path, mock_model):
    """Heavy (50 s measured): make test keeps the test hub through
    test_failures_each_name_the_repository_and_what_to_do (a maeb run against it, 5 s),
    test_offline_a_benchmark_asks_the_network_once_and_fails_each_hub_task and tests/test_hub_server.py;
    `make hub-check` (-m slow) still runs this one."""
    assert pinned("MACST2ARetrieval") in {(r, v) for r, v, _ in site.datasets}
    with site.serve(HubServer()) as hub:
        env = maeb_env(tmp_path, hub.endpoint)
        proc, _ = maeb_run(["run", "--model", mock_model, "--tasks", *QUICK_TASKS, "--quiet"], env, tmp_path / "online")
        assert proc.returncode == 0, proc.stderr[-3000:]
        results = results_of(tmp_path / "online" / "results")
        assert set(results) == set(QUICK_TASKS)
        assert all(p["dataset_revision"] == pinned(t)[1] for t, p in results.items())
        assert hub.unhandled() == []
        assert repeated_downloads(hub) == {}
        assert unpinned_requests(hub, site) == []
        fetched = {r.path.split("repo=")[1].split("&")[0].replace("%2F", "/") for r in hub.downloads() if "repo=" in r.path}
        assert fetched == {r for r, _, _ in site.datasets}  # each repository's parquet files came through the CDN

        hub.clear_log()  # the same tasks again: nothing but HF_HOME, an empty maeb cache and results folder
        offline = maeb_env(tmp_path, hub.endpoint, HF_HUB_OFFLINE="1", MAEB_CACHE_DIR=str(tmp_path / "cache2"))
        again, _ = maeb_run(["run", "--model", mock_model, "--tasks", *QUICK_TASKS, "--quiet"], offline, tmp_path / "offline")
        assert again.returncode == 0, again.stderr[-3000:]
        assert hub.requests() == []
    assert main_scores(tmp_path / "offline" / "results") == main_scores(tmp_path / "online" / "results")


def test_failures_each_name_the_repository_and_what_to_do(site, tmp_path):
    """Missing, gated, wrong revision and a full disk, as the tasks of one run (each fails alone,
    exit 2), and the missing one alone (maeb: error: one line)."""
    missing, gated, moved, full = "BeijingOpera", "VehicleSoundClustering", "CREMADPairClassification", "FSD2019Kaggle"
    other_sha = "0" * 40
    hub = HubServer()
    for repo, revision, folder in site.datasets:
        if repo == pinned(missing)[0]:
            continue
        hub.add("dataset", repo, other_sha if repo == pinned(moved)[0] else revision, folder, gated=repo == pinned(gated)[0])
    with hub:
        env = maeb_env(tmp_path, hub.endpoint)
        limit = 4096  # bytes a downloaded file may take under HF_HOME: READMEs fit, parquet files do not
        args = ["run", "--model", "mfcc", "--tasks", missing, gated, moved, full, "--quiet"]
        proc = subprocess.run(
            [sys.executable, "-m", "tests.hub.diskfull", env["HF_HOME"], str(limit), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        lines = proc.stderr.strip().splitlines()
        reasons = {line.split(":")[1].split()[-1]: line for line in lines if line.startswith("failed: task ")}
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        assert set(reasons) == {missing, gated, moved, full}, lines
        repo = pinned(missing)[0]
        assert f"dataset {repo} does not exist on {hub.endpoint}" in reasons[missing]
        assert f"is gated: accept its conditions at {hub.endpoint}/datasets/{pinned(gated)[0]}" in reasons[gated]
        assert f"dataset {pinned(moved)[0]} has no revision {pinned(moved)[1]}" in reasons[moved]
        assert f"no space left on the device while downloading dataset {pinned(full)[0]}@{pinned(full)[1]}" in reasons[full]
        assert "HF_HOME" in reasons[full] and "data.revision" in reasons[moved] and "HF_TOKEN" in reasons[gated]

        alone, _ = maeb_run(["run", "--model", "mfcc", "--tasks", missing, "--quiet"], env, tmp_path / "alone")
        lines = [line for line in alone.stderr.splitlines() if line.strip()]
        assert alone.returncode == 2 and len(lines) == 1, alone.stderr
        assert lines[0].startswith(f"maeb: error: task {missing}: dataset {repo} does not exist")


@slow
def test_a_model_downloads_at_its_revision_once_and_loads_offline(site, tmp_path):
    """Missing from the hub: one line naming it; served: downloaded (once) and run; then offline
    from the cache alone: no request, the same score."""
    args = ["run", "--model", HUB_MODEL, "--tasks", "BeijingOpera", "--quiet"]
    models = build_site(tmp_path / "models", [], [HUB_MODEL])
    with site.serve(HubServer()) as hub:
        proc, _ = maeb_run(args, maeb_env(tmp_path, hub.endpoint), tmp_path / "missing")
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"maeb: error: model {HUB_MODEL} does not exist on {hub.endpoint} (or is private)")

        ((name, revision, folder),) = models.models
        hub.add("model", name, revision, folder)
        proc, _ = maeb_run(args, maeb_env(tmp_path, hub.endpoint), tmp_path / "online")
        assert proc.returncode == 0, proc.stderr[-3000:]
        quoted = f"repo={name}&"
        model_files = {r.path for r in hub.downloads() if r.path.startswith(f"/{name}/") or quoted in r.path}
        assert len(model_files) == len(list(folder.glob("*.json"))) + 1  # the json files, and the weights from the CDN
        assert repeated_downloads(hub) == {} and unpinned_requests(hub, site) == []
        hub.clear_log()
        offline = maeb_env(tmp_path, hub.endpoint, HF_HUB_OFFLINE="1", MAEB_CACHE_DIR=str(tmp_path / "cache2"))
        again, _ = maeb_run(args, offline, tmp_path / "offline")
        assert again.returncode == 0 and hub.requests() == [], again.stderr[-3000:]
    assert main_scores(tmp_path / "offline" / "results") == main_scores(tmp_path / "online" / "results")


@slow
def test_a_download_killed_midway_and_one_cut_midway_both_complete(site, tmp_path):
    """The first run is killed while a parquet file is half sent; in the rerun the server cuts
    that file's connection once after 20,000 bytes, and the client asks again (from the start:
    huggingface_hub resumes from what it has written, in 10 MB chunks, and this file is smaller;
    test_a_cut_download_resumes_with_a_range_request covers the resume). The file in the cache is
    the served file, byte for byte, and the task is evaluated."""
    task = "BeijingOpera"
    repo, revision = pinned(task)
    folder = next(f for r, v, f in site.datasets if r == repo)
    parquet = max(folder.rglob("*.parquet"), key=lambda p: p.stat().st_size)
    suffix = parquet.relative_to(folder).as_posix()
    with site.serve(HubServer()) as hub:
        env = maeb_env(tmp_path, hub.endpoint)
        stall = hub.arm(suffix, 20_000, "stall")
        args = [sys.executable, "-m", "maeb", "run", "--model", "mfcc", "--tasks", task, "--quiet"]
        first = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert stall.hit.wait(300), "the download never started"
            first.send_signal(signal.SIGKILL)
            first.wait(60)
        finally:
            stall.release.set()
        assert not results_of(tmp_path / "results")
        hub.clear_log()
        hub.arm(suffix, 20_000, "drop")
        proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        size = parquet.stat().st_size
        gets = [r.sent for r in hub.downloads() if r.path.startswith("/cdn/") and suffix in r.path]
        assert gets == [20_000, size]
    assert set(results_of(tmp_path / "results")) == {task}
    digest = hashlib.sha256(parquet.read_bytes()).hexdigest()
    blob = tmp_path / "hf" / "hub" / f"datasets--{repo.replace('/', '--')}" / "blobs" / digest
    assert blob.read_bytes() == parquet.read_bytes()


def test_a_cut_download_resumes_with_a_range_request(tmp_path):
    """huggingface_hub against the test hub in this process: a 12 MB file whose connection is cut
    after 11 MB arrives whole, the second request asking for the rest (Range, answered 206)."""
    from huggingface_hub import hf_hub_download

    repo = tmp_path / "repo"
    repo.mkdir()
    data = hashlib.sha256(b"seed").digest() * (12 * 2**20 // 32)
    (repo / "weights.safetensors").write_bytes(data)
    with HubServer() as hub:
        hub.add("model", "org/big", "1" * 40, repo)
        hub.arm("weights.safetensors", 11 * 2**20, "drop")
        path = hf_hub_download(
            "org/big", "weights.safetensors", revision="1" * 40, endpoint=hub.endpoint, cache_dir=tmp_path / "c"
        )
        ranged = [(r.range, r.status) for r in hub.downloads() if r.range]
    assert Path(path).read_bytes() == data
    assert len(ranged) == 1 and ranged[0][1] == 206 and int(ranged[0][0].removeprefix("bytes=").rstrip("-")) >= 10 * 2**20


def test_offline_a_benchmark_asks_the_network_once_and_fails_each_hub_task(tmp_path):
    """An endpoint that accepts connections and closes them unanswered (a dead proxy, a captive
    network): the run probes it once, says there is no network, and reports each of the three
    hub tasks as failed without trying the network again (huggingface_hub alone retried every
    file with back-off: about 25 s a task)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    connections = []

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            connections.append(conn)
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        args = ["run", "--model", "mfcc", "--benchmark", "MAEB", "--task-types", "clustering", "--quiet"]
        proc, _ = maeb_run(args, maeb_env(tmp_path, endpoint), tmp_path)
    finally:
        listener.close()
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert sum(line.startswith("no network: ") for line in lines) == 1
    failed = [line for line in lines if line.startswith("failed: ")]
    assert len(failed) == 3 and all("the hub cannot be reached" in line and "data.path" in line for line in failed)
    assert len(connections) == 1


def test_maeb_hub_explains_no_space_wherever_it_is_in_the_chain():
    from maeb.data import hub

    try:
        try:
            raise OSError(28, "No space left on device", "/cache/blob.incomplete")
        except OSError as inner:
            raise RuntimeError("An error occurred while generating the dataset") from inner
    except RuntimeError as exc:
        line = hub.explain(exc, "dataset", "org/data", "a" * 40)
    assert line.startswith(f"no space left on the device while downloading dataset org/data@{'a' * 40} (/cache/blob.incomplete)")
    assert hub.explain(ValueError("Unknown split"), "dataset", "org/data", None) is None


@slow
def test_the_served_models_carry_the_real_processor_settings(tmp_path):
    from transformers import ClapProcessor

    from .hub.models import build_model_repo

    folder = build_model_repo("laion/clap-htsat-unfused", tmp_path / "clap")
    extractor = ClapProcessor.from_pretrained(folder).feature_extractor
    assert (extractor.truncation, extractor.frequency_min, extractor.sampling_rate) == ("rand_trunc", 50, 48000)
    assert not (Path(folder) / "processor_config.json").exists()
