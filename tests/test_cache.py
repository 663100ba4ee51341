"""The embedding cache: persistence, identity separation, no pickle, reuse across runs."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from maeb.audio.pipeline import AudioRef
from maeb.core.errors import ModelError
from maeb.engine.cache import EmbeddingCache, text_key
from maeb.mock import SpectralEncoder

from .conftest import make_embedder


def test_roundtrip_and_persistence(tmp_path):
    ident = {"name": "m", "revision": "1", "config": {"a": 1}}
    cache = EmbeddingCache(tmp_path, ident)
    vecs = {"k1": np.arange(4, dtype=np.float32), "k2": -np.ones(4, dtype=np.float32)}
    cache.put_many(vecs)
    cache.close()
    again = EmbeddingCache(tmp_path, dict(ident))
    got = again.get_many(["k2", "k1", "missing"])
    assert set(got) == {"k1", "k2"} and np.array_equal(got["k1"], vecs["k1"])
    assert again.dim == 4 and len(again) == 2


def test_identity_separates_configs(tmp_path):
    a = EmbeddingCache(tmp_path, {"name": "m", "revision": "1", "config": {"window": "30s"}})
    b = EmbeddingCache(tmp_path, {"name": "m", "revision": "1", "config": {"window": "clip"}})
    assert a.path != b.path
    a.put_many({"k": np.ones(2, dtype=np.float32)})
    assert b.get_many(["k"]) == {}


def test_dimension_change_is_an_error(tmp_path):
    cache = EmbeddingCache(tmp_path, {"name": "m"})
    cache.put_many({"a": np.ones(3, dtype=np.float32)})
    with pytest.raises(ModelError, match="3-d"):
        cache.put_many({"b": np.ones(5, dtype=np.float32)})


def test_stored_as_raw_float32_not_pickle(tmp_path):
    cache = EmbeddingCache(tmp_path, {"name": "m"})
    cache.put_many({"a": np.array([1.5, -2.0], dtype=np.float32)})
    cache.close()
    blob = sqlite3.connect(cache.path).execute("SELECT vec FROM emb").fetchone()[0]
    assert blob == np.array([1.5, -2.0], dtype=np.float32).tobytes()


class CountingEncoder(SpectralEncoder):
    calls = 0
    seen = 0

    def embed_audio(self, clips):
        CountingEncoder.calls += 1
        CountingEncoder.seen += len(clips)
        return super().embed_audio(clips)


def test_each_clip_embedded_once_across_runs(tmp_path, tone_folder):
    from maeb.data.sources import load_audiofolder

    refs = load_audiofolder(tone_folder)["audio"]
    duplicate = AudioRef("copy of first", data=refs[0].read())
    first = make_embedder(tmp_path, encoder=CountingEncoder(), batch_size=5)
    x1, ok1 = first.audio(refs + [duplicate])
    assert ok1.all() and CountingEncoder.seen == len(refs)  # the duplicate bytes are embedded once
    assert np.array_equal(x1[0], x1[-1])
    first.cache.close()
    CountingEncoder.seen = 0
    second = make_embedder(tmp_path, encoder=CountingEncoder())
    x2, _ = second.audio(list(reversed(refs)))
    assert CountingEncoder.seen == 0 and np.array_equal(x2[::-1], x1[:-1])
    assert second.stats.clips_cached == len(refs) and second.stats.clips_embedded == 0


def test_texts_are_cached(tmp_path):
    emb = make_embedder(tmp_path)
    a = emb.text(["tone 440", "tone 880", "tone 440"])
    assert np.array_equal(a[0], a[2]) and emb.stats.texts_embedded == 2
    emb.text(["tone 880"])
    assert emb.stats.texts_embedded == 2 and text_key("x") != text_key("y")


def test_runs_started_together_on_a_new_cache_all_open_it(tmp_path):
    """A job array's runs race to create the cache file; SQLite refuses the losers' switch to WAL
    at once ("database is locked"), which opening the cache must wait out."""
    import subprocess
    import sys
    import time

    child = (
        "import sys, time, numpy\n"
        "from maeb.engine.cache import EmbeddingCache\n"
        "t0 = float(sys.argv[2])\n"
        "while time.time() < t0: pass\n"
        "c = EmbeddingCache(sys.argv[1], {'name': 'm'}); c.put_many({sys.argv[3]: numpy.ones(4)}); c.close()\n"
    )
    for attempt in range(6):
        root, start = tmp_path / f"c{attempt}", time.time() + 0.8
        procs = [
            subprocess.Popen([sys.executable, "-c", child, str(root), str(start), f"k{i}"], stderr=subprocess.PIPE, text=True)
            for i in range(3)
        ]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], errors
