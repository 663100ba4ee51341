"""A task type outside the package: a TaskType subclass in the user's own module, named in a spec
as type = "module:Class", runs on a local task like a built-in type (docs/add-task.md, "A task type of your own")."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import maeb
from maeb import tasktypes
from maeb.core.errors import SpecError
from maeb.mock import SpectralEncoder
from maeb.spec import describe
from maeb.spec.taskspec import load_spec

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")

OUTSIDE = '''
import numpy as np

from maeb.data.sources import RetrievalData
from maeb.tasktypes import Evaluation, Param, TaskType


class NearestCentroid(TaskType):
    """Each test clip gets the label of the nearest class mean of the training clips."""

    NAME = "nearest_centroid"
    MAIN_SCORE = "accuracy"
    LABELLED = True
    PARAMS = {"distance": Param("euclidean", "distance to the class means", choices=("euclidean", "cosine"))}

    def splits(self, spec):
        return list(dict.fromkeys(spec.data.eval_splits + [spec.data.train_split]))

    def evaluate(self, data, split, emb, spec, state):
        audio, label = spec.data.audio_column, spec.data.label_column
        train, test = data[spec.data.train_split], data[split]
        x_train, _ = emb.audio(train[audio])
        x_test, _ = emb.audio(test[audio])
        classes = sorted(set(train[label]))
        means = np.stack([x_train[[v == c for v in train[label]]].mean(axis=0) for c in classes])
        if spec.protocol["distance"] == "cosine":
            means = means / np.linalg.norm(means, axis=1, keepdims=True)
        guess = [classes[i] for i in ((x_test[:, None, :] - means[None]) ** 2).sum(-1).argmin(axis=1)]
        right = [g == t for g, t in zip(guess, test[label])]
        rows = "".join(f"{ref.name},{g}\\n" for ref, g in zip(test[audio], guess))
        return Evaluation({"accuracy": float(np.mean(right)), "n_test": len(right)}, files={"guesses.csv": rows})


class ReturnsDict(NearestCentroid):
    def evaluate(self, data, split, emb, spec, state):
        return {"accuracy": 1.0}


class QueriesOnly(TaskType):
    """A type that reads retrieval data (queries, corpus, qrels) and says so."""

    NAME = "queries_only"
    MAIN_SCORE = "n_queries"

    SPLIT = RetrievalData

    def evaluate(self, data, split, emb, spec, state):
        raise AssertionError("the runner let a plain table through")
'''


def write_spec(tmp_path, folder, kind: str, name: str = "ToneCentroids", label: str = "label") -> object:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ntype = "{kind}"\nlanguages = ["zxx-Zxxx"]\n'
        f'[data]\nsource = "audiofolder"\npath = "{folder}"\neval_splits = ["test"]\nlabel_column = "{label}"\n'
        '[data.split_by]\ncolumn = "split"\n'
    )
    return path


def nearest_mean_accuracy(folder, label: str) -> tuple[float, int]:
    """The nearest-class-mean accuracy on the folder's test rows, computed from its files alone:
    the encoder on each decoded clip, class means of the train rows, Euclidean distance."""
    head, *rows = list(csv.reader((folder / "metadata.csv").read_text().splitlines()))
    col = {c: head.index(c) for c in ("file_name", label, "split")}
    vec = SpectralEncoder().embed_audio([sf.read(folder / r[col["file_name"]], dtype="float32")[0] for r in rows])
    train = [i for i, r in enumerate(rows) if r[col["split"]] == "train"]
    test = [i for i, r in enumerate(rows) if r[col["split"]] == "test"]
    classes = sorted({rows[i][col[label]] for i in train})
    means = {c: vec[[i for i in train if rows[i][col[label]] == c]].mean(axis=0) for c in classes}
    right = [min(classes, key=lambda c: np.linalg.norm(vec[i] - means[c])) == rows[i][col[label]] for i in test]
    return float(np.mean(right)), len(test)


@pytest.fixture
def outside(tmp_path, monkeypatch):
    """The module name of the user's own task types, importable from tmp_path."""
    (tmp_path / "my_tasktypes.py").write_text(textwrap.dedent(OUTSIDE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(tasktypes, "_LOADED", dict(tasktypes._LOADED))  # the types loaded here are forgotten after
    return "my_tasktypes"


def test_an_outside_task_type_runs_on_a_local_task(tmp_path, tone_folder, outside):
    # speaker: a label crossed with the tones, so the classes overlap and the score is no trivial 1.0
    spec = load_spec(write_spec(tmp_path, tone_folder, f"{outside}:NearestCentroid", label="speaker"))
    assert spec.protocol == {"distance": "euclidean"} and spec.mteb_type == "nearest_centroid"
    (result,) = maeb.evaluate(
        SpectralEncoder(), [spec], output_dir=tmp_path / "res", cache_dir=tmp_path / "cache", progress=False
    )

    expected, n_test = nearest_mean_accuracy(tone_folder, "speaker")
    assert result.main_score == pytest.approx(expected, abs=1e-6)  # results keep 6 places

    written = list((tmp_path / "res").rglob("ToneCentroids.json"))
    assert len(written) == 1
    saved = json.loads(written[0].read_text())
    assert saved["scores"]["test"][0]["n_test"] == n_test
    guesses = (written[0].parent / "ToneCentroids_predictions" / "guesses.csv").read_text().splitlines()
    assert len(guesses) == n_test


def test_a_split_of_the_wrong_shape_stops_the_run_before_the_model_sees_a_clip(tmp_path, tone_folder, outside):
    """A type reading retrieval data (SPLIT = RetrievalData) given a plain table stops in the runner
    with one line naming the task, the split and what the type reads (TaskType.check_split)."""
    from maeb.core.errors import DataError

    class Counting(SpectralEncoder):
        clips = 0

        def embed_audio(self, clips):
            Counting.clips += len(clips)
            return super().embed_audio(clips)

    spec = load_spec(write_spec(tmp_path, tone_folder, f"{outside}:QueriesOnly", "TonePool"))
    with pytest.raises(DataError, match=r"^TonePool: split test is a plain table; .*:QueriesOnly needs data.layout"):
        maeb.evaluate(Counting(), [spec], cache_dir=tmp_path / "cache", progress=False)
    assert Counting.clips == 0


def test_an_outside_type_is_checked_like_a_registered_one(tmp_path, tone_folder, outside):
    info = describe.type_info(describe.find_type(f"{outside}:NearestCentroid"))  # `maeb describe module:Class`
    assert info["mteb"] == "nearest_centroid" and [p["name"] for p in info["params"]] == ["distance"]
    assert info["splits"] == [("", ["data.eval_splits", "data.train_split"])]
    with pytest.raises(SpecError, match="distance must be one of 'euclidean', 'cosine'"):
        bad = write_spec(tmp_path, tone_folder, f"{outside}:NearestCentroid", "Bad")
        bad.write_text(bad.read_text() + '[protocol]\ndistance = "manhattan"\n')
        load_spec(bad)
    with pytest.raises(SpecError, match=r"my_tasktypes\.Nowhere is not defined, not a maeb\.tasktypes\.TaskType subclass"):
        load_spec(write_spec(tmp_path, tone_folder, f"{outside}:Nowhere", "Nowhere"))
    with pytest.raises(SpecError, match="module no_such_module cannot be imported"):
        load_spec(write_spec(tmp_path, tone_folder, "no_such_module:Type", "Nothing"))
    spec = load_spec(write_spec(tmp_path, tone_folder, f"{outside}:ReturnsDict", "Dict"))
    with pytest.raises(SpecError, match="ReturnsDict: evaluate\\(\\) returned a dict; it must return an Evaluation"):
        maeb.evaluate(SpectralEncoder(), [spec], cache_dir=tmp_path / "cache", progress=False)


def test_the_readme_example_runs_as_written(tmp_path, tone_folder, monkeypatch):
    """The documented outside task type (docs/add-task.md), copied from it, gives the nearest-class-mean accuracy."""
    readme = (Path(__file__).resolve().parents[1] / "docs" / "add-task.md").read_text()
    code = readme.split("```python\n# my_types.py\n", 1)[1].split("```", 1)[0]
    (tmp_path / "my_types.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(tasktypes, "_LOADED", dict(tasktypes._LOADED))
    spec = load_spec(write_spec(tmp_path, tone_folder, "my_types:NearestCentroid", "Readme", label="speaker"))
    (result,) = maeb.evaluate(SpectralEncoder(), [spec], cache_dir=tmp_path / "cache", progress=False)
    assert result.main_score == pytest.approx(nearest_mean_accuracy(tone_folder, "speaker")[0], abs=1e-6)
