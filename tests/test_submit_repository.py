"""Issue 46 items 8 and 13: what `maeb submit` refuses before it writes (a NaN or inf main score, a
task mteb does not know), a submission that is all or nothing (a disk that fills after the first
file leaves the clone as it was), and what it says about the real repository's rules."""

from __future__ import annotations

import errno

from .test_submit import MODEL, clone, lay_out, result, submit_main  # noqa: F401  (clone: the fixture)


def _files(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _registered() -> str:
    from maeb.spec.catalog import mteb_record

    return mteb_record(MODEL)["revision"]


def test_a_nan_or_inf_main_score_is_refused_naming_the_file_and_field(tmp_path, clone, capsys):  # noqa: F811
    ours = tmp_path / "ours"
    nan = result("ESC50", {"default": 0.4, "other": float("nan")})
    inf = result("AudioSetMini", {"default": float("inf")})
    lay_out(ours, MODEL, _registered(), {"ESC50": nan, "AudioSetMini": inf})
    before = _files(clone)
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1, err
    refused = [line for line in err.splitlines() if line.startswith("refused: ")]
    assert any("ESC50.json: scores.test[other].main_score = nan is not a finite number" in line for line in refused), err
    assert any("AudioSetMini.json: scores.test[default].main_score = inf" in line for line in refused), err
    assert "checks pass" not in out and _files(clone) == before


def test_a_task_mteb_does_not_know_is_refused(tmp_path, clone, capsys):  # noqa: F811
    ours = tmp_path / "ours"
    lay_out(ours, MODEL, _registered(), {"MyLocalTones": result("MyLocalTones", {"default": 0.4})})
    before = _files(clone)
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1 and "MyLocalTones.json: task_name 'MyLocalTones' is not a registered task" in err, err
    assert "checks pass" not in out and _files(clone) == before


def test_a_disk_that_fills_after_the_first_file_leaves_the_clone_as_it_was(tmp_path, clone, capsys, monkeypatch):  # noqa: F811
    import maeb.results.staging as submit_module  # where a submission writes its files

    ours = tmp_path / "ours"
    files = {
        "FSD2019Kaggle": result("FSD2019Kaggle", {"noisy": 0.3}),  # merged into the published file
        "AudioSetMini": result("AudioSetMini", {"default": 0.7}),  # new
        "ESC50": result("ESC50", {"default": 0.6}),  # new
    }
    lay_out(ours, MODEL, _registered(), files)
    real, calls = submit_module.write_text_atomic, []

    def fills(path, text):
        calls.append(path)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, text)

    monkeypatch.setattr(submit_module, "write_text_atomic", fills)
    before = _files(clone)
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 2 and "No space left on device" in err and "free some space" in err and "nothing was written" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert _files(clone) == before  # the first file is not merged, nothing staged is left


def test_a_legacy_revision_folder_is_refused_once_with_the_way_forward(tmp_path, clone, capsys):  # noqa: F811
    from maeb.spec.catalog import mteb_record

    legacy = {t: result(t, {"default": 0.5}) for t in ("ESC50", "AudioSetMini", "BeijingOpera")}
    meta = {**mteb_record(MODEL), "revision": "main"}
    old = lay_out(clone / "results", MODEL, "main", legacy, meta)
    ours = tmp_path / "ours"
    lay_out(ours, MODEL, _registered(), {t: result(t, {"default": 0.6}) for t in legacy})
    before = _files(clone)
    rc, out, err = submit_main(ours, clone, capsys)
    refused = [line for line in err.splitlines() if line.startswith("refused: ")]
    assert rc == 1 and len(refused) == 1, err  # one line for the folder, not one per task
    line = refused[0]
    assert "AudioSetMini, BeijingOpera, ESC50 for this model under revision main" in line
    assert "no-duplicate-results" in line and "same pull request" in line
    assert f"git rm -r {old.relative_to(clone)}" in line  # every file of that folder is ours: the folder goes
    assert _files(clone) == before

    for name in ("AudioSetMini", "BeijingOpera", "ESC50"):  # the way forward: the old files removed, then submit
        (old / f"{name}.json").unlink()
    (old / "model_meta.json").unlink()
    old.rmdir()
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 0 and "wrote 3 result files" in out, err


def _maeb_file(task: str, subsets: dict[str, float], date: str) -> dict:
    from maeb.core.identity import digest

    data = result(task, subsets)
    base = {"encoder": {"family": "whisper"}, "task": {"name": task, "data": {"subsets": list(subsets), "eval_splits": ["test"]}}}
    data["date"] = date
    data["maeb"] = {"version": "0.3.0", "identity": {**base, "hash": digest(base)}, "fingerprints": {"x": date}}
    return data


