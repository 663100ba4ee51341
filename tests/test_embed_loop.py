"""The one embedding loop (Embedder.run with a Job, Embedder.call_model) that audio vectors,
frames and generated clips go through, and the loader asking the task type about its labels."""

from __future__ import annotations

import time

import pytest

from maeb.core.device import OutOfMemory
from maeb.core.errors import DataError, ModelError
from maeb.engine.embed import Job
from maeb.spec.loader import load_task
from maeb.spec.taskspec import load_spec

from .conftest import make_embedder
from .test_tasktypes_outside import write_spec

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")


def test_run_keeps_checked_values_stores_each_batch_and_counts_them(tmp_path):
    emb = make_embedder(tmp_path)
    stored: list[dict] = []

    def call(inputs, items):
        return emb.call_model(lambda xs: (time.sleep(0.01), [2 * x for x in xs])[1], inputs, items)

    job = Job(
        call=call,
        check=lambda item, out: None if item == "b" else out,  # "b" is skipped as unusable
        key=str.upper,
        put=stored.append,
        seconds=lambda inputs, values: float(sum(inputs)),
        counter="audio_generated",
    )
    done = emb.run(job, iter([[("a", 1), ("b", 2)], [], [("c", 3)]]))

    assert done == {"A": 2, "C": 6}
    assert stored == [{"A": 2}, {"C": 6}]  # each batch stored as it finishes; the empty one never called
    stats = emb.stats
    assert stats.audio_generated == 2 and stats.clips_embedded == 0
    assert stats.audio_seconds == 6.0
    assert 0.02 <= stats.forward_seconds <= stats.embed_wall_seconds  # two calls of >= 10 ms, inside the loop's time


def test_call_model_names_the_clips_and_keeps_maeb_errors_and_out_of_memory(tmp_path):
    emb = make_embedder(tmp_path)
    names = ["c1", "c2", "c3", "c4"]

    def fails(exc):
        def fn(_):
            raise exc

        return fn

    with pytest.raises(ModelError, match=r"model 'test/spectral' failed on clips c1, c2, c3 \(ValueError: bad\)$"):
        emb.call_model(fails(ValueError("bad")), [0] * 4, names)
    own = DataError("clip c2: no samples")
    with pytest.raises(DataError) as caught:
        emb.call_model(fails(own), [0] * 4, names)
    assert caught.value is own  # an error of maeb's own already names what to do
    with pytest.raises(OutOfMemory):
        emb.call_model(fails(RuntimeError("CUDA out of memory")), [0] * 4, names, oom=True)
    with pytest.raises(ModelError, match="failed to generate c1"):  # no back-off asked: one clear line
        emb.call_model(fails(RuntimeError("CUDA out of memory")), [0] * 4, names, "failed to generate")
    assert emb.stats.forward_seconds == 0.0  # a failed call is not encoder time


REJECTS_MID = """
from maeb.core.errors import DataError
from maeb.tasktypes import TaskType


class NoMid(TaskType):
    NAME = "no_mid"
    MAIN_SCORE = "accuracy"
    LABELLED = True

    def check_labels(self, spec, values, where):
        if "mid" in values:
            raise DataError(f"{where}: no_mid takes no 'mid' label")

    def evaluate(self, data, split, emb, spec, state):
        raise AssertionError("not reached")
"""


def test_the_loader_asks_the_task_type_about_its_labels(tmp_path, tone_folder, monkeypatch):
    from maeb import tasktypes

    (tmp_path / "label_types.py").write_text(REJECTS_MID)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(tasktypes, "_LOADED", dict(tasktypes._LOADED))
    # the tone folder's labels are low, mid and high: the type's own hook stops the load, naming the column
    with pytest.raises(DataError, match=r"split test column 'label': no_mid takes no 'mid' label"):
        load_task(load_spec(write_spec(tmp_path, tone_folder, "label_types:NoMid")))
    # the same folder loads under a type whose hook is the base's (no check of its own)
    data = load_task(load_spec(write_spec(tmp_path, tone_folder, "classification", name="Tones")))
    assert "mid" in data["default"]["test"]["label"]
