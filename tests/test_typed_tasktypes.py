"""Issue 36, typed extension points: the task spec on the lowest floor, task types written one way
(a TaskType subclass with a typed evaluate), the embedder protocol, and the metric registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_task_spec_has_one_home_on_the_lowest_floor():
    """TaskSpec and DataSpec live in maeb.core.taskspec (every layer may name them); the spec layer
    reads and writes them but offers them under no second name (tests/test_import_paths.py checks
    that nothing imports them from elsewhere)."""
    import maeb.spec
    from maeb.core.taskspec import DataSpec, TaskSpec
    from maeb.spec import taskspec as readers

    assert TaskSpec.__module__ == DataSpec.__module__ == "maeb.core.taskspec"
    assert not hasattr(maeb.spec, "TaskSpec") and not hasattr(maeb.spec, "DataSpec")
    assert "TaskSpec" not in readers.__all__ and "DataSpec" not in readers.__all__


def test_a_parsed_spec_records_mtebs_type_name():
    """TaskSpec.mteb_type still comes from the task types' registry, a floor above the spec."""
    from maeb.spec.taskspec import parse_spec

    raw = {"name": "T", "type": "AudioClassification", "data": {"source": "audiofolder", "path": "."}}
    spec = parse_spec(raw, "t.toml")
    assert (spec.type, spec.mteb_type) == ("classification", "AudioClassification")


def test_built_in_types_are_task_type_subclasses_named_in_the_registry():
    """One way to write a task type: every built-in one is a TaskType subclass, as an outside one is."""
    import importlib

    from maeb import tasktypes

    for name, entry in tasktypes.REGISTRY.items():
        cls = getattr(importlib.import_module(entry.module), entry.cls)
        assert issubclass(cls, tasktypes.TaskType) and cls.NAME == name
        assert isinstance(tasktypes.get(name), cls)
        assert "evaluate" in vars(cls) or name == "reranking" or cls.evaluate is not tasktypes.TaskType.evaluate


def test_the_embedder_protocol_lists_the_declared_services():
    """Embeddings (what mypy holds evaluators to) and SERVICES (what the architecture test scans for)
    name the same members; perturb_frames is optional and read with getattr."""
    from maeb import tasktypes

    members = {n for n in vars(tasktypes.Embeddings) if not n.startswith("_")}
    assert members == set(tasktypes.SERVICES) - {"perturb_frames"}


@pytest.mark.slow
def test_a_typo_in_an_evaluator_fails_mypy(tmp_path):
    """A misspelt member of `emb`, of the spec or of a split's table in an evaluator is a mypy error,
    not a run-time one (Data holds maeb.data.sources.Table values, not Any)."""
    source = tmp_path / "typo_type.py"
    source.write_text(
        "from maeb.core.taskspec import TaskSpec\n"
        "from maeb.tasktypes import Data, Embeddings, Evaluation, TaskState, TaskType\n\n\n"
        "class Typo(TaskType):\n"
        "    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:\n"
        "        emb.contxt\n"
        "        data[split].colums\n"
        "        return Evaluation({spec.main_scor: 1.0})\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", str(source)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert '"Embeddings" has no attribute "contxt"' in done.stdout
    assert '"TaskSpec" has no attribute "main_scor"' in done.stdout
    assert '"Table" has no attribute "colums"' in done.stdout


def test_each_type_names_the_split_it_reads_and_refuses_the_other():
    """Plain-table types read maeb.data.sources.Table, retrieval and reranking RetrievalData; each
    refuses the other shape naming the task and split (TaskType.check_split)."""
    from maeb import tasktypes
    from maeb.core.errors import DataError
    from maeb.core.taskspec import DataSpec, TaskSpec
    from maeb.data.sources import RetrievalData, Table

    table = Table({"audio": [], "label": []})
    pool = RetrievalData.from_dicts({}, {}, {})
    for name in tasktypes.REGISTRY:
        kind = tasktypes.get(name)
        spec = TaskSpec(name="T", type=name, data=DataSpec(source="audiofolder", path="."))
        right, wrong = (pool, table) if name in ("retrieval", "reranking") else (table, pool)
        assert kind.SPLIT is type(right), name
        kind.check_split(spec, "test", right)
        with pytest.raises(DataError, match=r"^T: split test is "):
            kind.check_split(spec, "test", wrong)
