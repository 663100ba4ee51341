"""Issue 46 item 12: `maeb submit` checks every name it reads from a results folder (model_meta.json's
name and revision, the task names of its files) before it writes anything, so nothing lands outside
the --to clone; and an undo removes only what the submission made (a folder that was there stays)."""

from __future__ import annotations

import pytest

from .test_submit import MODEL, clone, lay_out, result, submit_main  # noqa: F401  (clone: the fixture)


def _files(root):
    return sorted(p for p in root.rglob("*"))


@pytest.mark.parametrize(
    "field,value",
    [("revision", "../../../OUTSIDE"), ("revision", ".."), ("name", ".."), ("revision", "ABSOLUTE"), ("name", "a\\..\\..")],
)
def test_a_name_that_leaves_the_clone_is_refused_before_any_write(tmp_path, clone, capsys, field, value):  # noqa: F811
    from maeb.spec.catalog import mteb_record

    outside = tmp_path / "OUTSIDE"
    value = str(tmp_path / "abs") if value == "ABSOLUTE" else value  # (an absolute path of the test's own)
    ours = tmp_path / "deep" / "er" / "ours"
    meta = {**mteb_record(MODEL), field: value}
    lay_out(ours, MODEL, "r", {"ESC50": result("ESC50", {"default": 0.4})}, meta)
    before, around = _files(clone), _files(tmp_path)
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1 and "cannot name a folder of the repository" in err and repr(value) in err
    assert _files(clone) == before and _files(tmp_path) == around and not outside.exists()


def test_a_link_in_the_clone_that_leads_out_is_refused(tmp_path, clone, capsys):  # noqa: F811
    from maeb.spec.catalog import mteb_record

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (clone / "results" / "google__yamnet").symlink_to(elsewhere)
    ours = tmp_path / "ours"
    lay_out(ours, "google/yamnet", "r", {"BeijingOpera": result("BeijingOpera", {"default": 0.2})}, mteb_record("google/yamnet"))
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1 and "outside" in err and not any(elsewhere.iterdir())


def test_an_undo_keeps_the_folders_that_were_there(tmp_path, clone, capsys):  # noqa: F811
    from maeb.spec.catalog import mteb_record

    meta = {**mteb_record("google/yamnet"), "revision": "main"}  # not a commit hash: the repository's rule fails
    kept = clone / "results" / "google__yamnet" / "main"
    kept.mkdir(parents=True)  # an empty folder of the clone's own
    ours = tmp_path / "ours"
    lay_out(ours, "google/yamnet", "main", {"BeijingOpera": result("BeijingOpera", {"default": 0.2})}, meta)
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1 and "nothing was written" in err
    assert kept.is_dir() and not any(kept.iterdir())


def test_an_undo_removes_the_folders_it_made(tmp_path, clone, capsys):  # noqa: F811
    from maeb.spec.catalog import mteb_record

    meta = {**mteb_record("google/yamnet"), "revision": "main"}
    ours = tmp_path / "ours"
    lay_out(ours, "google/yamnet", "main", {"BeijingOpera": result("BeijingOpera", {"default": 0.2})}, meta)
    before = _files(clone)
    assert submit_main(ours, clone, capsys)[0] == 1
    assert _files(clone) == before
