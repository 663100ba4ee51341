"""Derived pairs: `[derive] label_column` falls back to data.label_column, as documented, and the built
pairs carry the columns the pair protocol names."""

from __future__ import annotations

import pytest

from maeb.run.task import evaluate_task
from maeb.spec.loader import load_task
from maeb.spec.taskspec import parse_spec

from .conftest import make_embedder

# their entries name a module of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")


def pair_spec(folder, data: dict | None = None, derive: dict | None = None, protocol: dict | None = None):
    fields = {"source": "audiofolder", "path": str(folder), "eval_splits": ["test"], **(data or {})}
    spec = {"name": "Pairs", "type": "pair_classification", "data": fields}
    spec["derive"] = {"kind": "pairs", "n_pairs": 40, **(derive or {})}
    if protocol:
        spec["protocol"] = protocol
    return parse_spec(spec, "test spec")


# item 16: "[derive] label_column (unset: data.label_column)" failed for pairs, whose built table
# named its label "label" while the pair evaluator reads data.label_column
def test_derive_pairs_fall_back_to_data_label_column(tone_folder, tmp_path):
    spec = pair_spec(tone_folder, data={"label_column": "freq"})  # freq names the tone as label does
    scores, *_ = evaluate_task(spec, make_embedder(tmp_path))
    assert scores["test"][0]["max_ap"] > 0.95


def test_derived_pairs_carry_the_columns_the_pair_protocol_names(tone_folder):
    spec = pair_spec(
        tone_folder,
        data={"label_column": "same"},
        derive={"label_column": "label"},
        protocol={"audio1_column": "left", "audio2_column": "right"},
    )
    table = load_task(spec)["default"]["test"]
    assert set(table.columns) == {"left", "right", "same"}
    assert set(table["same"]) == {0, 1}
