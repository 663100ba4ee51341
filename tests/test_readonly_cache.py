"""A cache folder that cannot be written: a complete one is read, one lacking clips embeds them without
storing them (one warning naming the file), one without the model's file is one line naming it."""

from __future__ import annotations

import json
import sqlite3

import pytest

from maeb.cli.commands import main
from maeb.engine import cache as cache_module

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