def test_a_merge_into_a_maeb_file_keeps_its_maeb_section_true(tmp_path, clone, capsys):  # noqa: F811
    import json

    from maeb.core.identity import digest

    folder = clone / "results" / MODEL.replace("/", "__") / _registered()
    published = _maeb_file("ESC50", {"s0": 0.5}, "2026-01-01T00:00:00+00:00")
    (folder / "ESC50.json").write_text(json.dumps(published))
    ours = tmp_path / "ours"
    lay_out(ours, MODEL, _registered(), {"ESC50": _maeb_file("ESC50", {"s0": 0.5, "s1": 0.6}, "2026-02-02T00:00:00+00:00")})
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 0, err
    merged = json.loads((folder / "ESC50.json").read_text())
    assert [e["hf_subset"] for e in merged["scores"]["test"]] == ["s0", "s1"]
    identity = merged["maeb"]["identity"]
    assert identity["task"]["data"]["subsets"] == ["s0", "s1"]  # the merged file's coverage, not the first run's
    assert identity["hash"] == digest({k: v for k, v in identity.items() if k != "hash"})
    assert merged["date"] == "2026-02-02T00:00:00+00:00"
    assert merged["maeb"]["extends"]["date"] == "2026-01-01T00:00:00+00:00"
    assert merged["maeb"]["extends"]["pairs"] == [["test", "s0"]]
    assert merged["maeb"]["extends"]["identity"] == published["maeb"]["identity"]["hash"]


def _version(text: str):
    """A version as mteb's leaderboard parses it (its own helper where mteb is installed)."""
    try:
        from mteb.results.benchmark_results import _parse_version_cached as parse
    except ImportError:
        from packaging.version import Version as parse
    return parse(text)


def test_a_maeb_file_beats_an_mteb_file_of_the_same_release_where_no_folder_is_registered():
    """The decision (docs/uncertainty.md): maeb writes `2.26.24+maeb.X`, which mteb's leaderboard sorts
    above a plain `2.26.24` and below `2.26.25`; maeb's own choice among revision folders agrees."""
    from maeb.results.read import Score, choose_revisions
    from maeb.results.write import MTEB_RELEASE, MTEB_VERSION

    ours, same, newer = _version(MTEB_VERSION), _version(MTEB_RELEASE), _version("2.26.25")
    assert same < ours < newer
    scores = [
        Score(MODEL, rev, "ESC50", "test", "default", v, mteb_version=m)
        for rev, v, m in (("a" * 40, 0.1, MTEB_RELEASE), ("b" * 40, 0.2, MTEB_VERSION))
    ]
    assert [s.revision for s in choose_revisions(scores, main={MODEL: "c" * 40})] == ["b" * 40]
    newest = [*scores, Score(MODEL, "d" * 40, "ESC50", "test", "default", 0.3, mteb_version="2.26.25")]
    assert [s.revision for s in choose_revisions(newest, main={MODEL: "c" * 40})] == ["d" * 40]
    registered = [*scores, Score(MODEL, "c" * 40, "ESC50", "test", "default", 0.4, mteb_version=MTEB_RELEASE)]
    assert [s.revision for s in choose_revisions(registered, main={MODEL: "c" * 40})] == ["c" * 40]


def _dim_warning(name: str, dim: int) -> tuple[str, int]:
    """The warning for an entry whose embed_dim is off by one, and the embed_dim model_meta.json gets."""
    from dataclasses import replace

    from maeb.results.write import model_meta_json
    from maeb.run.record import observed_dim
    from maeb.spec.catalog import find_model

    lines: list[str] = []
    entry = find_model(name)
    seen = observed_dim(replace(entry, embed_dim=entry.embed_dim + 1), dim, lines.append)
    assert len(lines) == 1, lines
    return lines[0], model_meta_json(seen)["embed_dim"]


def test_the_embed_dim_warning_says_what_model_meta_json_records():
    line, recorded = _dim_warning(MODEL, 1000)  # in mteb's registry: its record (1024) is written
    assert recorded == 1024 and "model_meta.json keeps mteb's registry record (embed_dim 1024)" in line, line
    assert "records 1000" not in line
    line, recorded = _dim_warning("maeb/mfcc-stats", 7)  # not in it: the measured size is written
    assert recorded == 7 and "model_meta.json records 7" in line, line


def test_run_t_with_a_task_the_model_cannot_run_says_why_it_stops(capsys):
    import pytest

    from maeb.cli.commands import main

    rc = main(["run", "-m", "maeb/mfcc-stats", "-t", "AudioCapsT2ARetrieval", "--dry-run"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "cannot run AudioCapsT2ARetrieval (needs text)" in err and "where -b skips a benchmark's" in err, err
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "stops the run with exit 2" in " ".join(capsys.readouterr().out.split())


def test_a_failed_check_puts_a_merged_file_back_byte_for_byte(tmp_path, clone, capsys):  # noqa: F811
    from maeb.spec.catalog import mteb_record

    ours = tmp_path / "ours"
    lay_out(ours, MODEL, _registered(), {"FSD2019Kaggle": result("FSD2019Kaggle", {"noisy": 0.3})})
    meta = {**mteb_record("google/yamnet"), "revision": "main"}  # not a commit hash: a rule fails
    lay_out(ours, "google/yamnet", "main", {"BeijingOpera": result("BeijingOpera", {"default": 0.2})}, meta)
    before = _files(clone)
    rc, out, err = submit_main(ours, clone, capsys)
    assert rc == 1 and "revision-is-specified" in err, err
    assert _files(clone) == before  # the published file as it was, no staged or set-aside file left
