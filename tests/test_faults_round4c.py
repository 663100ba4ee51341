"""Issue 33 leftovers: the documented [derive] label_column fallback for pairs (item 16) and a
cache folder that cannot be written (item 16's read-only cache). Each case failed before its fix."""

from __future__ import annotations

import json
import sqlite3

import pytest

from maeb.cli.commands import main
from maeb.engine import cache as cache_module
from maeb.run.task import evaluate_task
from maeb.spec.loader import load_task
from maeb.spec.taskspec import parse_spec

from .conftest import make_embedder
from .test_faults import (
    cached_vectors,
    counts,
    one_error,
    read_only,
    result_file,
    run_args,
    run_main,
    write_folder,
    write_model,
    write_spec,
)

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


# item 16: "a complete read-only cache cannot be read". A researcher pointing at a shared, frozen
# cache expects its vectors to be used: the run reads them, embeds what the cache lacks without
# storing it, says so in one warning naming the file, and its scores equal a writable run's. A
# read-only folder with no cache file for the model holds nothing to read: that stays an error.
def refuse_writes(monkeypatch):
    """The one place a cache file is opened for writing fails as SQLite does on a read-only file
    (tests run as root, where chmod stops no write)."""

    def refused(path, setup):
        exc = sqlite3.OperationalError("attempt to write a readonly database")
        exc.sqlite_errorname = "SQLITE_READONLY"
        raise exc

    monkeypatch.setattr(cache_module, "connect", refused)


def first_run(tmp_path, capsys):
    task = write_spec(tmp_path, write_folder(tmp_path / "data", per_label=2))
    args = run_args(tmp_path, write_model(tmp_path), task)
    rc, err = run_main(capsys, args)
    assert rc == 0, err
    return args, json.loads(result_file(tmp_path / "res").read_text())["scores"]


def cache_file(tmp_path):
    (path,) = (tmp_path / "cache" / "embeddings").glob("*.sqlite")
    return path


def test_a_complete_read_only_cache_is_read(tmp_path, capsys):
    args, scores = first_run(tmp_path, capsys)
    with read_only(tmp_path / "cache" / "embeddings"):  # a real read-only bind mount (root) or chmod
        rc, err = run_main(capsys, [*args, "--overwrite"])
    assert rc == 0, err
    assert counts(err) == (0, 4), err
    assert str(cache_file(tmp_path)) in err and "cannot be written" in err, err
    assert json.loads(result_file(tmp_path / "res").read_text())["scores"] == scores


def test_a_read_only_cache_lacking_clips_embeds_them_without_storing_them(tmp_path, capsys, monkeypatch):
    args, scores = first_run(tmp_path, capsys)
    db = sqlite3.connect(cache_file(tmp_path))
    db.execute("DELETE FROM emb WHERE rowid IN (SELECT rowid FROM emb LIMIT 2)")
    db.commit()
    db.close()
    before = cache_file(tmp_path).read_bytes()
    refuse_writes(monkeypatch)
    rc, err = run_main(capsys, [*args, "--overwrite"])
    assert rc == 0, err
    assert counts(err) == (2, 2), err
    warnings = [line for line in err.splitlines() if "cannot be written" in line]
    assert len(warnings) == 1 and str(cache_file(tmp_path)) in warnings[0], err
    assert json.loads(result_file(tmp_path / "res").read_text())["scores"] == scores
    assert cache_file(tmp_path).read_bytes() == before and cached_vectors(tmp_path / "cache") == 2


def test_an_unwritable_cache_folder_without_the_models_file_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    task = write_spec(tmp_path, write_folder(tmp_path / "data", per_label=2))
    refuse_writes(monkeypatch)
    rc, err = run_main(capsys, run_args(tmp_path, write_model(tmp_path), task))
    line = one_error(rc, err)
    assert str(tmp_path / "cache" / "embeddings") in line and "--cache-dir" in line, line
    assert not result_file(tmp_path / "res").exists()


def test_a_dry_run_counts_the_clips_of_a_read_only_cache(tmp_path, capsys):
    """A WAL cache file, cleanly closed, in a read-only folder opens only as immutable: the dry run
    read it as empty ("0 clips already cached")."""
    args, _ = first_run(tmp_path, capsys)
    with read_only(tmp_path / "cache" / "embeddings"):
        capsys.readouterr()
        rc = main([*args, "--dry-run", "--overwrite"])
        out = "".join(capsys.readouterr())
    assert rc == 0, out
    assert "4 clips already cached" in out, out
