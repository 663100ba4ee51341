"""The dry run says what the run would do: a named task the model has no side for stops it with
the run's own message and exit code; long clips of local folders are counted from their headers,
and the window policy in force is named."""

from __future__ import annotations

import csv

import numpy as np
import soundfile as sf

from maeb.cli.commands import main


def test_a_named_task_the_model_cannot_run_stops_the_dry_run_as_it_stops_the_run(tmp_path, capsys):
    args = ["run", "-m", "mfcc", "-t", "ESC50_Zeroshot", "--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path)]
    assert main(args) == 2
    run_err = capsys.readouterr().err
    assert main([*args, "--dry-run"]) == 2
    dry = capsys.readouterr()
    assert dry.err == run_err and "cannot run ESC50_Zeroshot (needs text)" in dry.err
    assert "skip" not in dry.out and "to run" not in dry.out


def _folder(tmp_path, seconds: list[float]):
    folder = tmp_path / "clips"
    folder.mkdir()
    rng = np.random.default_rng(0)
    rows = []
    for i, s in enumerate(seconds):
        name = f"c{i}.flac"
        sf.write(folder / name, (0.1 * rng.standard_normal(int(8000 * s))).astype(np.float32), 8000)
        rows.append({"file_name": name, "label": f"l{i % 2}"})
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["file_name", "label"])
        writer.writeheader()
        writer.writerows(rows)
    task = tmp_path / "Long.toml"
    task.write_text(f'name = "Long"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n')
    return task


def test_long_clips_of_a_local_folder_and_the_policy_in_force(tmp_path, capsys):
    task = _folder(tmp_path, [2.0, 41.5, 75.25, 3.0, 30.0])
    args = ["run", "-m", "mfcc", "-t", str(task), "--cache-dir", str(tmp_path / "cache"), "--dry-run"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "total: 1 task, 1 to run, 5 clips" in out
    line = next(x for x in out.splitlines() if x.startswith("long clips"))
    assert line.startswith("long clips (longest in the local folders): Long 75 s (2 of 5 clips over 30 s); window policy head")
    assert "--long-audio mean" in line
    assert main([*args, "--long-audio", "mean:window=20"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("long clips"))
    assert "window policy mean:window=20,hop=window (--long-audio)" in line


def test_no_long_clip_still_names_the_policy(tmp_path, capsys):
    task = _folder(tmp_path, [2.0, 3.0])
    assert main(["run", "-m", "mfcc", "-t", str(task), "--cache-dir", str(tmp_path / "cache"), "--dry-run"]) == 0
    assert "long clips: none over 30 s; window policy head" in capsys.readouterr().out


def test_the_dry_run_resolves_the_run_once(tmp_path, capsys, monkeypatch):
    """The options are checked and the protocol looked up once, by resolve(), and the plan reads that
    resolved run (the dry run once looked the protocol up before resolving, and plan() checked the
    options before resolve() checked them again)."""
    import maeb.encoders.protocols
    import maeb.run.options
    from maeb.run.options import RunOptions
    from maeb.run.plan import plan
    from maeb.spec.catalog import find_model, find_task

    calls = {"resolve": 0, "check_options": 0, "get_protocol": 0}

    def counted(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counted(maeb.run.options, "resolve")
    counted(maeb.run.options, "check_options")
    counted(maeb.encoders.protocols, "get_protocol")
    task = _folder(tmp_path, [2.0, 3.0])
    assert main(["run", "-m", "mfcc", "-t", str(task), "--cache-dir", str(tmp_path / "cache"), "--dry-run", "--quiet"]) == 0
    assert "to run" in capsys.readouterr().out
    assert calls == {"resolve": 1, "check_options": 1, "get_protocol": 1}
    calls.update(resolve=0, check_options=0, get_protocol=0)  # plan() given the options resolves them itself, once
    rows = plan(find_model("mfcc"), [find_task(str(task))], RunOptions(output_dir=None, cache_dir=tmp_path / "cache"))
    assert [r["task"] for r in rows] == ["Long"] and (calls["check_options"], calls["get_protocol"]) == (1, 1)
