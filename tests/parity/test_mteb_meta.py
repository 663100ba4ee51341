"""What maeb writes, read by mteb 2.26.24's own classes (issue 32): every catalog entry's
model_meta.json through ModelMeta.model_validate_json_resolved (the entry point mteb's ResultCache
reads model_meta.json with; plain model_validate rejects a loader given by name), the records
maeb ships equal to mteb's registry, a fresh run's files through TaskResult and ResultCache, and
mteb's choice among revision folders taking maeb's version as one of its own.

Run with `.venv-parity/bin/python -m pytest tests/parity/test_mteb_meta.py`."""

from __future__ import annotations

import json

import pytest

from tests.test_cli import write_model, write_task


@pytest.fixture(scope="module")
def mteb_oracle():
    mteb = pytest.importorskip("mteb")
    if mteb.__version__ != "2.26.24":
        pytest.fail(f"mteb is {mteb.__version__}; the reference is 2.26.24 (bash scripts/parity_env.sh)")
    return mteb


def test_every_catalog_entry_s_model_meta_json_validates_as_mteb_s_model_meta(mteb_oracle):
    from mteb.models import ModelMeta

    from maeb.results.write import model_meta_json
    from maeb.spec.catalog import models

    bad = []
    for meta in models().values():
        try:
            ModelMeta.model_validate_json_resolved(json.dumps(model_meta_json(meta)))
        except Exception as exc:  # noqa: BLE001  (every entry's failure, not the first)
            bad.append(f"{meta.name}: {' '.join(str(exc).split())[:200]}")
    assert not bad, "\n".join(bad)
    assert len(models()) >= 125


def test_shipped_records_equal_mteb_s_registry(mteb_oracle):
    from maeb.spec.catalog import models, mteb_records

    records = mteb_records()
    known = {m.name: m for m in mteb_oracle.get_model_metas()}
    assert set(records) == {name for name in models() if name in known}
    for name, record in records.items():
        theirs = json.loads(json.dumps(known[name].to_dict(), default=str))
        theirs["training_datasets"] = (
            sorted(theirs["training_datasets"] or []) if theirs["training_datasets"] is not None else None
        )
        assert record == theirs, name


def test_experiment_folder_name_is_mteb_s(mteb_oracle):
    from mteb.models import ModelMeta

    from maeb.results.write import experiment_name, model_meta_json
    from maeb.spec.catalog import find_model

    kwargs = {"dtype": "float16", "max_seconds": 10}
    written = model_meta_json(find_model("openai/whisper-medium"), kwargs)
    theirs = ModelMeta.model_validate_json_resolved(json.dumps(written))
    assert theirs.experiment_name == experiment_name(kwargs)


@pytest.mark.slow
def test_a_fresh_run_reads_in_mteb_and_wins_mteb_s_choice_of_revision(mteb_oracle, tmp_path, tone_folder):
    from mteb import ResultCache, TaskResult
    from mteb.models import ModelMeta

    from maeb.cli.commands import main

    model = write_model(tmp_path)
    task = write_task(tmp_path, tone_folder, "ToneClusters")
    out = tmp_path / "cache" / "results"
    assert (
        main(
            [
                "run",
                "--model",
                str(model),
                "--tasks",
                str(task),
                "--output-dir",
                str(out),
                "--cache-dir",
                str(tmp_path / "emb"),
                "--quiet",
            ]
        )
        == 0
    )
    folder = out / "test__spectral" / "r1"
    meta = ModelMeta.model_validate_json_resolved((folder / "model_meta.json").read_text())
    assert meta.name == "test/spectral" and meta.revision == "r1"
    result = TaskResult.from_disk(folder / "ToneClusters.json")
    assert result.mteb_version.startswith("2.26.24+maeb.") and result.get_score() == pytest.approx(
        json.loads((folder / "ToneClusters.json").read_text())["scores"]["test"][0]["main_score"]
    )

    # `mteb submit-results` finds the model (it skipped every maeb model_meta.json before: "No valid models")
    found = ResultCache(tmp_path / "cache")._normalize_models(None)
    assert [(m.name, m.revision) for m in found] == [("test/spectral", "r1")]

    # an older published file in another revision folder: mteb keeps the one whose version is newest
    older = out / "test__spectral" / "r0"
    older.mkdir()
    (older / "model_meta.json").write_text(json.dumps({**json.loads((folder / "model_meta.json").read_text()), "revision": "r0"}))
    data = json.loads((folder / "ToneClusters.json").read_text())
    data["mteb_version"] = "1.38.33"
    data["scores"]["test"][0]["main_score"] = 0.123
    for entry in data["scores"]["test"]:
        entry.pop("mteb_version", None)
    (older / "ToneClusters.json").write_text(json.dumps(data))
    loaded = ResultCache(tmp_path / "cache").load_results(include_remote=False, require_model_meta=True)
    joined = loaded.join_revisions()
    kept = [(m.model_revision, t.task_name) for m in joined.model_results for t in m.task_results]
    assert kept == [("r1", "ToneClusters")]

    from maeb.results.read import choose_revisions, read_results

    scores = choose_revisions(read_results([out]).scores)
    assert {s.revision for s in scores} == {"r1"}


def test_the_committed_maeb_lite_reference_reads_in_mteb(mteb_oracle):
    """results/maeb-lite, regenerated by scripts/lite_reference.py, is what `make lite` checks
    against and what a reader copies: every result through TaskResult (main score equal to the
    file's), every model_meta.json through ModelMeta."""
    from pathlib import Path

    from mteb import TaskResult
    from mteb.models import ModelMeta

    root = Path(__file__).resolve().parents[2] / "results" / "maeb-lite"
    metas = sorted(root.glob("*/*/model_meta.json"))
    files = sorted(p for p in root.glob("*/*/*.json") if p.name != "model_meta.json")
    assert len(metas) == 5 and len(files) >= 70
    for path in metas:
        meta = ModelMeta.model_validate_json_resolved(path.read_text())
        assert meta.name and meta.name.replace("/", "__") == path.parent.parent.name, path
    for path in files:
        result = TaskResult.from_disk(path)
        data = json.loads(path.read_text())
        split = next(iter(data["scores"]))
        assert result.task_name == data["task_name"] == path.stem, path
        assert result.get_score(splits=[split]) == pytest.approx(data["scores"][split][0]["main_score"]), path
