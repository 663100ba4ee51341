"""Identity by construction: a cache entry or a result file is reused only by a run it describes.

The test family below "forgets" to report its weights path in config(), as most wrappers did:
the engine must key the cache and the results on the options anyway."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from maeb.cli.commands import main

from .test_cli import run_args, write_task

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")

FORGETFUL = """
import numpy as np
from maeb.mock import SpectralEncoder


class Weighted(SpectralEncoder):
    def __init__(self, meta=None, device="cpu", path=None, **options):
        super().__init__(meta, device)
        self.weights = np.load(path) if path else np.ones(16, dtype=np.float32)

    def config(self):
        return {"bands": 16}  # says nothing about the weights it loaded

    def embed_audio(self, clips):
        return super().embed_audio(clips) * self.weights
"""

MODEL = """
[[model]]
name = "test/weighted"
family = "weightedfamily:Weighted"
revision = "r1"
modalities = ["audio"]
"""


@pytest.fixture
def weighted(tmp_path, monkeypatch):
    (tmp_path / "weightedfamily.py").write_text(FORGETFUL)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("weightedfamily", None)
    model = tmp_path / "model.toml"
    model.write_text(MODEL)
    rng = np.random.default_rng(3)
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", rng.uniform(0.0, 2.0, 16).astype(np.float32))
    return model


def result_files(root: Path) -> dict[str, dict]:
    return {str(p.relative_to(root)): json.loads(p.read_text()) for p in root.rglob("Tones.json")}


@pytest.mark.slow
def test_weights_path_keys_cache_and_results(tmp_path, tone_folder, weighted, capsys):
    task = write_task(tmp_path, tone_folder, "Tones")
    base = run_args(tmp_path, weighted, task)
    assert main(base + ["--option", f"path={tmp_path / 'a.npy'}"]) == 0
    assert "9 clips embedded, 0 from cache" in capsys.readouterr().err
    # other weights: nothing comes from the cache, and the result goes to its own experiment folder
    assert main(base + ["--option", f"path={tmp_path / 'b.npy'}"]) == 0
    err = capsys.readouterr().err
    assert "9 clips embedded, 0 from cache" in err and "Tones: already done" not in err
    files = result_files(tmp_path / "res")
    assert len(files) == 2 and all("/experiments/path_" in name for name in files)
    a, b = (files[n]["maeb"] for n in sorted(files))
    assert a["fingerprints"]["inputs"] == b["fingerprints"]["inputs"]  # the same clips ...
    assert a["fingerprints"]["vectors"] != b["fingerprints"]["vectors"]  # ... other vectors
    assert a["identity"]["hash"] != b["identity"]["hash"]
    # the same weights again: done, and found in the cache
    assert main(base + ["--option", f"path={tmp_path / 'a.npy'}"]) == 0
    assert "Tones: already done" in capsys.readouterr().err
    # new weights written over the same path are other weights
    np.save(tmp_path / "a.npy", np.full(16, 0.5, dtype=np.float32))
    assert main(base + ["--option", f"path={tmp_path / 'a.npy'}"]) == 0
    assert "9 clips embedded, 0 from cache" in capsys.readouterr().err
    metas = [json.loads(p.read_text()) for p in (tmp_path / "res").rglob("experiments/*/model_meta.json")]
    assert sorted(m["experiment_kwargs"]["path"].split("@")[0] for m in metas) == ["a.npy", "a.npy", "b.npy"]
    # how maeb ran it (the weights by content) is in run_settings.jsonl; model_meta.json is mteb's
    rows = [
        json.loads(line)
        for p in (tmp_path / "res").rglob("experiments/*/run_settings.jsonl")
        for line in p.read_text().splitlines()
    ]
    assert len(rows) == 3 and all(row["maeb"]["options"]["path"]["content"] for row in rows)
    assert not any("maeb" in m for m in metas)


def test_changed_spec_is_not_answered_by_an_old_result(tmp_path, tone_folder, weighted, capsys):
    task = write_task(tmp_path, tone_folder, "Tones")
    args = run_args(tmp_path, weighted, task)
    assert main(args) == 0
    text = task.read_text() + "[protocol]\nn_clusters = 3\n"
    task.write_text(text)
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another configuration" in err[0] and "n_clusters: 10 -> 3" in err[0] and "--overwrite" in err[0]
    assert main(args + ["--overwrite"]) == 0
    result = next(iter(result_files(tmp_path / "res").values()))
    assert len(result["scores"]["test"][0]["v_measures"]["Level 0"]) == 3


@pytest.mark.slow
def test_results_and_experiments_load_in_mteb(tmp_path, tone_folder, weighted):
    """mteb's own ResultCache reads a default run and an experiment, and tells them apart."""
    from mteb.cache import ResultCache

    task = write_task(tmp_path, tone_folder, "Tones")
    assert main(run_args(tmp_path, weighted, task)) == 0
    assert main(run_args(tmp_path, weighted, task) + ["--option", f"path={tmp_path / 'b.npy'}"]) == 0
    import shutil

    shutil.copytree(tmp_path / "res", tmp_path / "home" / "results")  # ResultCache reads {cache}/results
    cache = ResultCache(tmp_path / "home")
    paths = cache.get_cache_paths(load_experiments="match_name", include_remote=False)
    assert len(paths) == 2 and sum("experiments" in p.parts for p in paths) == 1
    names = {cache._get_model_name_and_revision_from_path(p.parent)[2] for p in paths}
    assert None in names and any(n and n.startswith("path_b.npy") for n in names)


