"""The metric record (maeb.metrics.registry): one place that declares a metric's direction, range and
baselines, read by task types, the result reader, the leaderboard and the uncertainty bands. An outside
task type whose main score is an error rate ranks the smallest first on a board (issue 45: 0.593 ranked
below 0.670), a registered metric is reported by the built-in types without editing a list, and the
generation scorers' directions are the records'."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from maeb import tasktypes
from maeb.analysis.leaderboard import load_board
from maeb.core.errors import SpecError
from maeb.metrics import records, registry
from maeb.results.read import TaskInfo, check_value, metric_range
from maeb.run.record import task_record
from maeb.spec.taskspec import load_spec

from .test_board_validation import entry, write_result
from .test_tasktypes_outside import write_spec

pytestmark = pytest.mark.usefixtures("allow_code")

ERRORS = '''
import numpy as np

from maeb.metrics.registry import register_metric
from maeb.tasktypes import Evaluation, TaskType


def error_rate(y_true, y_pred) -> float:
    """The share of clips whose predicted label is wrong."""
    return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))


register_metric(
    "error_rate", error_rate, oracle="1 - sklearn.metrics.accuracy_score", higher_is_better=False, range=(0, 1), inputs="labels"
)


class ErrorType(TaskType):
    """Scores a task by its error rate (the smaller the better)."""

    NAME = "error_type"
    MAIN_SCORE = "error_rate"
    LABELLED = True

    def evaluate(self, data, split, emb, spec, state):
        return Evaluation({"error_rate": 0.5})
'''
BOARD = {"org/worse": 0.670, "org/better": 0.593, "org/worst": 0.700}  # the two errors and a third


@pytest.fixture
def errors(tmp_path, monkeypatch):
    """The outside module (its metric registered on import) importable from tmp_path; the metrics and
    types it declares are forgotten after the test."""
    (tmp_path / "my_errors.py").write_text(textwrap.dedent(ERRORS))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.metric_names()  # the built-in records first
    monkeypatch.setattr(records, "_METRICS", dict(records._METRICS))
    monkeypatch.setattr(tasktypes, "_LOADED", dict(tasktypes._LOADED))
    monkeypatch.delitem(sys.modules, "my_errors", raising=False)
    return "my_errors"


def error_board(root, record: dict) -> list[str]:
    for model, value in BOARD.items():
        write_result(root, model, record["name"], {"test": [entry(value, metric=record["main_score"])]}, {"task": record})
    board, problems = load_board([root])
    assert not problems
    return [r.model for r in board.rows]


def test_an_outside_lower_is_better_type_ranks_the_smallest_error_first(tmp_path, tone_folder, errors):
    spec = load_spec(write_spec(tmp_path, tone_folder, f"{errors}:ErrorType", name="MyErrors"))
    record = task_record(spec)  # what the runner writes into maeb.task
    assert record["lower_is_better"] is True and record["type"] == "error_type"
    assert error_board(tmp_path / "res", record) == ["org/better", "org/worse", "org/worst"]
    info = TaskInfo("MyErrors", "error_type", main_score="error_rate")
    assert info.lower_is_better  # from the record alone, nothing recorded in a file


def test_a_board_without_the_record_reads_the_direction_its_files_recorded(tmp_path, monkeypatch):
    """A board built where the outside module is not imported: the files' maeb.task.lower_is_better."""
    record = {
        "name": "MyErrors",
        "type": "error_type",
        "main_score": "error_rate",
        "eval_splits": ["test"],
        "lower_is_better": True,
    }
    assert registry.record_of("error_rate") is None
    assert error_board(tmp_path / "res", record) == ["org/better", "org/worse", "org/worst"]
    assert not TaskInfo("MyErrors", "error_type", main_score="error_rate").lower_is_better  # nothing known: higher first