def test_tampered_cache_is_one_clear_error(tmp_path, tone_folder, weighted, capsys):
    task = write_task(tmp_path, tone_folder, "Tones")
    args = run_args(tmp_path, weighted, task)
    assert main(args) == 0
    (db_path,) = (tmp_path / "cache" / "embeddings").glob("*.sqlite")
    db = sqlite3.connect(db_path)
    key, blob = db.execute("SELECT key, vec FROM emb LIMIT 1").fetchone()
    db.execute("UPDATE emb SET vec = ? WHERE key = ?", (bytes(len(blob)), key))
    db.commit()
    db.close()
    capsys.readouterr()
    assert main(args + ["--overwrite"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fails its checksum" in err[0] and str(db_path) in err[0]
    db_path.write_bytes(b"not a database at all" * 100)
    for extra in ("-wal", "-shm"):
        Path(str(db_path) + extra).unlink(missing_ok=True)
    assert main(args + ["--overwrite"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(db_path) in err[0] and "delete the file" in err[0]


def test_clips_shared_by_train_and_test_are_reported(tmp_path, tone_folder, weighted, capsys):
    import shutil

    folder = tmp_path / "leaky"
    shutil.copytree(tone_folder, folder)
    rows = (folder / "metadata.csv").read_text().splitlines()
    header, body = rows[0], rows[1:]
    columns = header.split(",")
    split = columns.index("split")
    test_row = next(r for r in body if r.split(",")[split] == "test")
    train_row = next(r for r in body if r.split(",")[split] == "train")
    # the train row's file gets the test row's bytes
    shutil.copy(folder / test_row.split(",")[0], folder / train_row.split(",")[0])
    task = tmp_path / "Leaky.toml"
    task.write_text(
        f'name = "Leaky"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\nsamples_per_label = 2\n'
    )
    args = run_args(tmp_path, weighted, task)
    assert main(args) == 0
    assert "warning: task Leaky: 1 clip is byte-identical in the train split and an evaluation split" in capsys.readouterr().err
    result = json.loads(next((tmp_path / "res").rglob("Leaky.json")).read_text())
    assert result["maeb"]["data"]["train_eval_shared_clips"] == 1
    assert main(args + ["--overwrite", "--on-leak", "error"]) == 2
    assert "--on-leak warn" in capsys.readouterr().err


def test_mteb_benchmark_tables_read_maeb_results(tmp_path, tone_folder, weighted):
    """A result under a real MAEB task name goes through mteb's own leaderboard path: ResultCache's
    load_results with validation, then BenchmarkResults' per-task table."""
    import shutil

    import mteb
    from mteb.cache import ResultCache

    task = tmp_path / "ESC50Clustering.toml"
    task.write_text(
        f'name = "ESC50Clustering"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["train"]\n[data.split_by]\ncolumn = "split"\ntrain = ["train", "test"]\n'
    )
    assert main(run_args(tmp_path, weighted, task)) == 0
    shutil.copytree(tmp_path / "res", tmp_path / "home" / "results")
    results = ResultCache(tmp_path / "home").load_results(
        tasks=[mteb.get_task("ESC50Clustering")], include_remote=False, require_model_meta=True, validate_and_filter=True
    )
    frame = results.to_dataframe()  # one row per task, one column per model
    ours = json.loads(next((tmp_path / "res").rglob("ESC50Clustering.json")).read_text())
    assert list(frame["task_name"]) == ["ESC50Clustering"]
    assert float(frame["test/weighted"].iloc[0]) == pytest.approx(ours["scores"]["train"][0]["main_score"])


def test_weight_hashes_are_remembered_in_the_cache_folder(tmp_path, monkeypatch):
    """A second process names the same weights without reading them; changed weights are read."""
    from maeb.core import identity

    weights = tmp_path / "ckpt"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"w" * 1000)
    memo = tmp_path / "cache"
    first = identity.path_fingerprint(str(weights), memo)
    monkeypatch.setattr(identity, "_fingerprints", {})  # a new process

    def no_reading(*args, **kwargs):
        raise AssertionError("the weights were read again")

    monkeypatch.setattr(identity, "open", no_reading, raising=False)
    assert identity.path_fingerprint(str(weights), memo) == first
    monkeypatch.undo()
    (weights / "model.safetensors").write_bytes(b"v" * 1001)
    assert identity.path_fingerprint(str(weights), memo)["content"] != first["content"]
    assert identity.path_fingerprint(str(weights))["content"] != first["content"]  # no memo: hashed