def test_a_files_direction_beats_a_record_the_name_only_extends(tmp_path):
    """hamming_loss, declared lower-is-better by a module the board's process never imported, reads as
    an extension of the built-in hamming (higher is better) by name alone: the files' flag wins."""
    record = {
        "name": "MyLosses",
        "type": "loss_type",
        "main_score": "hamming_loss",
        "eval_splits": ["test"],
        "lower_is_better": True,
    }
    assert registry.record_of("hamming_loss").name == "hamming"
    assert registry.record_of("hamming_loss", loose=False) is None
    assert error_board(tmp_path / "res", record) == ["org/better", "org/worse", "org/worst"]
    assert not TaskInfo("MyLosses", main_score="hamming_loss").lower_is_better  # nothing recorded: the extended record
    assert not TaskInfo("Cls", main_score="f1_weighted", recorded_lower=False).lower_is_better


def test_a_registered_metric_is_reported_and_checked_by_built_in_types_without_a_list(tmp_path, tone_folder, errors):
    __import__(errors)
    from maeb.tasktypes.labels import label_metrics

    got = label_metrics(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1]))
    assert got["error_rate"] == 0.25 and got["accuracy"] == 0.75
    # a classification spec may name it as its main score; its range and direction are the record's
    spec = load_spec(write_spec(tmp_path, tone_folder, "classification", name="MyClassErrors"))
    assert "error_rate" in tasktypes.get("classification").metrics(spec)
    assert tasktypes.get("zeroshot").lower_is_better("error_rate") and not tasktypes.get("classification").lower_is_better(
        "accuracy"
    )
    assert metric_range("error_rate") == (0.0, 1.0) and "outside [0, 1]" in check_value(1.5, "error_rate")


def test_ranges_and_directions_come_from_the_records():
    cases = {  # result key -> (record, range, lower is better)
        "cosine_ap": ("ap", (0.0, 1.0), False),
        "ndcg_at_10": ("ndcg_at_k", (0.0, 1.0), False),
        "cv_recall_at_5": ("hit_rate_at_k", (0.0, 1.0), False),
        "segment_1s_er": ("segment_error_rate", (0.0, float("inf")), True),
        "event_onset_200ms_fms": ("event_scores", (0.0, 1.0), False),
        "fd": ("fd", (0.0, float("inf")), True),
        "hit_rate": ("hit_rate", (0.0, 1.0), True),  # the generation scorer's (missed words), not retrieval's
    }
    for key, (name, bounds, lower) in cases.items():
        found = registry.record_of(key)
        assert (found.name, found.range, found.lower_is_better) == (name, bounds, lower), key
    assert TaskInfo("DESED", "AudioEventDetection", main_score="segment_1s_er").lower_is_better


def test_the_generation_scorers_directions_are_the_records():
    """Every key a scorer group gives has its own metric record, the one home of its direction; the
    expected directions are MMAG's (distances and error rates fall, the rest rise)."""
    from maeb.audiogen import registry as scorers

    falling = {"fd", "kl", "wer", "hit_rate", "wer_caps", "proportion"}
    for key in scorers.KEY_GROUP:
        found = registry.record_of(key)
        assert found is not None and found.name == key, key
        assert found.lower_is_better == (key in falling), key
        assert tasktypes.get("audio_generation").lower_is_better(key) == (key in falling), key
    assert not any("lower" in field for field in scorers.ScorerGroup.__dataclass_fields__)


def test_a_record_declared_again_with_other_facts_is_refused(monkeypatch):
    registry.metric_names()
    monkeypatch.setattr(records, "_METRICS", dict(records._METRICS))
    fn = registry.get_metric("accuracy").fn
    with pytest.raises(SpecError, match="already declared with other facts"):
        registry.register_metric("accuracy", fn, "sklearn.metrics.accuracy_score", higher_is_better=False)
    with pytest.raises(SpecError, match="inputs 'label' is not one of"):
        registry.register_metric("mine", fn, "me", inputs="label")
    with pytest.raises(SpecError, match="range must be"):
        registry.register_metric("mine", fn, "me", range=(1, 0))
    with pytest.raises(SpecError, match="only read in results"):
        registry.get_metric("nauc")(None)
